package leases

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// benchLeases is the fleet of the benchmarks: 10,000 Leases, each renewed
// every 2 s (5,000 renewals a second), as node heartbeats or a busy
// cluster's controllers make them.
const benchLeases = 10000

func fleet() []*unstructured.Unstructured {
	ls := make([]*unstructured.Unstructured, benchLeases)
	for i := range ls {
		ls[i] = lease(fmt.Sprintf("lease-%05d", i), fmt.Sprintf("node-%05d_0f3a9c", i), 40, 0, 0)
		ls[i].Object["metadata"].(map[string]any)["resourceVersion"] = "1"
	}
	return ls
}

// renewTimes are the renewTime strings of rounds of renewals 2 s apart.
func renewTimes(rounds int) []string {
	out := make([]string, rounds)
	for r := range out {
		out[r] = at(2 * float64(r+1)).Format(micro)
	}
	return out
}

// BenchmarkTrackerRenewal measures one renewal of one of 10,000 Leases
// through the tracker (record reading, renewal bookkeeping); the decoding
// of the watch stream is not included. Run it on one core:
//
//	GOMAXPROCS=1 go test -run '^$' -bench TrackerRenewal ./pkg/leases
func BenchmarkTrackerRenewal(b *testing.B) {
	ls := fleet()
	tr := NewTracker(NewConfig(), t0)
	for _, l := range ls {
		tr.Observe(ev(follow.List, 0, l))
	}
	times := renewTimes(b.N/benchLeases + 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		l := ls[i%benchLeases]
		l.Object["spec"].(map[string]any)["renewTime"] = times[i/benchLeases]
		tr.Observe(follow.Event{Type: follow.Modified, Resource: "coordination.k8s.io/v1/leases", Object: l})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkLeaseEventDecoded measures one renewal from the watch event's
// JSON: decoding it into an unstructured object (as client-go's dynamic
// client does) and the tracker.
func BenchmarkLeaseEventDecoded(b *testing.B) {
	tr := NewTracker(NewConfig(), t0)
	raws := make([][]byte, benchLeases)
	for i, l := range fleet() {
		tr.Observe(ev(follow.List, 0, l))
		l.Object["spec"].(map[string]any)["renewTime"] = "RENEW"
		raw, err := l.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		raws[i] = raw
	}
	times := renewTimes(b.N/benchLeases + 1)
	jsons := make([][]byte, b.N)
	for i := range jsons {
		jsons[i] = []byte(replaceOnce(string(raws[i%benchLeases]), "RENEW", times[i/benchLeases]))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(jsons[i]); err != nil {
			b.Fatal(err)
		}
		tr.Observe(follow.Event{Type: follow.Modified, Resource: "coordination.k8s.io/v1/leases", Object: u})
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTrackerRetained reports the heap the tracker keeps for 10,000
// Leases after RingSize rounds of renewals (its rings of intervals full:
// the most it keeps), in bytes a Lease, not counting the Lease objects
// themselves, which the watch does not keep.
func BenchmarkTrackerRetained(b *testing.B) {
	for range b.N {
		ls := fleet()
		before := heapInUse()
		tr := NewTracker(NewConfig(), t0)
		for _, l := range ls {
			tr.Observe(ev(follow.List, 0, l))
		}
		for _, rt := range renewTimes(RingSize) {
			for _, l := range ls {
				l.Object["spec"].(map[string]any)["renewTime"] = rt
				tr.Observe(follow.Event{Type: follow.Modified, Object: l})
			}
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/benchLeases, "bytes/lease")
		b.ReportMetric(float64(after-before)/(1<<20), "MiB")
		runtime.KeepAlive(tr)
		runtime.KeepAlive(ls)
	}
}

// TestTrackerNoTimelineForHealthyRenewals holds the timeline to notable
// moments: 10,000 Leases renewing on time add none.
func TestTrackerNoTimelineForHealthyRenewals(t *testing.T) {
	ls := fleet()[:100]
	tr := NewTracker(NewConfig(), t0)
	for _, l := range ls {
		tr.Observe(ev(follow.List, 0, l))
	}
	for _, rt := range renewTimes(10) {
		for _, l := range ls {
			l.Object["spec"].(map[string]any)["renewTime"] = rt
			tr.Observe(follow.Event{Type: follow.Modified, Object: l})
		}
	}
	rep := tr.Report(at(21))
	if len(rep.Timeline) != 0 || rep.Locks[0].Renewals.Count != 10 {
		t.Errorf("timeline %d moments, renewals %+v", len(rep.Timeline), rep.Locks[0].Renewals)
	}
}
