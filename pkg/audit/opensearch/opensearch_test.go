package opensearch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/auditgen"
	"github.com/kubectl-rv/kubectl-rv/internal/hostile"
	"github.com/kubectl-rv/kubectl-rv/internal/osfake"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/pitsearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// patient is the timeout of the tests that are not about the bounds: the
// local server builds a page of a big log slowly under -race on a busy
// machine (TestSourceBounds tests the bounds).
const patient = 10 * time.Minute

var base = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// server is an OpenSearch index of the log's events, each with a
// requestObject holding a secret that the search must leave out.
func server(l auditgen.Log) *osfake.Server {
	return &osfake.Server{Index: "k8s-audit", N: l.N, Doc: func(i int) osfake.Doc {
		fields, line := l.Event(i)
		return osfake.Doc{Fields: fields, Source: strings.TrimSuffix(line, "}") + `,"requestObject":{"data":{"token":"s3cr3t-in-body"}}}`}
	}}
}

func read(t *testing.T, url, index string, since, until time.Time) (events, conflicts int, st Stats, err error) {
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
	c, err := NewClient(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return Source(ctx, c, tg, cfg, st)
}

// TestSourceBounds: the cluster's answers are held to the bounds
// (pkg/audit/bounded) through opensearch-go, whose Do reads a whole
// answer into memory: an endless or 2 GB search answer, one that
// trickles or never comes, one not JSON, and a read cancelled
// mid-answer (hostile.Check).
func TestSourceBounds(t *testing.T) {
	srv := server(auditgen.Log{N: 10, Base: base})
	hostile.Check(t, hostile.Reader{
		Serve: func(page http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/_search" {
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
		Prefix:  `{"pit_id":"p","hits":{"hits":[`,
		Item:    `{"_source":{"kind":"Event","apiVersion":"audit.k8s.io/v1","verb":"update"},"sort":[1]},`,
		Name:    func(url string) string { return "opensearch:" + url + "/k8s-audit: search: " },
		Garbage: "search: the answer is not JSON",
	})
}

// TestSourcePagesThroughAMillionDocuments: an index of a million events
// is read through one OpenSearch point in time, page after page with
// search_after, the filter pushed down: the cluster sends only the
// completed writes, every one of them, without requestObject, and the
// point in time is deleted at the end. The server refuses any request
// OpenSearch would (osfake), so a wrong path, parameter or body fails.
func TestSourcePagesThroughAMillionDocuments(t *testing.T) {
	l := auditgen.Log{N: 1_000_000, Base: base}
	srv := server(l)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	events, conflicts, st, err := read(t, ts.URL, "k8s-audit", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Counts()
	if want := l.Writes(); events != want || st.Events != want || c.Sent != want {
		t.Errorf("the filter keeps %d events: decoded %d, the source read %d, the server sent %d", want, events, st.Events, c.Sent)
	}
	if conflicts != l.Conflicts() {
		t.Errorf("%d 409s, want %d", conflicts, l.Conflicts())
	}
	if c.Opened != 1 || c.Closed != 1 || c.Searches != st.Pages || c.Afters != st.Pages-1 || st.Pages < l.Writes()/pitsearch.PageSize || len(c.Refused) != 0 {
		t.Errorf("points in time opened %d, deleted %d; %d searches (%d with search_after) for %d pages; refused %q: want one point in time, every page after the first from search_after, nothing refused",
			c.Opened, c.Closed, c.Searches, c.Afters, st.Pages, c.Refused)
	}
	t.Logf("%d documents, %d kept, %d pages", l.N, l.Writes(), st.Pages)
}

func TestSourceWindow(t *testing.T) {
	l := auditgen.Log{N: 100_000, Base: base}
	srv := server(l)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	events, _, _, err := read(t, ts.URL, "k8s-audit", base.Add(20*time.Second), base.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c := srv.Counts(); events != 1000 || c.Sent != 1000 || c.Ranged == 0 {
		t.Errorf("the window holds 1000 writes: decoded %d, sent %d, %d searches with a range", events, c.Sent, c.Ranged)
	}
}

// TestSourceRequestObjectLeftOut: the requestObject of every document
// (which may hold a Secret) stays in the cluster.
func TestSourceRequestObjectLeftOut(t *testing.T) {
	l := auditgen.Log{N: 1000, Base: base}
	var sent strings.Builder
	srv := server(l)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(tee{w, &sent}, r)
	}))
	defer ts.Close()
	if events, _, _, err := read(t, ts.URL, "k8s-audit", time.Time{}, time.Time{}); err != nil || events != l.Writes() {
		t.Fatalf("%d events, %v", events, err)
	}
	if strings.Contains(sent.String(), "s3cr3t-in-body") || !strings.Contains(sent.String(), `"auditID":"id-0"`) {
		t.Errorf("requestObject was sent (or nothing was): %.300s", sent.String())
	}
}

// tee copies what a handler writes.
type tee struct {
	http.ResponseWriter
	copy *strings.Builder
}

func (t tee) Write(b []byte) (int, error) {
	t.copy.Write(b)
	return t.ResponseWriter.Write(b)
}

// TestSourceErrors: the cluster's refusals and broken answers end the
// source with exit 3, naming the source and what went wrong, never a
// credential.
func TestSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		index string
		set   func(*osfake.Server)
		want  string
	}{
		{"absent index", "absent", nil, "index_not_found_exception"},
		{"before 3.3", "k8s-audit", func(s *osfake.Server) { s.Version = "2.19.1" }, "OpenSearch sorts by _shard_doc from 3.3 on"},
		{"garbled page", "k8s-audit", func(s *osfake.Server) { s.N, s.Garble = 60_000, func(n int) bool { return n == 2 } }, "search: the answer is not JSON"},
		{"wrong password", "k8s-audit", func(s *osfake.Server) { s.User, s.Password = "reader", "other" }, `401 Unauthorized: "Unauthorized"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OPENSEARCH_USERNAME", "reader")
			t.Setenv("OPENSEARCH_PASSWORD", "pa55-w0rd")
			srv := server(auditgen.Log{N: 30_000, Base: base})
			if tc.set != nil {
				tc.set(srv)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			_, _, _, err := read(t, ts.URL, tc.index, time.Time{}, time.Time{})
			if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "opensearch:"+ts.URL+"/"+tc.index) {
				t.Errorf("error %v (exit %d), want exit 3 naming the index and %q", err, exitcode.Classify(err), tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "pa55-w0rd") {
				t.Errorf("the password is in the error: %v", err)
			}
		})
	}
}

// TestSourceUnreachable: no server at the address is exit 3 naming it.
func TestSourceUnreachable(t *testing.T) {
	ts := httptest.NewServer(nil)
	url := ts.URL
	ts.Close()
	_, _, _, err := read(t, url, "k8s-audit", time.Time{}, time.Time{})
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), "opensearch:"+url+"/k8s-audit") {
		t.Errorf("error %v (exit %d), want exit 3 naming the source", err, exitcode.Classify(err))
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"https://os.example:9200/k8s-audit-*": "https://os.example:9200 k8s-audit-*",
		"http://localhost:9200/prefix/audit":  "http://localhost:9200/prefix audit",
		"https://os.example:9200/":            "",
		"https://u:p@os.example:9200/audit":   "",
		"os.example:9200/audit":               "",
	} {
		tg, err := ParseTarget(in)
		if got := tg.URL + " " + tg.Index; (err == nil) != (want != "") || err == nil && got != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && strings.Contains(err.Error(), ":p@") {
			t.Errorf("ParseTarget(%q) printed the password: %v", in, err)
		}
		if err != nil && strings.Contains(in, "@") && !strings.Contains(err.Error(), "OPENSEARCH_USERNAME") {
			t.Errorf("ParseTarget(%q) = %v: want where credentials go", in, err)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("https://os.example:9200/k8s-audit-*")
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
		if tg.Index == "" || strings.Contains(tg.Index, "/") || strings.Contains(tg.URL, "@") {
			t.Fatalf("ParseTarget(%q) = %+v: an index with a slash or none, or userinfo kept", in, tg)
		}
	})
}
