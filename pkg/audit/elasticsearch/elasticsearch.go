// Package elasticsearch reads audit events that a pipeline (the API
// server's audit webhook or log file shipped by Fluent Bit, Logstash,
// Vector...) indexed into Elasticsearch, one document per event as the
// API server wrote it (kubectl rv conflicts --source
// elasticsearch:URL/INDEX).
//
// The filter is pushed down: the search asks only for completed writes
// (verb create, update, patch, delete or deletecollection; stage
// ResponseComplete or Panic) received in the time window, as match
// queries, which hold whether the fields are mapped as keyword or text,
// and leaves requestObject out of the documents sent. It pages with a
// point in time and search_after (sorted by _shard_doc), so that a long
// read sees one snapshot of the index and no page is skipped or read
// twice; memory holds one page. The paging is pkg/audit/pitsearch's,
// which OpenSearch's reader shares.
//
// Every answer is bounded (pkg/audit/bounded, audit.SourceConfig): its
// size, the time the cluster may go without sending a byte, and its
// total time; cancelling the context aborts the request in flight.
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
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	"github.com/elastic/elastic-transport-go/v8/elastictransport"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/pitsearch"
)

// PageSize is how many events a page holds.
const PageSize = pitsearch.PageSize

// KeepAlive is how long the point in time is kept between two pages.
const KeepAlive = pitsearch.KeepAliveValue

// Open is the index's Source as cfg says, target being URL/INDEX,
// with a client of the environment's credentials.
func Open(ctx context.Context, target string, cfg audit.SourceConfig) (audit.Source, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return audit.Source{}, err
	}
	es, err := NewClient(t, cfg)
	if err != nil {
		return audit.Source{}, err
	}
	return Source(ctx, es, t, cfg, nil), nil
}

// Target is a parsed elasticsearch:URL/INDEX.
type Target = pitsearch.Target

// ParseTarget reads URL/INDEX (what follows elasticsearch:).
func ParseTarget(s string) (Target, error) {
	return pitsearch.ParseTarget(s, audit.ElasticsearchScheme, "set ELASTICSEARCH_API_KEY, or ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD")
}

// Query is the search's query over the window (zero times are no bound).
func Query(since, until time.Time) map[string]any { return pitsearch.Query(since, until) }

// NewClient is a client of t's cluster with the environment's
// credentials, every answer held to cfg's bounds: the transport alone, on which the three requests used are
// made (esapi's request types), not the elasticsearch package's client,
// whose typed API would link some 900 packages more, nor esapi.API, which
// links every endpoint (25 MB).
func NewClient(t Target, cfg audit.SourceConfig) (esapi.Transport, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if path := os.Getenv("ELASTICSEARCH_CA_CERT"); path != "" {
		if ca, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("ELASTICSEARCH_CA_CERT: %w", err)
		}
	}
	hc, err := bounded.NewTransport(bounded.PageLimits(cfg, pitsearch.Fix(cfg)), ca)
	if err != nil {
		return nil, fmt.Errorf("ELASTICSEARCH_CA_CERT %s: %w", os.Getenv("ELASTICSEARCH_CA_CERT"), err)
	}
	tp, err := elastictransport.New(elastictransport.Config{
		URLs:      []*url.URL{u},
		APIKey:    os.Getenv("ELASTICSEARCH_API_KEY"),
		Username:  os.Getenv("ELASTICSEARCH_USERNAME"),
		Password:  os.Getenv("ELASTICSEARCH_PASSWORD"),
		Transport: hc,
		// A request a bound cut off would meet it again.
		RetryOnError: bounded.Retryable,
	})
	if err != nil {
		return nil, err
	}
	return tp, nil
}

// Stats count what was read.
type Stats = pitsearch.Stats

// Source is the index's completed writes in cfg's window as an audit
// source, named elasticsearch:URL/INDEX; stats, when not nil, counts
// pages and events. The point in time is closed at the end. An error of
// the cluster ends the source, marked as the service's (exit 3).
func Source(ctx context.Context, es esapi.Transport, t Target, cfg audit.SourceConfig, stats *Stats) audit.Source {
	return pitsearch.Source(ctx, audit.ElasticsearchScheme+t.URL+"/"+t.Index, service{es: es, t: t}, cfg, stats)
}

// service is Elasticsearch's point-in-time API: POST /INDEX/_pit,
// POST /_search, DELETE /_pit.
type service struct {
	es esapi.Transport
	t  Target
}

func (s service) Open(ctx context.Context) (string, error) {
	res, err := esapi.OpenPointInTimeRequest{Index: []string{s.t.Index}, KeepAlive: KeepAlive}.Do(ctx, s.es)
	var pit struct {
		ID string `json:"id"`
	}
	if err := decode(res, err, "open a point in time", &pit); err != nil {
		return "", err
	}
	return pit.ID, nil
}

func (s service) Search(ctx context.Context, body []byte) ([]byte, error) {
	res, err := esapi.SearchRequest{Body: bytes.NewReader(body)}.Do(ctx, s.es)
	var answer json.RawMessage
	if err := decode(res, err, "search", &answer); err != nil {
		return nil, err
	}
	return answer, nil
}

func (s service) Close(ctx context.Context, id string) {
	b, _ := json.Marshal(map[string]string{"id": id})
	res, err := esapi.ClosePointInTimeRequest{Body: bytes.NewReader(b)}.Do(ctx, s.es)
	if err == nil {
		_ = res.Body.Close()
	}
}

// decode reads an answer into v, or returns the cluster's refusal.
func decode(res *esapi.Response, err error, what string, v any) error {
	if err != nil {
		return pitsearch.ServiceError(what, bounded.Cause(err))
	}
	defer func() { _ = res.Body.Close() }()
	if res.IsError() {
		var e struct {
			Error struct{ Type, Reason string } `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<16)).Decode(&e)
		return pitsearch.ServiceError(what, fmt.Errorf("%s: %s: %s", res.Status(), e.Error.Type, e.Error.Reason))
	}
	if err := pitsearch.DecodeAnswer(res.Body, v); err != nil {
		return pitsearch.ServiceError(what, err)
	}
	return nil
}
