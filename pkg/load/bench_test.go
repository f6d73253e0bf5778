package load

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkCountByObject counts requests about 20,000 objects, 5 each,
// by object, and reports the heap the counter holds per group: the
// memory that grows with a log's objects.
func BenchmarkCountByObject(b *testing.B) {
	const objects, each = 20_000, 5
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c := newCounter(Config{By: []Key{Object, Verb}, Hot: Hot{Rate: 1, For: 60e9}})
		for i := range objects * each {
			e := ev(i, fmt.Sprintf("u%d", i%50), "get", fmt.Sprintf("configmaps/o%d", i%objects), 200)
			c.add(&e)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/objects, "B/group")
		runtime.KeepAlive(c)
	}
}
