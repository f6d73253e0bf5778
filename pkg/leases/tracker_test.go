package leases

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

const micro = "2006-01-02T15:04:05.000000Z07:00"

// lease is a Lease held by holder (none when ""), acquired at acq and
// renewed at renew seconds after t0.
func lease(name, holder string, durSec int64, acq, renew float64) *unstructured.Unstructured {
	spec := map[string]any{"leaseDurationSeconds": durSec}
	if holder != "" {
		spec["holderIdentity"] = holder
		spec["acquireTime"] = at(acq).Format(micro)
		spec["renewTime"] = at(renew).Format(micro)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": name, "namespace": "kube-system"},
		"spec":     spec,
	}}
}

func ev(typ follow.EventType, s float64, u *unstructured.Unstructured) follow.Event {
	return follow.Event{Type: typ, Time: at(s), Resource: "coordination.k8s.io/v1/leases", Object: u}
}

var sched = LockRef{Kind: KindLease, Namespace: "kube-system", Name: "sched"}

func TestTrackerFindings(t *testing.T) {
	tests := []struct {
		name      string
		events    []follow.Event
		end       float64
		takeovers []Takeover
		expiries  []Expiry
		renewals  Renewals
	}{{
		name: "healthy renewals every 2s",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
			ev(follow.Modified, 2, lease("sched", "a", 15, 0, 2)),
			ev(follow.Modified, 4, lease("sched", "a", 15, 0, 4)),
			ev(follow.Modified, 6, lease("sched", "a", 15, 0, 6)),
		},
		end:      7,
		renewals: Renewals{Count: 3, IntervalMedian: dur(2 * time.Second), IntervalP99: dur(2 * time.Second), MinSlack: dur(13 * time.Second)},
	}, {
		name: "a late renewal: 11s of 15s leaves 4s, under a third",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
			ev(follow.Modified, 2, lease("sched", "a", 15, 0, 2)),
			ev(follow.Modified, 13, lease("sched", "a", 15, 0, 13)),
		},
		end:      14,
		renewals: Renewals{Count: 2, IntervalMedian: dur(2 * time.Second), IntervalP99: dur(11 * time.Second), MinSlack: dur(4 * time.Second), Late: 1},
	}, {
		name: "the holder freezes and another takes over after expiry",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
			ev(follow.Modified, 2, lease("sched", "a", 15, 0, 2)),
			ev(follow.Modified, 19.5, lease("sched", "b", 15, 19.5, 19.5)),
			ev(follow.Modified, 21.5, lease("sched", "b", 15, 19.5, 21.5)),
		},
		end: 22,
		takeovers: []Takeover{{Lock: sched, Time: at(19.5), From: "a", To: "b", FromLastRenew: ptr(at(2)), AfterExpiry: true,
			Unheld: dur(2500 * time.Millisecond)}},
		expiries: []Expiry{{Lock: sched, Holder: "a", LastRenew: at(2), At: at(17)}},
		renewals: Renewals{Count: 2, IntervalMedian: dur(2 * time.Second), IntervalP99: dur(2 * time.Second), MinSlack: dur(13 * time.Second), Expiries: 1, Takeovers: 1},
	}, {
		name: "an expiry nobody takes over is found by the clock",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
		},
		end:      16,
		expiries: []Expiry{{Lock: sched, Holder: "a", LastRenew: at(0), At: at(15)}},
		renewals: Renewals{Expiries: 1},
	}, {
		name: "the holder renews after its lease expired, nobody took over",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
			ev(follow.Modified, 20, lease("sched", "a", 15, 0, 20)),
		},
		end:      21,
		expiries: []Expiry{{Lock: sched, Holder: "a", LastRenew: at(0), At: at(15), RenewedAfter: true}},
		renewals: Renewals{Count: 1, IntervalMedian: dur(20 * time.Second), IntervalP99: dur(20 * time.Second), MinSlack: dur(-5 * time.Second), Expiries: 1},
	}, {
		name: "a release, then another acquires: a takeover, not after expiry",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
			ev(follow.Modified, 1, lease("sched", "", 15, 0, 0)),
			ev(follow.Modified, 3, lease("sched", "b", 15, 3, 3)),
		},
		end:       4,
		takeovers: []Takeover{{Lock: sched, Time: at(3), From: "a", To: "b", FromLastRenew: ptr(at(0)), Released: true}},
		renewals:  Renewals{Takeovers: 1},
	}, {
		name: "a relist after a gap does not count a renewal across the gap",
		events: []follow.Event{
			ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
			{Type: follow.Synced, Reason: follow.SyncInitial, Time: at(0), ResourceVersion: "10"},
			{Type: follow.List, Reason: follow.SyncRelist, Time: at(14), Object: lease("sched", "a", 15, 0, 13)},
			{Type: follow.Synced, Reason: follow.SyncRelist, Time: at(14), ResourceVersion: "90", GapFrom: "10"},
			ev(follow.Modified, 15, lease("sched", "a", 15, 0, 15)),
		},
		end:      16,
		renewals: Renewals{Count: 1, IntervalMedian: dur(2 * time.Second), IntervalP99: dur(2 * time.Second), MinSlack: dur(13 * time.Second)},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			tr := NewTracker(cfg, t0)
			for _, e := range tc.events {
				tr.Observe(e)
			}
			rep := tr.Report(at(tc.end))
			if diff := cmp.Diff(nonNil(tc.takeovers), rep.Takeovers); diff != "" {
				t.Errorf("takeovers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(nonNil(tc.expiries), rep.Expiries); diff != "" {
				t.Errorf("expiries (-want +got):\n%s", diff)
			}
			if len(rep.Locks) != 1 {
				t.Fatalf("locks: %+v", rep.Locks)
			}
			if diff := cmp.Diff(&tc.renewals, rep.Locks[0].Renewals); diff != "" {
				t.Errorf("renewals (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func TestTrackerSpansAndTimeline(t *testing.T) {
	tr := NewTracker(NewConfig(), t0)
	for _, e := range []follow.Event{
		ev(follow.List, 0, lease("sched", "a", 15, 0, 0)),
		ev(follow.Modified, 2, lease("sched", "a", 15, 0, 2)),
		ev(follow.Modified, 18, lease("sched", "b", 15, 18, 18)),
		ev(follow.Deleted, 20, lease("sched", "b", 15, 18, 18)),
	} {
		tr.Observe(e)
	}
	rep := tr.Report(at(21))
	wantSpans := []Span{
		{Holder: "a", From: at(0), LastRenew: at(2), To: ptr(at(18)), Renewals: 1},
		{Holder: "b", From: at(18), LastRenew: at(18), To: ptr(at(20))},
	}
	if diff := cmp.Diff(wantSpans, rep.Locks[0].Spans); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	var got []MomentKind
	for _, m := range rep.Timeline {
		got = append(got, m.What)
	}
	if diff := cmp.Diff([]MomentKind{MomentExpired, MomentTakeover, MomentDeleted}, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if !rep.Locks[0].Deleted {
		t.Errorf("lock not marked deleted")
	}
}

func TestQuantile(t *testing.T) {
	var s renewStats
	for i := 1; i <= 1000; i++ {
		s.renewal(time.Duration(i)*time.Millisecond, time.Hour)
	}
	r := s.summary()
	// Only the last RingSize intervals count: 745..1000 ms.
	if diff := cmp.Diff([]time.Duration{872 * time.Millisecond, 998 * time.Millisecond}, []time.Duration{r.IntervalMedian.D(), r.IntervalP99.D()}); diff != "" {
		t.Errorf("median, p99 (-want +got):\n%s", diff)
	}
	if r.Count != 1000 {
		t.Errorf("count %d, want 1000", r.Count)
	}
}
