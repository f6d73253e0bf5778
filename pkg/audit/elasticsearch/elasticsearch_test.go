package elasticsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/auditgen"
	"github.com/kubectl-rv/kubectl-rv/internal/hostile"
	"github.com/kubectl-rv/kubectl-rv/internal/pitquery"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// patient is the timeout of the tests that are not about the bounds: the
// local server builds a page of a big log slowly under -race on a busy
// machine (TestSourceBounds tests the bounds).
const patient = 10 * time.Minute

// index is an index of audit event documents (auditgen's formula).
type index = auditgen.Log

// server speaks the part of Elasticsearch's REST API the source uses: open
// a point in time (POST /INDEX/_pit), search it (POST /_search with pit,
// query, sort by _shard_doc, size, search_after), close it (DELETE /_pit).
// It evaluates the query as Query writes it: a filter of any-of match
// clauses and a range on requestReceivedTimestamp.
type server struct {
	x    index
	name string
	// mu guards the fields below.
	mu                       sync.Mutex
	opened, closed, searches int
	afters, ranged           int
	sent                     int
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/"+s.name+"/_pit" && r.URL.Query().Get("keep_alive") == KeepAlive:
		s.opened++
		fmt.Fprint(w, `{"id":"pit-1"}`)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/") && strings.HasSuffix(r.URL.Path, "/_pit"):
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":{"type":"index_not_found_exception","reason":"no such index"},"status":404}`)
	case r.Method == http.MethodDelete && r.URL.Path == "/_pit":
		s.closed++
		fmt.Fprint(w, `{"succeeded":true,"num_freed":1}`)
	case r.Method == http.MethodPost && r.URL.Path == "/_search":
		s.search(w, r)
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"type":"illegal_argument_exception","reason":"%s %s"}}`, r.Method, r.URL.Path)
	}
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	var b pitquery.Body
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.Pit == nil || b.Pit.ID != "pit-1" || b.Size == nil || len(b.Sort) != 1 || b.Sort[0]["_shard_doc"] != "asc" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"type":"parsing_exception","reason":"want a search of the point in time sorted by _shard_doc"}}`)
		return
	}
	s.searches++
	from := 0
	if len(b.SearchAfter) == 1 {
		s.afters++
		from = b.SearchAfter[0] + 1
	}
	type hit struct {
		Source json.RawMessage `json:"_source"`
		Sort   []int           `json:"sort"`
	}
	var hits []hit
	ranged := false
	for i := from; i < s.x.N && len(hits) < *b.Size; i++ {
		fields, src := s.x.Event(i)
		ok, rg := b.Matches(fields)
		ranged = ranged || rg
		if ok {
			hits = append(hits, hit{json.RawMessage(src), []int{i}})
		}
	}
	s.sent += len(hits)
	if ranged {
		s.ranged++
	}
	out, _ := json.Marshal(map[string]any{"pit_id": "pit-1", "hits": map[string]any{"hits": hits}})
	_, _ = w.Write(out)
}

func read(t *testing.T, url, index string, since, until time.Time) (events int, conflicts int, st Stats, err error) {
	t.Helper()
	src := source(t, context.Background(), url, index, audit.SourceConfig{Since: since, Until: until, Timeout: patient}, &st)
	events, conflicts, err = auditgen.Count(t, src)
	return events, conflicts, st, err
}

func source(t *testing.T, ctx context.Context, url, index string, cfg audit.SourceConfig, st *Stats) audit.Source {
	t.Helper()
	tg, err := ParseTarget(url + "/" + index)
	if err != nil {
		t.Fatal(err)
	}
	es, err := NewClient(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return Source(ctx, es, tg, cfg, st)
}

// TestSourceBounds: the cluster's answers are held to the bounds
// (pkg/audit/bounded) through elastic-transport-go: an endless or 2 GB
// search answer, one that trickles or never comes, one not JSON, and a
// read cancelled mid-answer (hostile.Check).
func TestSourceBounds(t *testing.T) {
	srv := &server{x: index{N: 10}, name: "k8s-audit"}
	hostile.Check(t, hostile.Reader{
		Serve: func(page http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/_search" {
					w.Header().Set("X-Elastic-Product", "Elasticsearch")
					page.ServeHTTP(w, r)
					return
				}
				srv.ServeHTTP(w, r)
			})
		},
		Read: func(ctx context.Context, url string, cfg audit.SourceConfig) error {
			_, err := audit.Decode(ctx, source(t, ctx, url, "k8s-audit", cfg, nil), audit.Options{}, func(*audit.Event) error { return nil })
			return err
		},
		Prefix:  `{"pit_id":"pit-1","hits":{"hits":[`,
		Item:    `{"_source":{"kind":"Event","apiVersion":"audit.k8s.io/v1","verb":"update"},"sort":[1]},`,
		Name:    func(url string) string { return "elasticsearch:" + url + "/k8s-audit: search: " },
		Garbage: "search: the answer is not JSON",
	})
}

// TestSourcePageSize: the search asks for the configured page size, and
// a page shorter than it is the last.
func TestSourcePageSize(t *testing.T) {
	x := index{N: 10_000, Base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	srv := &server{x: x, name: "k8s-audit"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var st Stats
	src := source(t, context.Background(), ts.URL, "k8s-audit", audit.SourceConfig{PageSize: 100, Timeout: patient}, &st)
	events, _, err := auditgen.Count(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if want := x.Writes(); events != want || st.Pages != want/100+1 {
		t.Errorf("%d events in %d pages, want %d in %d", events, st.Pages, want, want/100+1)
	}
}

// TestSourcePagesThroughAMillionDocuments: an index of a million events
// is read through a point in time, page after page with search_after, the
// filter pushed down: the cluster sends only the completed writes, every
// one of them, and the point in time is closed at the end.
func TestSourcePagesThroughAMillionDocuments(t *testing.T) {
	x := index{N: 1_000_000, Base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	srv := &server{x: x, name: "k8s-audit"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	events, conflicts, st, err := read(t, ts.URL, "k8s-audit", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := x.Writes()
	if events != want || st.Events != want || srv.sent != want {
		t.Errorf("the filter keeps %d events: decoded %d, the source read %d, the server sent %d", want, events, st.Events, srv.sent)
	}
	if want409 := x.Conflicts(); conflicts != want409 {
		t.Errorf("%d 409s, want %d", conflicts, want409)
	}
	if srv.opened != 1 || srv.closed != 1 || srv.searches != st.Pages || srv.afters != st.Pages-1 || st.Pages < want/PageSize {
		t.Errorf("points in time opened %d, closed %d; %d searches (%d with search_after) for %d pages: want one point in time, every page after the first from search_after", srv.opened, srv.closed, srv.searches, srv.afters, st.Pages)
	}
	t.Logf("%d documents, %d kept, %d pages", x.N, want, st.Pages)
}

func TestSourceWindow(t *testing.T) {
	x := index{N: 100_000, Base: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	srv := &server{x: x, name: "k8s-audit"}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	events, _, _, err := read(t, ts.URL, "k8s-audit", x.Base.Add(20*time.Second), x.Base.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if want := 1000; events != want || srv.sent != want || srv.ranged == 0 {
		t.Errorf("the window holds %d writes: decoded %d, sent %d", want, events, srv.sent)
	}
}

func TestSourceClusterError(t *testing.T) {
	ts := httptest.NewServer(&server{x: index{N: 10}, name: "k8s-audit"})
	defer ts.Close()
	_, _, _, err := read(t, ts.URL, "absent", time.Time{}, time.Time{})
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), "index_not_found_exception") || !strings.Contains(err.Error(), "elasticsearch:"+ts.URL+"/absent") {
		t.Errorf("error %v (exit %d), want the cluster's, naming the index, exit 3", err, exitcode.Classify(err))
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"https://es.example:9200/k8s-audit-*": "https://es.example:9200 k8s-audit-*",
		"http://localhost:9200/prefix/audit":  "http://localhost:9200/prefix audit",
		"https://es.example:9200/":            "",
		"https://u:p@es.example:9200/audit":   "",
		"es.example:9200/audit":               "",
	} {
		tg, err := ParseTarget(in)
		if got := tg.URL + " " + tg.Index; (err == nil) != (want != "") || err == nil && got != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && strings.Contains(err.Error(), ":p@") {
			t.Errorf("ParseTarget(%q) printed the password: %v", in, err)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("https://es.example:9200/k8s-audit-*")
	f.Add("http://u:secret@h/i")
	f.Add("http://[::1]:9200/a/b?x=y#z")
	f.Fuzz(func(t *testing.T, in string) {
		tg, err := ParseTarget(in)
		if err != nil {
			if strings.Contains(in, ":secret@") && strings.Contains(err.Error(), "secret") {
				t.Fatalf("the password is in the error: %v", err)
			}
			return
		}
		if tg.Index == "" || strings.Contains(tg.Index, "/") {
			t.Fatalf("ParseTarget(%q) = %+v: an index with a slash or none", in, tg)
		}
	})
}
