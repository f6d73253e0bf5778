package audit

import (
	"fmt"
	"runtime"
	"testing"
)

func TestDedup(t *testing.T) {
	d := NewDedup()
	evs := []Event{
		{AuditID: "a", Stage: StageResponseComplete},
		{AuditID: "a", Stage: StagePanic},
		{AuditID: "b", Stage: StageResponseComplete},
		{AuditID: "a", Stage: StageResponseComplete},
		{AuditID: "", Stage: StageResponseComplete},
		{AuditID: "", Stage: StageResponseComplete},
	}
	var got []bool
	for i := range evs {
		got = append(got, d.First(&evs[i]))
	}
	if fmt.Sprint(got) != "[true true true false true true]" || d.Duplicates != 1 {
		t.Errorf("First = %v, %d duplicates; want [true true true false true true], 1", got, d.Duplicates)
	}
}

// TestDedupMemory: the set holds a hash per event, not its auditID: at
// most 40 bytes an event.
func TestDedupMemory(t *testing.T) {
	const n = 200_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := NewDedup()
	for i := range n {
		e := Event{AuditID: fmt.Sprintf("%08x-85a1-42b9-bcbe-%012x", i, i), Stage: StageResponseComplete}
		d.First(&e)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc)) / n; per > 40 {
		t.Errorf("%.1f bytes an event, want at most 40", per)
	}
	runtime.KeepAlive(d)
}
