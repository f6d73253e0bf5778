package audit

import (
	"hash/maphash"
	"math/bits"
)

// Dedup remembers the events it has been shown, by auditID and stage
// (one request has one auditID; its stages share it), so that an event
// read twice counts once: rotated files that overlap, a log beside a gzip
// copy of itself, overlapping exports, webhook retries.
//
// It keeps a 64-bit hash of each key, not the key: a 1 GiB log holds 1.2 M
// events, whose auditIDs as strings would take some 100 MB, their hashes
// some 20 MB. Two different events share a hash with a probability of
// about n²/2⁶⁵ (4·10⁻⁸ for 1.2 M events); such an event would be counted
// as a duplicate. Events without an auditID are never duplicates.
type Dedup struct {
	seed maphash.Seed
	seen map[uint64]struct{}
	// Duplicates counts the events First refused.
	Duplicates int
}

// NewDedup returns an empty Dedup.
func NewDedup() *Dedup {
	return &Dedup{seed: maphash.MakeSeed(), seen: map[uint64]struct{}{}}
}

// First says whether e is the first event seen with its auditID and
// stage; a later one is counted in Duplicates. A nil Dedup remembers
// nothing.
func (d *Dedup) First(e *Event) bool {
	if d == nil || e.AuditID == "" {
		return true
	}
	h := maphash.String(d.seed, e.AuditID)
	if e.Stage != StageResponseComplete {
		// The same request's Panic event is another event.
		h = bits.RotateLeft64(h, 17) ^ 0x9e3779b97f4a7c15
	}
	if _, ok := d.seen[h]; ok {
		d.Duplicates++
		return false
	}
	d.seen[h] = struct{}{}
	return true
}
