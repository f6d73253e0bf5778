package audit

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkDedup: a million events, 10,000 a second, in completion order.
func BenchmarkDedup(b *testing.B) {
	evs := make([]Event, 1_000_000)
	for i := range evs {
		evs[i] = Event{AuditID: fmt.Sprintf("%08x-85a1-42b9-bcbe-%012x", i, i), Stage: StageResponseComplete, StageTimestamp: time.Unix(int64(i/10_000), 0)}
	}
	for b.Loop() {
		d := NewDedup()
		for i := range evs {
			d.First(&evs[i])
		}
	}
}

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

// TestDedupSealed: a log read again after many seconds finds its events
// in the sealed slots; another server's events in those seconds are new,
// and found when read again.
func TestDedupSealed(t *testing.T) {
	d := NewDedup()
	at := func(id string, sec int) *Event {
		return &Event{AuditID: id, Stage: StageResponseComplete, StageTimestamp: time.Unix(int64(1_800_000_000+sec), 0)}
	}
	for pass, want := range []bool{true, false} {
		for i := range 100 {
			if got := d.First(at(fmt.Sprint("a", i), i/3)); got != want {
				t.Fatalf("pass %d, event %d: First = %v, want %v", pass, i, got, want)
			}
		}
	}
	for pass, want := range []bool{true, false} {
		for i := range 100 {
			if got := d.First(at(fmt.Sprint("b", i), i/3)); got != want {
				t.Fatalf("other server, pass %d, event %d: First = %v, want %v", pass, i, got, want)
			}
		}
	}
	if d.Duplicates != 200 || len(d.open) > maxOpen {
		t.Errorf("%d duplicates, %d slots open; want 200, at most %d", d.Duplicates, len(d.open), maxOpen)
	}
}

// TestDedupDisorderKeepsSlotsOpen: events that alternate between times
// nearly two seconds apart (two servers' lines interleaved with a skew)
// stay in open slots: none is sealed and opened again for each event.
func TestDedupDisorderKeepsSlotsOpen(t *testing.T) {
	d := NewDedup()
	base := time.Unix(1_800_000_000, 0)
	for pass, want := range []bool{true, false} {
		for i := range 1000 {
			at := base.Add(time.Duration(i) * time.Millisecond)
			if i%2 == 1 {
				at = at.Add(1900 * time.Millisecond)
			}
			e := &Event{AuditID: fmt.Sprint("e", i), Stage: StageResponseComplete, StageTimestamp: at}
			if got := d.First(e); got != want {
				t.Fatalf("pass %d, event %d: First = %v, want %v", pass, i, got, want)
			}
		}
	}
	if len(d.sealed) != 0 || d.Duplicates != 1000 {
		t.Errorf("%d slots sealed, %d duplicates; want 0, 1000", len(d.sealed), d.Duplicates)
	}
}

// TestDedupMemory: the set holds a hash per event, not its auditID: at
// most 20 bytes an event, a log's events completing 10,000 a second.
func TestDedupMemory(t *testing.T) {
	const n = 200_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := NewDedup()
	for i := range n {
		e := Event{AuditID: fmt.Sprintf("%08x-85a1-42b9-bcbe-%012x", i, i), Stage: StageResponseComplete, StageTimestamp: time.Unix(int64(i/10_000), 0)}
		d.First(&e)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if per := float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc)) / n; per > 20 {
		t.Errorf("%.1f bytes an event, want at most 20", per)
	}
	runtime.KeepAlive(d)
}

// TestHashSetMatchesMap: the open slots' set says what a map says, for
// random hashes, repeats, and the hash 0.
func TestHashSetMatchesMap(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var s hashSet
	s = newHashSet(0)
	m := map[uint64]struct{}{}
	for i := range 50_000 {
		h := rnd.Uint64()
		switch i % 7 {
		case 0:
			h = uint64(i % 100) // repeats
		case 1:
			h = 0
		}
		key := max(h, 1)
		_, had := m[key]
		m[key] = struct{}{}
		if got := s.add(h); got == had {
			t.Fatalf("add(%d) = %v, the map had it: %v", h, got, had)
		}
	}
	got := s.sorted()
	want := slices.Sorted(maps.Keys(m))
	if !slices.Equal(want, got) || s.n != len(m) {
		t.Errorf("the set holds %d hashes, the map %d", len(got), len(m))
	}
}

// TestSortedSortsEverySize: sorted gives what slices.Sort gives, for sets
// empty, small, a slot's size, large, and whose hashes share a top byte
// (runs longer than the insertion sort takes).
func TestSortedSortsEverySize(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		n    int
		mask uint64
	}{{0, ^uint64(0)}, {1, ^uint64(0)}, {7, ^uint64(0)}, {1000, ^uint64(0)}, {100_000, ^uint64(0)}, {5000, 0x03ff_ffff_ffff_ffff}, {300, 0xff}} {
		s := newHashSet(0)
		var want []uint64
		for range tc.n {
			if h := max(rnd.Uint64()&tc.mask, 1); s.add(h) {
				want = append(want, h)
			}
		}
		slices.Sort(want)
		if got := s.sorted(); !slices.Equal(got, want) {
			t.Errorf("%d hashes (mask %#x): sorted differs from slices.Sort", tc.n, tc.mask)
		}
	}
}

// BenchmarkSealSort: a slot of the 1 GiB log's size sorted as Dedup seals
// it, and by slices.Sort.
func BenchmarkSealSort(b *testing.B) {
	rnd := rand.New(rand.NewPCG(5, 6))
	s := newHashSet(0)
	for range 1000 {
		s.add(rnd.Uint64())
	}
	b.Run("sorted", func(b *testing.B) {
		for b.Loop() {
			s.sorted()
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			hs := make([]uint64, 0, s.n)
			for _, h := range s.slots {
				if h != 0 {
					hs = append(hs, h)
				}
			}
			slices.Sort(hs)
		}
	})
}
