// Package opensearch reads audit events that a pipeline (the API server's
// audit webhook or log file shipped by Fluent Bit, Logstash, Vector,
// Data Prepper...) indexed into OpenSearch, one document per event as the
// API server wrote it (kubectl rv conflicts --source
// opensearch:URL/INDEX).
//
// The filter is pushed down as for Elasticsearch (pkg/audit/pitsearch,
// whose query DSL and paging OpenSearch shares): only completed writes
// received in the time window are sent, without requestObject. It pages
// with OpenSearch's own point in time (POST /INDEX/_search/point_in_time,
// closed with DELETE /_search/point_in_time) and search_after, sorted by
// _shard_doc, which OpenSearch has from 3.3 on: an older cluster refuses
// the sort, and the error says so. Memory holds one page.
//
// Every answer is bounded (pkg/audit/bounded, audit.SourceConfig): its
// size, the time the cluster may go without sending a byte, and its
// total time; cancelling the context aborts the request in flight.
//
// Credentials come only from the environment (OPENSEARCH_USERNAME and
// OPENSEARCH_PASSWORD; a CA bundle in OPENSEARCH_CA_CERT), never from a
// flag or the URL, and are never printed.
//
// Package opensearch does not decode or analyse events (pkg/audit and
// pkg/conflicts do).
package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	opensearchgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
	"github.com/opensearch-project/opensearch-go/v4/opensearchtransport"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/pitsearch"
)

// Credentials says where the credentials go.
const Credentials = "set OPENSEARCH_USERNAME and OPENSEARCH_PASSWORD"

// Open is the index's Source as cfg says, target being URL/INDEX,
// with a client of the environment's credentials.
func Open(ctx context.Context, target string, cfg audit.SourceConfig) (audit.Source, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return audit.Source{}, err
	}
	c, err := NewClient(t, cfg)
	if err != nil {
		return audit.Source{}, err
	}
	return Source(ctx, c, t, cfg, nil), nil
}

// Target is a parsed opensearch:URL/INDEX.
type Target = pitsearch.Target

// ParseTarget reads URL/INDEX (what follows opensearch:).
func ParseTarget(s string) (Target, error) {
	return pitsearch.ParseTarget(s, audit.OpenSearchScheme, Credentials)
}

// NewClient is a client of t's cluster with the environment's
// credentials, every answer held to cfg's bounds. It talks to the URL given, as a load balancer in front of
// a cluster expects: opensearch-go's transport is built without its
// background polling of the nodes' statistics (GET /_nodes/_local/stats
// every few seconds, which a reader's role may not be allowed and a
// one-off read has no use for), and without node discovery (off unless
// asked).
func NewClient(t Target, cfg audit.SourceConfig) (*opensearchgo.Client, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, err
	}
	var ca []byte
	if path := os.Getenv("OPENSEARCH_CA_CERT"); path != "" {
		if ca, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("OPENSEARCH_CA_CERT: %w", err)
		}
	}
	hc, err := bounded.NewTransport(bounded.PageLimits(cfg, pitsearch.Fix(cfg)), ca)
	if err != nil {
		return nil, fmt.Errorf("OPENSEARCH_CA_CERT %s: %w", os.Getenv("OPENSEARCH_CA_CERT"), err)
	}
	tp, err := opensearchtransport.New(opensearchtransport.Config{
		URLs:              []*url.URL{u},
		Username:          os.Getenv("OPENSEARCH_USERNAME"),
		Password:          os.Getenv("OPENSEARCH_PASSWORD"),
		NodeStatsInterval: -1,
		Transport:         hc,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.URL, err)
	}
	return &opensearchgo.Client{Transport: tp}, nil
}

// Stats count what was read.
type Stats = pitsearch.Stats

// Source is the index's completed writes in cfg's window as an audit
// source, named opensearch:URL/INDEX; stats, when not nil, counts pages
// and events. The point in time is closed at the end. An error of the
// cluster ends the source, marked as the service's (exit 3).
func Source(ctx context.Context, c *opensearchgo.Client, t Target, cfg audit.SourceConfig, stats *Stats) audit.Source {
	return pitsearch.Source(ctx, audit.OpenSearchScheme+t.URL+"/"+t.Index, service{c: c, t: t}, cfg, stats)
}

// service is OpenSearch's point-in-time API through opensearch-go's
// requests: POST /INDEX/_search/point_in_time?keep_alive=, POST
// /_search, DELETE /_search/point_in_time.
type service struct {
	c *opensearchgo.Client
	t Target
}

func (s service) Open(ctx context.Context) (string, error) {
	req := opensearchapi.PointInTimeCreateReq{Indices: []string{s.t.Index}, Params: opensearchapi.PointInTimeCreateParams{KeepAlive: pitsearch.KeepAlive}}
	var pit opensearchapi.PointInTimeCreateResp
	if err := s.do(ctx, http.MethodPost, req, "open a point in time", &pit); err != nil {
		return "", err
	}
	return pit.PitID, nil
}

func (s service) Search(ctx context.Context, body []byte) ([]byte, error) {
	var answer json.RawMessage
	if err := s.do(ctx, http.MethodPost, opensearchapi.SearchReq{Body: bytes.NewReader(body)}, "search", &answer); err != nil {
		if strings.Contains(err.Error(), "_shard_doc") {
			err = fmt.Errorf("%w (OpenSearch sorts by _shard_doc from 3.3 on, which reading through a point in time needs)", err)
		}
		return nil, err
	}
	return answer, nil
}

// Close deletes the point in time, then stops the transport's background
// work (its idle connections, any timer it set).
func (s service) Close(ctx context.Context, id string) {
	_ = s.do(ctx, http.MethodDelete, opensearchapi.PointInTimeDeleteReq{PitID: []string{id}}, "close the point in time", nil)
	_ = s.c.Close()
}

// do sends req and reads its answer into v (when not nil), or returns the
// cluster's refusal.
func (s service) do(ctx context.Context, method string, req opensearchgo.Request, what string, v any) error {
	res, err := s.c.Do(ctx, method, req, nil)
	if res == nil || res.Body == nil {
		if err == nil {
			err = fmt.Errorf("no answer")
		}
		return pitsearch.ServiceError(what, bounded.Cause(err))
	}
	defer func() { _ = res.Body.Close() }()
	if err != nil {
		return pitsearch.ServiceError(what, bounded.Cause(err))
	}
	if res.IsError() {
		return pitsearch.ServiceError(what, refusal(res))
	}
	if v == nil {
		return nil
	}
	if err := pitsearch.DecodeAnswer(res.Body, v); err != nil {
		return pitsearch.ServiceError(what, err)
	}
	return nil
}

// refusal is the cluster's error answer: {"error": {"type", "reason"}},
// or a plain text (the security plugin's "Unauthorized").
func refusal(res *opensearchgo.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	var cause struct{ Type, Reason string }
	if json.Unmarshal(b, &e) == nil && json.Unmarshal(e.Error, &cause) == nil && cause.Type != "" {
		return fmt.Errorf("%d %s: %s: %s", res.StatusCode, http.StatusText(res.StatusCode), cause.Type, cause.Reason)
	}
	var text string
	if json.Unmarshal(e.Error, &text) != nil {
		text = strings.TrimSpace(string(b))
	}
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	return fmt.Errorf("%d %s: %q", res.StatusCode, http.StatusText(res.StatusCode), text)
}
