package conflicts

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The metrics --live reads.
const (
	// RequestsMetric is the API server's request counter: one series per
	// verb, dry_run, group, version, resource, subresource, scope,
	// component and code. It has no client label.
	RequestsMetric = "apiserver_request_total"
	// StartTimeMetric is the server process's start time: a different
	// value in two scrapes means the server restarted (or another replica
	// answered), so its counters started again from zero.
	StartTimeMetric = "process_start_time_seconds"
)

// ErrBadMetrics marks a /metrics body that is not the Prometheus text
// format, or that lacks apiserver_request_total.
var ErrBadMetrics = errors.New("bad metrics")

// SeriesKey is one apiserver_request_total series of code 409, by every
// label but code.
type SeriesKey struct {
	Group       string `json:"group"`
	Version     string `json:"version"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Verb        string `json:"verb"`
	Scope       string `json:"scope,omitempty"`
	Component   string `json:"component,omitempty"`
	DryRun      string `json:"dryRun,omitempty"`
}

// Scrape is what one read of /metrics says about 409s.
type Scrape struct {
	At time.Time
	// Conflicts is the counter value of every 409 series.
	Conflicts map[SeriesKey]float64
	// Requests is the sum of every apiserver_request_total series (all
	// codes), to tell "no 409 at all" from "no request counted".
	Requests float64
	// StartTime is process_start_time_seconds; 0 when absent.
	StartTime float64
}

// ParseMetrics reads a /metrics body in the Prometheus text format (with
// the Prometheus library's parser) taken at at. A body the parser refuses,
// or one without apiserver_request_total, wraps ErrBadMetrics.
func ParseMetrics(body []byte, at time.Time) (*Scrape, error) {
	fams, err := textToFamilies(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMetrics, err)
	}
	req, ok := fams[RequestsMetric]
	if !ok {
		return nil, fmt.Errorf("%w: no %s in the body: is this an API server's /metrics?", ErrBadMetrics, RequestsMetric)
	}
	if req.GetType() != dto.MetricType_COUNTER && req.GetType() != dto.MetricType_UNTYPED {
		return nil, fmt.Errorf("%w: %s is a %s, not a counter", ErrBadMetrics, RequestsMetric, req.GetType())
	}
	s := &Scrape{At: at, Conflicts: map[SeriesKey]float64{}}
	for _, m := range req.GetMetric() {
		v := m.GetCounter().GetValue()
		if req.GetType() == dto.MetricType_UNTYPED {
			v = m.GetUntyped().GetValue()
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: %s{%s} is %g: a counter is a finite number, zero or more", ErrBadMetrics, RequestsMetric, labelString(m), v)
		}
		s.Requests += v
		l := labels(m)
		if l["code"] != "409" {
			continue
		}
		k := SeriesKey{Group: l["group"], Version: l["version"], Resource: l["resource"], Subresource: l["subresource"],
			Verb: l["verb"], Scope: l["scope"], Component: l["component"], DryRun: l["dry_run"]}
		s.Conflicts[k] += v
	}
	if st, ok := fams[StartTimeMetric]; ok && len(st.GetMetric()) > 0 {
		m := st.GetMetric()[0]
		s.StartTime = m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return s, nil
}

// textToFamilies runs expfmt's text parser. Its v0.62.0 dereferences a nil
// metric on some malformed bodies (a line "{}0" after a comment, found by
// FuzzParseMetrics): a body from a server must not crash the command, so
// that panic is a parse error.
func textToFamilies(body []byte) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		if r := recover(); r != nil {
			fams, err = nil, fmt.Errorf("the Prometheus text parser failed on the body: %v", r)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(body))
}

func labelString(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return strings.Join(parts, ",")
}

func labels(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// LiveRow is the 409s of one group/resource/subresource/verb between two
// scrapes, summed over the other labels (version, scope, component,
// dry_run).
type LiveRow struct {
	Group       string  `json:"group"`
	Resource    string  `json:"resource"`
	Subresource string  `json:"subresource,omitempty"`
	Verb        string  `json:"verb"`
	Conflicts   float64 `json:"conflicts"`
	PerSecond   float64 `json:"perSecond"`
	// Reset is set when a series of the row went down between the scrapes
	// (the counter started again): the row then counts only what the
	// series counted since, a lower bound.
	Reset bool `json:"reset,omitempty"`
}

// LiveReport is what --live saw between its first and last scrape.
type LiveReport struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	// Conflicts is the sum of the rows; PerSecond is Conflicts / Seconds.
	Conflicts float64 `json:"conflicts"`
	PerSecond float64 `json:"perSecond"`
	// Requests is how many requests of any code the server counted in
	// between, for scale.
	Requests float64 `json:"requests"`
	// Restarted is set when process_start_time_seconds changed: the server
	// restarted or another replica answered; the figures are lower bounds.
	Restarted bool `json:"restarted,omitempty"`
	// Resets counts the 409 series that went down between the scrapes.
	Resets int `json:"resets,omitempty"`
	// Rows are the 409s by group/resource/subresource/verb, most first.
	Rows []LiveRow `json:"rows"`
}

// Delta compares two scrapes of one server, first before last. A series
// whose value went down (a restarted server's counters start from zero)
// counts its last value, never a negative one, and is marked Reset; a
// series absent from first counts from zero.
func Delta(first, last *Scrape) *LiveReport {
	rep := &LiveReport{Start: first.At, End: last.At, Seconds: last.At.Sub(first.At).Seconds(), Rows: []LiveRow{}}
	rep.Restarted = first.StartTime != 0 && last.StartTime != 0 && first.StartTime != last.StartTime
	rep.Requests = last.Requests - first.Requests
	if rep.Requests < 0 || rep.Restarted {
		rep.Requests = last.Requests
	}
	type rowKey struct{ group, resource, sub, verb string }
	rows := map[rowKey]*LiveRow{}
	for k, v := range last.Conflicts {
		d, reset := v, false
		if before, ok := first.Conflicts[k]; ok && !rep.Restarted {
			d = v - before
			if d < 0 {
				d, reset = v, true
			}
		}
		if reset {
			rep.Resets++
		}
		rk := rowKey{k.Group, k.Resource, k.Subresource, k.Verb}
		r := rows[rk]
		if r == nil {
			r = &LiveRow{Group: k.Group, Resource: k.Resource, Subresource: k.Subresource, Verb: k.Verb}
			rows[rk] = r
		}
		r.Conflicts += d
		r.Reset = r.Reset || reset || rep.Restarted
	}
	for k := range first.Conflicts {
		if _, ok := last.Conflicts[k]; !ok {
			rep.Resets++
		}
	}
	for _, r := range rows {
		if r.Conflicts == 0 && !r.Reset {
			continue
		}
		r.PerSecond = perSecond(r.Conflicts, rep.Seconds)
		rep.Conflicts += r.Conflicts
		rep.Rows = append(rep.Rows, *r)
	}
	rep.PerSecond = perSecond(rep.Conflicts, rep.Seconds)
	slices.SortFunc(rep.Rows, func(a, b LiveRow) int {
		return cmp.Or(cmp.Compare(b.Conflicts, a.Conflicts), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource),
			cmp.Compare(a.Subresource, b.Subresource), cmp.Compare(a.Verb, b.Verb))
	})
	return rep
}

func perSecond(n, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return n / seconds
}

// LiveConfig configures Live.
type LiveConfig struct {
	// For is the time between the first and the last scrape.
	For time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// After waits; nil is time.After. Tests inject one that returns at once.
	After func(time.Duration) <-chan time.Time
	// Started, when set, is called after the first scrape (for progress).
	Started func(at time.Time)
	// Every, with Tick, scrapes every so often between the first and the
	// last scrape and hands Tick the 409s since the previous one: the
	// per-second view of a terminal. 0 scrapes only at both ends.
	Every time.Duration
	Tick  func(*LiveReport)
}

// Live scrapes /metrics (through get, which returns the body) at the start
// and after cfg.For, and returns the 409s counted in between. Errors are
// get's (the caller classifies them), ErrBadMetrics, or ctx's.
func Live(ctx context.Context, get func(context.Context) ([]byte, error), cfg LiveConfig) (*LiveReport, error) {
	now, after := cfg.Now, cfg.After
	if now == nil {
		now = time.Now
	}
	if after == nil {
		after = time.After
	}
	scrape := func() (*Scrape, error) {
		b, err := get(ctx)
		if err != nil {
			return nil, err
		}
		return ParseMetrics(b, now())
	}
	first, err := scrape()
	if err != nil {
		return nil, err
	}
	if cfg.Started != nil {
		cfg.Started(first.At)
	}
	if err := ticks(ctx, first, scrape, after, cfg); err != nil {
		return nil, err
	}
	last, err := scrape()
	if err != nil {
		return nil, err
	}
	return Delta(first, last), nil
}

// ticks waits cfg.For, scraping every cfg.Every meanwhile when cfg.Tick is
// set; the last scrape is the caller's.
func ticks(ctx context.Context, prev *Scrape, scrape func() (*Scrape, error), after func(time.Duration) <-chan time.Time, cfg LiveConfig) error {
	end := after(cfg.For)
	for {
		var tick <-chan time.Time
		if cfg.Every > 0 && cfg.Tick != nil {
			tick = after(cfg.Every)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-end:
			return nil
		case <-tick:
			select {
			case <-end: // both were ready: the end wins
				return nil
			default:
			}
			s, err := scrape()
			if err != nil {
				return err
			}
			cfg.Tick(Delta(prev, s))
			prev = s
		}
	}
}
