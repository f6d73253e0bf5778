package conflicts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var liveT0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// metrics builds an API server /metrics body: the 409 counters given as
// "group/resource/subresource/verb value", one 200 series, and the start
// time.
func metrics(start float64, conflicts ...string) string {
	var b strings.Builder
	b.WriteString("# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.\n")
	b.WriteString("# TYPE apiserver_request_total counter\n")
	b.WriteString(`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="configmaps",scope="resource",subresource="",verb="GET",version="v1"} 1000` + "\n")
	for _, c := range conflicts {
		key, v, _ := strings.Cut(c, " ")
		p := strings.Split(key, "/")
		fmt.Fprintf(&b, "apiserver_request_total{code=\"409\",component=\"apiserver\",dry_run=\"\",group=%q,resource=%q,scope=\"resource\",subresource=%q,verb=%q,version=\"v1\"} %s\n", p[0], p[1], p[2], p[3], v)
	}
	b.WriteString("# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\n")
	fmt.Fprintf(&b, "process_start_time_seconds %g\n", start)
	return b.String()
}

func TestDelta(t *testing.T) {
	for _, tc := range []struct {
		name        string
		first, last string
		want        *LiveReport
	}{{
		name:  "deltas by group/resource/subresource/verb, most first",
		first: metrics(1, "/configmaps//PUT 10", "coordination.k8s.io/leases//PUT 3", "apps/deployments/status/PUT 1"),
		last:  metrics(1, "/configmaps//PUT 30", "coordination.k8s.io/leases//PUT 8", "apps/deployments/status/PUT 1", "/secrets//PATCH 2"),
		want: &LiveReport{Seconds: 10, Conflicts: 27, PerSecond: 2.7, Rows: []LiveRow{
			{Resource: "configmaps", Verb: "PUT", Conflicts: 20, PerSecond: 2},
			{Group: "coordination.k8s.io", Resource: "leases", Verb: "PUT", Conflicts: 5, PerSecond: 0.5},
			{Resource: "secrets", Verb: "PATCH", Conflicts: 2, PerSecond: 0.2},
		}},
	}, {
		name:  "a series that went down is a reset, never a negative rate",
		first: metrics(1, "/configmaps//PUT 50", "/secrets//PUT 5"),
		last:  metrics(1, "/configmaps//PUT 4", "/secrets//PUT 6"),
		want: &LiveReport{Seconds: 10, Conflicts: 5, PerSecond: 0.5, Resets: 1, Rows: []LiveRow{
			{Resource: "configmaps", Verb: "PUT", Conflicts: 4, PerSecond: 0.4, Reset: true},
			{Resource: "secrets", Verb: "PUT", Conflicts: 1, PerSecond: 0.1},
		}},
	}, {
		name:  "a new start time: every series counts from zero",
		first: metrics(1, "/configmaps//PUT 3", "/secrets//PUT 9"),
		last:  metrics(2, "/configmaps//PUT 7"),
		want: &LiveReport{Seconds: 10, Conflicts: 7, PerSecond: 0.7, Restarted: true, Resets: 1, Rows: []LiveRow{
			{Resource: "configmaps", Verb: "PUT", Conflicts: 7, PerSecond: 0.7, Reset: true},
		}},
	}, {
		name:  "no 409",
		first: metrics(1, "/configmaps//PUT 3"),
		last:  metrics(1, "/configmaps//PUT 3"),
		want:  &LiveReport{Seconds: 10, Rows: []LiveRow{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			first, err := ParseMetrics([]byte(tc.first), liveT0)
			if err != nil {
				t.Fatal(err)
			}
			last, err := ParseMetrics([]byte(tc.last), liveT0.Add(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			got := Delta(first, last)
			tc.want.Start, tc.want.End = liveT0, liveT0.Add(10*time.Second)
			got.Requests = 0
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	s, err := ParseMetrics([]byte(metrics(1700000000.5, "/configmaps//PUT 12", "/configmaps//PUT 1")), liveT0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[SeriesKey]float64{{Version: "v1", Resource: "configmaps", Verb: "PUT", Scope: "resource", Component: "apiserver"}: 13}
	if diff := cmp.Diff(want, s.Conflicts); diff != "" {
		t.Errorf("conflicts (-want +got)\n%s", diff)
	}
	if s.Requests != 1013 || s.StartTime != 1700000000.5 {
		t.Errorf("requests %g start %g, want 1013 and 1700000000.5", s.Requests, s.StartTime)
	}
}

func TestParseMetricsBad(t *testing.T) {
	for name, body := range map[string]string{
		"not the text format": "<html>login</html>\n",
		"no request counter":  "# TYPE up gauge\nup 1\n",
		"not a counter":       "# TYPE apiserver_request_total gauge\napiserver_request_total{code=\"409\"} 1\n",
		"a negative counter":  "# TYPE apiserver_request_total counter\napiserver_request_total{code=\"409\"} -1\n",
		"a NaN counter":       "# TYPE apiserver_request_total counter\napiserver_request_total{code=\"409\"} NaN\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseMetrics([]byte(body), liveT0); !errors.Is(err, ErrBadMetrics) {
				t.Errorf("err %v, want ErrBadMetrics", err)
			}
		})
	}
}

func TestLive(t *testing.T) {
	bodies := []string{metrics(1, "/configmaps//PUT 1"), metrics(1, "/configmaps//PUT 21")}
	clock := liveT0
	var waited time.Duration
	get := func(context.Context) ([]byte, error) {
		b := bodies[0]
		bodies = bodies[1:]
		return []byte(b), nil
	}
	var started time.Time
	rep, err := Live(context.Background(), get, LiveConfig{
		For:     5 * time.Second,
		Started: func(at time.Time) { started = at },
		Now:     func() time.Time { return clock },
		After: func(d time.Duration) <-chan time.Time {
			waited, clock = d, clock.Add(d)
			c := make(chan time.Time, 1)
			c <- clock
			return c
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if waited != 5*time.Second || rep.Conflicts != 20 || rep.PerSecond != 4 || !started.Equal(liveT0) {
		t.Errorf("waited %s, %g 409s at %g/s, started at %s; want 5s, 20 at 4/s, %s", waited, rep.Conflicts, rep.PerSecond, started, liveT0)
	}
	boom := errors.New("forbidden")
	if _, err := Live(context.Background(), func(context.Context) ([]byte, error) { return nil, boom }, LiveConfig{For: time.Second}); !errors.Is(err, boom) {
		t.Errorf("err %v, want the scrape's", err)
	}
}

func FuzzParseMetrics(f *testing.F) {
	f.Add([]byte(metrics(1, "/configmaps//PUT 3", "apps/deployments/status/PATCH 2")))
	f.Add([]byte("apiserver_request_total{code=\"409\"} -1\n"))
	f.Add([]byte("# TYPE apiserver_request_total counter\napiserver_request_total{code=\"409\",verb=\"x\"} NaN\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := ParseMetrics(body, liveT0)
		if err != nil {
			if !errors.Is(err, ErrBadMetrics) {
				t.Fatalf("error %v does not wrap ErrBadMetrics", err)
			}
			return
		}
		rep := Delta(s, s)
		for _, r := range rep.Rows {
			if r.Conflicts < 0 || r.Conflicts != r.Conflicts {
				t.Fatalf("negative delta %+v", r)
			}
		}
	})
}

// TestLiveTicks: with Every and Tick, Live scrapes in between and hands
// each tick the 409s since the previous scrape; the report still covers
// the whole window.
func TestLiveTicks(t *testing.T) {
	values := []int{0, 3, 3, 10, 12}
	n := 0
	get := func(context.Context) ([]byte, error) {
		b := metrics(1, fmt.Sprintf("/configmaps//PUT %d", values[n]))
		n++
		return []byte(b), nil
	}
	end := make(chan time.Time)
	var got []float64
	rep, err := Live(context.Background(), get, LiveConfig{
		For: time.Minute, Every: time.Second,
		Now: func() time.Time { return liveT0.Add(time.Duration(n) * time.Second) },
		After: func(d time.Duration) <-chan time.Time {
			if d == time.Minute {
				return end
			}
			c := make(chan time.Time, 1)
			c <- liveT0
			return c
		},
		Tick: func(r *LiveReport) {
			got = append(got, r.Conflicts)
			if len(got) == 3 {
				close(end)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{3, 0, 7}, got); diff != "" || rep.Conflicts != 12 {
		t.Errorf("ticks (-want +got)\n%s; report %g 409s, want 12", diff, rep.Conflicts)
	}
}
