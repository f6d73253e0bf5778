package audit

import (
	"hash/maphash"
	"math/bits"
	"slices"
)

// Dedup remembers the events it has been shown, by auditID and stage
// (one request has one auditID; its stages share it), so that an event
// read twice counts once: rotated files that overlap, a log beside a gzip
// copy of itself, overlapping exports, webhook retries.
//
// It keeps a 64-bit hash of each key, not the key: a 1 GiB log holds about
// a million events, whose auditIDs as strings would take some 100 MB. Two
// different events share a hash with a probability of about n²/2⁶⁵ (3·10⁻⁸
// for a million events); such an event would be counted as a duplicate.
// Events without an auditID are never duplicates.
//
// The hashes are kept by the slot (a tenth of a second, slotsPerSecond) the
// event completed in: a copy of an event completed when the event did. A
// log is read nearly in completion order, so the few slots being read are
// open sets that stay in the processor's cache, and the slots read before
// are sealed into sorted slices of 8 bytes an event, searched when a
// second copy of the log reaches them. One big map of every hash took 2 s
// more CPU on a 1 GiB log: each insert missed the cache, and its 20 MB
// made the garbage collector run four times as often under conflicts'
// memory limit. Slots of a second (10,000 events of the 1 GiB log, 128 KB
// of set) still missed it: a tenth of a second took a third less CPU.
//
// Example: events completed at 10:00:00.02 (id a) and 10:00:00.15 (id b)
// open the sets of slots 10:00:00.0 and 10:00:00.1; once maxOpen later
// slots have opened, those are sealed as [hash(a)] and [hash(b)]. A copy
// of a read from another file finds hash(a) in the sealed slot
// 10:00:00.0: a duplicate. An event of another API server completed in
// that slot reopens it.
type Dedup struct {
	// open are the sets of the slots being read, sealed those of the
	// slots read before (sorted); a slot is in one or the other.
	open   map[int64]*openSlot
	sealed map[int64][]uint64
	clock  uint64
	// lastSealed is the size of the last slot sealed.
	lastSealed int
	// last is the open slot of the last event, lastSlot its slot: most
	// events complete in the slot of the one before.
	last     *openSlot
	lastSlot int64
	// Duplicates counts the events First refused.
	Duplicates int
}

// hashSeed seeds every event's hash in this process.
var hashSeed = maphash.MakeSeed()

// idHash is the hash of e's auditID and stage. Decode's goroutines set it
// (Event.idHash) as they decode, off the goroutine that reads the events
// in order.
func idHash(e *Event) uint64 {
	h := maphash.String(hashSeed, e.AuditID)
	if e.Stage != StageResponseComplete {
		// The same request's Panic event is another event.
		h = bits.RotateLeft64(h, 17) ^ 0x9e3779b97f4a7c15
	}
	return h
}

// openSlot is one open slot's set and when it was last used.
type openSlot struct {
	set  hashSet
	used uint64
}

// maxOpen is how many slots stay open: two seconds, the disorder the
// conflicts analysis accepts before it reads a log again. A log is out of
// completion order by milliseconds, but for a few events by up to
// seconds, and a sealed slot is opened again when an event not in it comes
// (a sort and a set made again): events that alternate between slots
// further apart would do that for each. The open slots the events do not
// reach stay out of the cache.
const maxOpen = 20

// slotsPerSecond is how many slots (sets) a second of completion times
// is cut into.
const slotsPerSecond = 10

// NewDedup returns an empty Dedup.
func NewDedup() *Dedup {
	return &Dedup{open: map[int64]*openSlot{}, sealed: map[int64][]uint64{}}
}

// First says whether e is the first event seen with its auditID and
// stage; a later one is counted in Duplicates. A nil Dedup remembers
// nothing.
func (d *Dedup) First(e *Event) bool {
	if d == nil || e.AuditID == "" {
		return true
	}
	h := e.idHash
	if h == 0 {
		h = idHash(e)
	}
	d.clock++
	// From the seconds, not UnixNano, which is undefined before 1678 (an
	// event without a timestamp has the year 1).
	t := e.StageTimestamp
	slot := t.Unix()*slotsPerSecond + int64(t.Nanosecond()/(1e9/slotsPerSecond))
	o := d.last
	if o == nil || d.lastSlot != slot {
		o = d.open[slot]
	}
	if o == nil {
		if s, ok := d.sealed[slot]; ok {
			if _, found := slices.BinarySearch(s, h); found {
				d.Duplicates++
				return false
			}
		}
		o = d.unseal(slot)
	}
	o.used = d.clock
	d.last, d.lastSlot = o, slot
	if !o.set.add(h) {
		d.Duplicates++
		return false
	}
	return true
}

// unseal opens slot (from its sealed slice, if any), sealing the
// least recently used open slot when too many are open.
func (d *Dedup) unseal(slot int64) *openSlot {
	if len(d.open) >= maxOpen {
		var lru int64
		var oldest uint64 = 1<<64 - 1
		for s, o := range d.open {
			if o.used < oldest {
				lru, oldest = s, o.used
			}
		}
		hs := d.open[lru].set.sorted()
		d.sealed[lru], d.lastSealed = hs, len(hs)
		delete(d.open, lru)
		if lru == d.lastSlot {
			d.last = nil
		}
	}
	s := d.sealed[slot]
	// Sized for a slot like the last one sealed: a set grown insert by
	// insert rehashes itself several times.
	o := &openSlot{set: newHashSet(max(len(s), d.lastSealed))}
	for _, h := range s {
		o.set.add(h)
	}
	delete(d.sealed, slot)
	d.open[slot] = o
	return o
}

// hashSet is a set of hashes by open addressing (linear probing) in a
// slice at most three quarters full; 0 marks an empty slot, so the hash 0 is kept
// as 1 (a collision of 2⁻⁶³). It replaces map[uint64]struct{} for the
// open slots: an insert is one probe of a slice that fits the cache,
// where the map's took 100 ns or more on a 1 GiB log (hashing the hash
// again, its control bytes, its groups); TestHashSetMatchesMap holds it to
// the map.
type hashSet struct {
	slots []uint64
	n     int
}

func newHashSet(hint int) hashSet {
	size := 64
	for 3*size < 4*hint {
		size *= 2
	}
	return hashSet{slots: make([]uint64, size)}
}

// add adds h and says whether it was new.
func (s *hashSet) add(h uint64) bool {
	if h == 0 {
		h = 1
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = h
			s.n++
			return true
		case h:
			return false
		}
	}
}

func (s *hashSet) grow() {
	old := s.slots
	*s = newHashSet(len(old))
	for _, h := range old {
		if h != 0 {
			s.add(h)
		}
	}
}

// sorted returns the set's hashes in order. They are hashes, spread
// evenly: they are dealt by their top byte into 256 runs in one pass, and
// each run, of a few hashes, is sorted where it lies. A slot of the 1 GiB
// log (a thousand events, 800 slots) is so sorted in 12 µs instead of
// slices.Sort's 30 (BenchmarkSealSort).
func (s *hashSet) sorted() []uint64 {
	var start [257]int
	for _, h := range s.slots {
		if h != 0 {
			start[h>>56+1]++
		}
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	out := make([]uint64, s.n)
	next := start
	for _, h := range s.slots {
		if h != 0 {
			out[next[h>>56]] = h
			next[h>>56]++
		}
	}
	for b := range 256 {
		run := out[start[b]:start[b+1]]
		if len(run) > 12 {
			slices.Sort(run)
			continue
		}
		for i := 1; i < len(run); i++ {
			for j := i; j > 0 && run[j] < run[j-1]; j-- {
				run[j], run[j-1] = run[j-1], run[j]
			}
		}
	}
	return out
}
