// Package elasticsearch reads audit events that a pipeline (the API
// server's audit webhook or log file shipped by Fluent Bit, Logstash,
// Vector...) indexed into Elasticsearch, one document per event as the
// API server wrote it (kubectl rv conflicts --source
// elasticsearch:URL/INDEX, in rv-offline).
//
// The filter is pushed down: the search asks only for completed writes
// (verb create, update, patch, delete or deletecollection; stage
// ResponseComplete or Panic) received in the time window, as match
// queries, which hold whether the fields are mapped as keyword or text,
// and leaves requestObject out of the documents sent. It pages with a
// point in time and search_after (sorted by _shard_doc), so that a long
// read sees one snapshot of the index and no page is skipped or read
// twice; memory holds one page.
//
// Credentials come only from the environment (ELASTICSEARCH_API_KEY, or
// ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD; a CA bundle in
// ELASTICSEARCH_CA_CERT), never from a flag or the URL, and are never
// printed.
//
// Package elasticsearch does not decode or analyse events (pkg/audit and
// pkg/conflicts do).
package elasticsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/elastic/elastic-transport-go/v8/elastictransport"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// WriteVerbs are the verbs the query keeps.
var WriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// PageSize is how many events a page holds.
const PageSize = 5000

// KeepAlive is how long the point in time is kept between two pages.
const KeepAlive = "2m"

// Open is the index's Source between since and until (zero is no bound),
// target being URL/INDEX, with a client of the environment's credentials.
func Open(ctx context.Context, target string, since, until time.Time) (audit.Source, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return audit.Source{}, err
	}
	es, err := NewClient(t)
	if err != nil {
		return audit.Source{}, err
	}
	return Source(ctx, es, t, since, until, nil), nil
}

// Target is a parsed elasticsearch:URL/INDEX.
type Target struct {
	// URL is the cluster's address, without the index.
	URL string
	// Index is the index, alias, data stream or pattern searched.
	Index string
}

// ParseTarget reads URL/INDEX (what follows elasticsearch:).
func ParseTarget(s string) (Target, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return Target{}, fmt.Errorf("%q: give elasticsearch:http(s)://HOST:PORT/INDEX", audit.RedactUserinfo(s))
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("%q: credentials do not go in the URL: set ELASTICSEARCH_API_KEY, or ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD", u.Redacted())
	}
	i := strings.LastIndexByte(u.Path, '/')
	index := u.Path[i+1:]
	if index == "" {
		return Target{}, fmt.Errorf("%q: name the index after the address: elasticsearch:%s://%s/INDEX", u.Redacted(), u.Scheme, u.Host)
	}
	u.Path, u.RawQuery = u.Path[:i], ""
	return Target{URL: u.String(), Index: index}, nil
}

// Query is the search's query over the window (zero times are no bound).
func Query(since, until time.Time) map[string]any {
	anyOf := func(field string, values ...string) map[string]any {
		var should []map[string]any
		for _, v := range values {
			should = append(should, map[string]any{"match": map[string]any{field: v}})
		}
		return map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}
	}
	filter := []map[string]any{anyOf("verb", WriteVerbs...), anyOf("stage", audit.StageResponseComplete, audit.StagePanic)}
	if r := timeRange(since, until); r != nil {
		filter = append(filter, map[string]any{"range": map[string]any{"requestReceivedTimestamp": r}})
	}
	return map[string]any{"bool": map[string]any{"filter": filter}}
}

func timeRange(since, until time.Time) map[string]any {
	r := map[string]any{}
	if !since.IsZero() {
		r["gte"] = since.UTC().Format(time.RFC3339Nano)
	}
	if !until.IsZero() {
		r["lt"] = until.UTC().Format(time.RFC3339Nano)
	}
	if len(r) == 0 {
		return nil
	}
	return r
}

// NewClient is a client of t's cluster with the environment's
// credentials: the transport alone, on which the three requests used are
// made (esapi's request types), not the elasticsearch package's client,
// whose typed API would link some 900 packages more, nor esapi.API, which
// links every endpoint (25 MB).
func NewClient(t Target) (esapi.Transport, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	cfg := elastictransport.Config{
		URLs:     []*url.URL{u},
		APIKey:   os.Getenv("ELASTICSEARCH_API_KEY"),
		Username: os.Getenv("ELASTICSEARCH_USERNAME"),
		Password: os.Getenv("ELASTICSEARCH_PASSWORD"),
	}
	if ca := os.Getenv("ELASTICSEARCH_CA_CERT"); ca != "" {
		b, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("ELASTICSEARCH_CA_CERT: %w", err)
		}
		cfg.CACert = b
	}
	tp, err := elastictransport.New(cfg)
	if err != nil {
		return nil, err
	}
	return tp, nil
}

// Stats count what was read.
type Stats struct {
	Pages, Events int
}

// Source is the index's completed writes in the window as an audit
// source, named elasticsearch:URL/INDEX; stats, when not nil, counts
// pages and events. The point in time is closed at the end. An error of
// the cluster ends the source, marked as the service's (exit 3).
func Source(ctx context.Context, es esapi.Transport, t Target, since, until time.Time, stats *Stats) audit.Source {
	if stats == nil {
		stats = &Stats{}
	}
	s := &search{es: es, t: t, query: Query(since, until), stats: stats}
	return audit.NewPagedSource(audit.ElasticsearchScheme+t.URL+"/"+t.Index, func(buf *bytes.Buffer) error { return s.page(ctx, buf) })
}

// search is one read of the index: its point in time and where the next
// page starts.
type search struct {
	es    esapi.Transport
	t     Target
	query map[string]any
	stats *Stats
	pit   string
	after []any
	done  bool
}

type hitsPage struct {
	PitID string `json:"pit_id"`
	Hits  struct {
		Hits []struct {
			Source json.RawMessage `json:"_source"`
			Sort   []any           `json:"sort"`
		} `json:"hits"`
	} `json:"hits"`
}

// page writes the next page's events to buf, or returns io.EOF once the
// last page was read (and the point in time closed).
func (s *search) page(ctx context.Context, buf *bytes.Buffer) error {
	if s.done {
		return io.EOF
	}
	if s.pit == "" {
		id, err := s.open(ctx)
		if err != nil {
			return err
		}
		s.pit = id
	}
	body := map[string]any{
		"size": PageSize, "query": s.query, "pit": map[string]any{"id": s.pit, "keep_alive": KeepAlive},
		"sort": []any{map[string]any{"_shard_doc": "asc"}}, "track_total_hits": false,
		"_source": map[string]any{"excludes": []string{"requestObject"}},
	}
	if s.after != nil {
		body["search_after"] = s.after
	}
	b, _ := json.Marshal(body)
	res, err := esapi.SearchRequest{Body: bytes.NewReader(b)}.Do(ctx, s.es)
	var p hitsPage
	if err := decode(res, err, "search", &p); err != nil {
		return err
	}
	s.stats.Pages++
	if p.PitID != "" {
		s.pit = p.PitID
	}
	for _, h := range p.Hits.Hits {
		var line bytes.Buffer
		if err := json.Compact(&line, h.Source); err != nil {
			continue
		}
		s.stats.Events++
		buf.Write(line.Bytes())
		buf.WriteByte('\n')
	}
	if n := len(p.Hits.Hits); n < PageSize || n == 0 {
		s.done = true
		s.close(ctx)
	} else {
		s.after = p.Hits.Hits[n-1].Sort
	}
	if buf.Len() == 0 && s.done {
		return io.EOF
	}
	return nil
}

func (s *search) open(ctx context.Context) (string, error) {
	res, err := esapi.OpenPointInTimeRequest{Index: []string{s.t.Index}, KeepAlive: KeepAlive}.Do(ctx, s.es)
	var pit struct {
		ID string `json:"id"`
	}
	if err := decode(res, err, "open a point in time", &pit); err != nil {
		return "", err
	}
	if pit.ID == "" {
		return "", exitcode.Cluster(&audit.ServiceError{Err: errors.New("open a point in time: no id in the answer")})
	}
	return pit.ID, nil
}

// close lets the cluster free the point in time now rather than at its
// keep-alive; a failure only costs the cluster that wait.
func (s *search) close(ctx context.Context) {
	b, _ := json.Marshal(map[string]string{"id": s.pit})
	res, err := esapi.ClosePointInTimeRequest{Body: bytes.NewReader(b)}.Do(ctx, s.es)
	if err == nil {
		_ = res.Body.Close()
	}
}

// decode reads an answer into v, or returns the cluster's refusal.
func decode(res *esapi.Response, err error, what string, v any) error {
	if err != nil {
		return exitcode.Cluster(&audit.ServiceError{Err: fmt.Errorf("%s: %w", what, err)})
	}
	defer func() { _ = res.Body.Close() }()
	if res.IsError() {
		var e struct {
			Error struct{ Type, Reason string } `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&e)
		return exitcode.Cluster(&audit.ServiceError{Err: fmt.Errorf("%s: %s: %s: %s", what, res.Status(), e.Error.Type, e.Error.Reason)})
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		return exitcode.Cluster(&audit.ServiceError{Err: fmt.Errorf("%s: the answer is not JSON: %w", what, err)})
	}
	return nil
}
