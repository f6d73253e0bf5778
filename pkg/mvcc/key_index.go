package mvcc

import "sort"

// record is one write of a key: a put or a tombstone (delete). It holds no
// pointers (the value lives in the store's chunks), so the garbage
// collector never scans the histories.
type record struct {
	main      int64
	sub       int32
	tombstone bool
	create    int64
	version   int64
	// chunk, off and n locate the value in Store.chunks; n == 0 is empty.
	chunk, off, n uint32
}

// rev returns the record's revision.
func (r *record) rev() Revision { return Revision{Main: r.main, Sub: int64(r.sub)} }

// keyIndex is the history of one key, oldest first. Unlike etcd's keyIndex
// it keeps the values inline (there is no separate backend), but it answers
// the same questions the same way.
//
// Example: put at 6, put at 8, delete at 9, put at 10 gives
//
//	hist: {6.0 c6 v1} {8.0 c6 v2} {9.0 tombstone} {10.0 c10 v1}
//
// get at 7 -> the put at 6; get at 9 -> nothing (tombstone); get at 5 ->
// nothing. Compact(8) keeps the newest record at or below 8 and everything
// after it: {8.0} {9.0} {10.0}. Compact(9) keeps the tombstone at 9 (a
// watch from 9 still sees the delete), Compact(10) drops it: etcd keeps a
// tombstone that is the newest compacted record only when it sits exactly
// at the compaction revision. A key whose history empties is removed from
// the index.
type keyIndex struct {
	key  string
	hist []record
}

// at returns the record visible at main revision rev: the newest record
// with Main <= rev, unless it is a tombstone.
func (ki *keyIndex) at(rev int64) (*record, bool) {
	h := ki.hist
	n := len(h)
	if n == 0 {
		return nil, false
	}
	// The newest record is by far the most frequent answer.
	i := n - 1
	if h[i].main > rev {
		// The first record after rev, minus one.
		i = sort.Search(n, func(j int) bool { return h[j].main > rev }) - 1
		if i < 0 {
			return nil, false
		}
	}
	// Records of one revision (a delete and a recreate in one txn) are
	// ordered by sub: the last one wins.
	if h[i].tombstone {
		return nil, false
	}
	return &h[i], true
}

// latest returns the live record at the head of the history.
func (ki *keyIndex) latest() (*record, bool) {
	if n := len(ki.hist); n > 0 && !ki.hist[n-1].tombstone {
		return &ki.hist[n-1], true
	}
	return nil, false
}

// compact drops the history that no read at or above rev can see, passing
// each dropped record to release, and reports whether the key has no
// history left.
func (ki *keyIndex) compact(rev int64, release func(*record)) (empty bool) {
	h := ki.hist
	keep := -1
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].main <= rev {
			keep = i
			break
		}
	}
	if keep < 0 {
		return len(h) == 0
	}
	if h[keep].tombstone && h[keep].main < rev {
		keep++
	}
	if keep == len(h) {
		for i := range h {
			release(&h[i])
		}
		ki.hist = h[:0]
		return true
	}
	if keep > 0 {
		for i := range h[:keep] {
			release(&h[i])
		}
		n := copy(h, h[keep:])
		clear(h[n:])
		ki.hist = h[:n]
	}
	return len(ki.hist) == 0
}
