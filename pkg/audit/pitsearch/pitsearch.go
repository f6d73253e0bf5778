// Package pitsearch reads audit events indexed one document each through
// a point in time and search_after, in the query DSL that Elasticsearch
// and OpenSearch share (pkg/audit/elasticsearch, pkg/audit/opensearch):
// the filter pushed down (Query), the documents sorted by _shard_doc, a
// page held in memory at a time, the point in time closed at the end.
//
// The two services differ only in how a point in time is opened and
// closed (Elasticsearch: POST /INDEX/_pit, DELETE /_pit with {"id"};
// OpenSearch: POST /INDEX/_search/point_in_time, DELETE
// /_search/point_in_time with {"pit_id": [...]}) and in their clients;
// each reader gives its own Service. The search itself (POST /_search with
// pit, sort, search_after; the answer's pit_id and hits) is the same.
//
// Package pitsearch does not decode or analyse events (pkg/audit and
// pkg/conflicts do).
package pitsearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// PageSize is how many events a page holds unless
// audit.SourceConfig.PageSize says otherwise.
const PageSize = 5000

// MaxPageSize is the most events a page may ask for: the services'
// index.max_result_window default.
const MaxPageSize = 10_000

// KeepAlive is how long the point in time is kept between two pages.
const KeepAlive = 2 * time.Minute

// KeepAliveValue is KeepAlive in the services' time-unit syntax.
const KeepAliveValue = "2m"

// Service is one cluster's point-in-time API. Its errors are the
// service's (ServiceError marks them exit 3).
type Service interface {
	// Open opens a point in time of the index and returns its id.
	Open(ctx context.Context) (string, error)
	// Search sends a search body (POST /_search) and returns the answer.
	Search(ctx context.Context, body []byte) ([]byte, error)
	// Close frees the point in time; a failure only costs the cluster
	// the keep-alive's wait.
	Close(ctx context.Context, id string)
}

// Target is a cluster's URL and an index of it (elasticsearch:URL/INDEX,
// opensearch:URL/INDEX).
type Target struct {
	// URL is the cluster's address, without the index.
	URL string
	// Index is the index, alias, data stream or pattern searched.
	Index string
}

// ParseTarget reads URL/INDEX, what follows scheme (elasticsearch:,
// opensearch:). A URL with a user or password is refused, credentials
// saying where they go instead; no error prints them.
func ParseTarget(s, scheme, credentials string) (Target, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return Target{}, fmt.Errorf("%q: give %shttp(s)://HOST:PORT/INDEX", audit.RedactUserinfo(s), scheme)
	}
	if u.User != nil {
		return Target{}, fmt.Errorf("%q: credentials do not go in the URL: %s", u.Redacted(), credentials)
	}
	i := strings.LastIndexByte(u.Path, '/')
	index := u.Path[i+1:]
	if index == "" {
		return Target{}, fmt.Errorf("%q: name the index after the address: %s%s://%s/INDEX", u.Redacted(), scheme, u.Scheme, u.Host)
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = u.Path[:i], "", "", ""
	return Target{URL: u.String(), Index: index}, nil
}

// DecodeAnswer reads one JSON answer from r into v. A read cut off (a
// bound of pkg/audit/bounded, the context) fails with that error
// (bounded.Cause); an answer that does not parse says it is not JSON.
func DecodeAnswer(r io.Reader, v any) error {
	err := json.NewDecoder(r).Decode(v)
	if err == nil {
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syntax) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("the answer is not JSON: %w", err)
	}
	return bounded.Cause(err)
}

// ServiceError is err marked as the log service's (exit 3).
func ServiceError(what string, err error) error {
	return exitcode.Cluster(&audit.ServiceError{Err: fmt.Errorf("%s: %w", what, err)})
}

// Query is the search's query over the window (zero times are no bound):
// the completed writes (a write verb, stage ResponseComplete or Panic), as
// match queries, which hold whether the fields are mapped as keyword or
// text, and a range on requestReceivedTimestamp.
func Query(since, until time.Time) map[string]any {
	anyOf := func(field string, values ...string) map[string]any {
		var should []map[string]any
		for _, v := range values {
			should = append(should, map[string]any{"match": map[string]any{field: v}})
		}
		return map[string]any{"bool": map[string]any{"should": should, "minimum_should_match": 1}}
	}
	filter := []map[string]any{anyOf("verb", audit.WriteVerbs...), anyOf("stage", audit.StageResponseComplete, audit.StagePanic)}
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

// Stats count what was read.
type Stats struct {
	Pages, Events int
}

// Source is the index's completed writes in cfg's window, cfg.PageSize
// a page, as an audit source named name; stats, when not nil, counts
// pages and events. An error of the service ends the source.
func Source(ctx context.Context, name string, svc Service, cfg audit.SourceConfig, stats *Stats) audit.Source {
	if stats == nil {
		stats = &Stats{}
	}
	s := &search{svc: svc, query: Query(cfg.Since, cfg.Until), size: pageSize(cfg), stats: stats}
	return audit.NewPagedSource(name, func(buf *bytes.Buffer) error { return s.page(ctx, buf) })
}

// search is one read of the index: its point in time and where the next
// page starts.
type search struct {
	svc   Service
	query map[string]any
	size  int
	stats *Stats
	pit   string
	after []any
	done  bool
}

type hitsPage struct {
	PitID string `json:"pit_id"`
	Hits  *struct {
		Hits []struct {
			Source json.RawMessage `json:"_source"`
			Sort   []any           `json:"sort"`
		} `json:"hits"`
	} `json:"hits"`
}

// pageSize is cfg's page size (at most MaxPageSize), or PageSize.
func pageSize(cfg audit.SourceConfig) int {
	if cfg.PageSize > 0 {
		return min(cfg.PageSize, MaxPageSize)
	}
	return PageSize
}

// Fix is what the bounds' errors (pkg/audit/bounded) say to do about an
// answer too big or too slow: ask for smaller pages.
func Fix(cfg audit.SourceConfig) string {
	return fmt.Sprintf("ask for fewer events a page with --source-page-size (now %d)", pageSize(cfg))
}

// Body is the search of size events of the point in time pit after the
// sort values after (nil: the first page).
func Body(query map[string]any, size int, pit string, after []any) []byte {
	body := map[string]any{
		"size": size, "query": query, "pit": map[string]any{"id": pit, "keep_alive": KeepAliveValue},
		"sort": []any{map[string]any{"_shard_doc": "asc"}}, "track_total_hits": false,
		"_source": map[string]any{"excludes": []string{"requestObject"}},
	}
	if after != nil {
		body["search_after"] = after
	}
	b, _ := json.Marshal(body)
	return b
}

// page writes the next page's events to buf, or returns io.EOF once the
// last page was read (and the point in time closed).
func (s *search) page(ctx context.Context, buf *bytes.Buffer) error {
	if s.done {
		return io.EOF
	}
	if s.pit == "" {
		id, err := s.svc.Open(ctx)
		if err != nil {
			return err
		}
		if id == "" {
			return ServiceError("open a point in time", errors.New("no id in the answer"))
		}
		s.pit = id
	}
	answer, err := s.svc.Search(ctx, Body(s.query, s.size, s.pit, s.after))
	if err != nil {
		return err
	}
	var p hitsPage
	if err := json.Unmarshal(answer, &p); err != nil {
		return ServiceError("search", fmt.Errorf("the answer is not JSON: %w", err))
	}
	if p.Hits == nil {
		return ServiceError("search", errors.New("the answer has no hits"))
	}
	s.stats.Pages++
	if p.PitID != "" {
		s.pit = p.PitID
	}
	hits := p.Hits.Hits
	for _, h := range hits {
		var line bytes.Buffer
		if err := json.Compact(&line, h.Source); err != nil {
			continue
		}
		s.stats.Events++
		buf.Write(line.Bytes())
		buf.WriteByte('\n')
	}
	switch n := len(hits); {
	case n < s.size:
		s.done = true
		s.svc.Close(ctx, s.pit)
	case len(hits[n-1].Sort) == 0:
		return ServiceError("search", errors.New("the last hit has no sort values to search after"))
	default:
		s.after = hits[n-1].Sort
	}
	if buf.Len() == 0 && s.done {
		return io.EOF
	}
	return nil
}
