package conflicts

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// The stream analyses records in completion order with bounded memory.
//
// Records arrive nearly in completion order (an API server writes an
// event when the request completes). A heap holds them until the newest
// completion seen is skew ahead, then releases them in order: (completed,
// gets before writes, received, arrival). A released 409 waits another
// inFlight for the successes that may have beaten it, then the object's
// records are walked. Each object keeps the numbers of its writers, the
// states of those whose last attempt was a 409, its readers' last gets,
// and the successes of the last foldAfter; older successes are
// folded into a short history (completion and writer) that keeps only
// what a later 409 may need: the successes after the oldest last get of a
// reader of the object, at most maxHistory, and the last one. Memory so
// grows with objects, writers and readers, and with the events of a few
// seconds, not with the log.
//
// Example, skew 2s: the record completed at 10:00:00.004 is released once
// one completed after 10:00:02.004 has arrived; a 409 completed at
// 10:00:00.005 is walked once the release has passed 10:00:01.005.
//
// When the bounded state cannot give the exact answer (a record older than
// one already released, or a 409 that needs a success dropped from the
// history), the stream says so (errNeedsAllRecords) and Analyze reads the
// logs again keeping every record.
type stream struct {
	cfg  Config
	skew time.Duration
	heap recQueue
	seq  uint64
	// newest is the latest completion seen; frontier the latest released.
	newest, frontier time.Time
	released         bool
	// objects are the objects' states by number (record.oid); nil for
	// objects not released yet.
	objects []*objState
	// ripe are the released 409s waiting for inFlight, in release order.
	ripe  []*record
	t     *totals
	nobjs int
	// only, when set, limits the analysis to one object (the hottest
	// object's timeline, read again).
	only *ObjectKey
	// inexact is set when the bounded state could not follow the log.
	inexact bool
	// all keeps every released record per object when the hottest object's
	// timeline is wanted and the log cannot be read again.
	all map[*ObjectKey][]*record
	// scratch is the state of a writer's attempt that objState.state
	// made and attempt did not keep.
	scratch writerState
	// writerKeys are the writers by number (record.wid), as the records
	// bring them: the collector numbers them in the order it makes records.
	writerKeys []*audit.Writer
	// touched is what touch adds up (see there).
	touched int
}

// foldAfter is how long a success stays in its object's list before it is
// folded into the history.
const foldAfter = 2 * time.Second

// analyzeSkew is how far out of completion order Analyze accepts records.
const analyzeSkew = 2 * time.Second

// errNeedsAllRecords says that the log is out of order beyond the skew.
var errNeedsAllRecords = errors.New("the log needs every record kept")

func newStream(cfg Config, skew time.Duration) *stream {
	s := &stream{cfg: cfg, skew: skew, t: newTotals(cfg)}
	if skew < 0 && cfg.HottestTimeline && cfg.Object == nil {
		s.all = map[*ObjectKey][]*record{}
	}
	return s
}

// add takes one item; in a bounded stream it releases what is older than
// the skew.
func (s *stream) add(it item) {
	s.push(it)
	s.releaseRipe()
}

// addBatch takes items as add takes them one by one, and releases what is
// ripe once they are all in: the same releases in the same order (the
// heap's), but several at a time (releaseRipe). An item older than what
// the one-by-one adds would have released by then is in order here, not
// too late: the stream needs every record (errNeedsAllRecords) less often,
// never with another answer.
func (s *stream) addBatch(items []item) {
	for i := range items {
		s.push(items[i])
	}
	s.releaseRipe()
}

// push puts an item in the heap.
func (s *stream) push(it item) {
	if r := it.r; r != nil && !r.read && int(r.wid) >= len(s.writerKeys) {
		if int(r.wid) != len(s.writerKeys) {
			panic("conflicts: a writer's first record did not reach the stream")
		}
		s.writerKeys = append(s.writerKeys, r.writer)
	}
	if s.only != nil && *it.obj != *s.only {
		return
	}
	if s.released && it.completed.Before(s.frontier) {
		s.inexact = true
		return
	}
	s.seq++
	if it.r != nil {
		it.r.seq = s.seq
	}
	s.heap.push(entryOf(&it, s.seq))
	if it.completed.After(s.newest) {
		s.newest = it.completed
	}
}

// releaseChunk is how many entries releaseRipe takes out of the heap at
// once.
const releaseChunk = 16

// releaseRipe releases, in order, the entries older than the newest
// completion by the skew (none in an unbounded stream). It takes them
// out a chunk at a time and first reads, for the whole chunk, the object
// states and records that their releases read first (touch): those are
// seconds old and out of the processor's cache, and its misses then
// overlap instead of coming one after another, release after release.
func (s *stream) releaseRipe() {
	if s.skew < 0 {
		return
	}
	// The entries' own times are compared, not their records': a record
	// pushed seconds ago is no longer in the processor's cache.
	limit := s.newest.Add(-s.skew)
	lsec, lnsec := limit.Unix(), int32(limit.Nanosecond())
	var chunk [releaseChunk]heapEntry
	for {
		n := 0
		for n < len(chunk) && s.heap.len() > 0 {
			if m := s.heap.min(); m.csec > lsec || m.csec == lsec && m.cnsec >= lnsec {
				break
			}
			chunk[n] = s.heap.pop()
			n++
		}
		if n == 0 {
			return
		}
		s.touch(chunk[:n])
		for i := range n {
			s.release(chunk[i])
		}
	}
}

// touch reads the first words that the releases of es read: each
// object's state (its queue, and the middle of its readers' marks, where
// a get's search starts) and each write's record. What it adds up is
// kept (touched) only so that the reads are made.
func (s *stream) touch(es []heapEntry) {
	sum := 0
	for i := range es {
		e := &es[i]
		if int(e.oid) < len(s.objects) {
			if o := s.objects[e.oid]; o != nil {
				sum += len(o.queue) + o.index
				if n := len(o.lastRead); n > 0 {
					sum += int(o.lastRead[n/2].reader)
				}
				if n := len(o.writers); n > 0 && e.r != nil {
					sum += int(o.writers[n/2].wid)
				}
			}
		}
		if e.r != nil {
			sum += e.r.code
		}
	}
	s.touched += sum
}

// release hands an entry's record to its object, in completion order. The
// 409s that ripen before it are walked first: no success completed since
// (it among them) could have beaten them, and the object may fold its
// older successes when it is released. A get that is no record (see item)
// sets its reader's last read at once, unless its object or the timeline
// keeps records: it is then made one.
func (s *stream) release(e heapEntry) {
	r := e.r
	if r != nil {
		s.frontier = r.completed
	} else {
		s.frontier = time.Unix(e.csec, int64(e.cnsec))
	}
	s.released = true
	for len(s.ripe) > 0 && s.ripe[0].completed.Add(inFlight).Before(s.frontier) {
		s.walkRipe()
	}
	o := s.object(e.oid, e.obj)
	if r == nil {
		if s.all == nil && len(o.queue) == 0 {
			o.setMark(readMark{sec: e.rsec, nsec: e.rnsec, reader: e.rid})
			return
		}
		r = &record{obj: e.obj, oid: e.oid, rid: e.rid, read: true, seq: e.seq,
			received: time.Unix(e.rsec, int64(e.rnsec)), completed: s.frontier}
	}
	if s.all != nil {
		s.all[r.obj] = append(s.all[r.obj], r)
	}
	if !r.read {
		o.released(r, s)
	}
	if len(o.queue) > 0 || !r.read && r.code == 409 {
		o.queue = append(o.queue, r)
		if !r.read && r.code == 409 {
			s.ripe = append(s.ripe, r)
		}
	} else {
		o.step(r, s)
	}
}

// object returns the state of object k, numbered oid, new if it has none.
func (s *stream) object(oid uint32, k *ObjectKey) *objState {
	if int(oid) < len(s.objects) && s.objects[oid] != nil {
		return s.objects[oid]
	}
	if int(oid) >= len(s.objects) {
		s.objects = append(s.objects, make([]*objState, int(oid)+1-len(s.objects))...)
	}
	o := &objState{key: k, index: -1, stream: s, keep: s.only != nil || s.cfg.Object != nil && matchObject(*s.cfg.Object, *k)}
	s.objects[oid] = o
	return o
}

// walkRipe walks the first ripe 409 and its object's records up to the
// next 409.
func (s *stream) walkRipe() {
	r := s.ripe[0]
	s.ripe[0] = nil
	s.ripe = s.ripe[1:]
	o := s.objects[r.oid]
	n := 0
	for n < len(o.queue) && (n == 0 || o.queue[n].read || o.queue[n].code != 409) {
		o.step(o.queue[n], s)
		n++
	}
	// Delete, not reslice: the walked records must not stay reachable
	// through the queue's array.
	o.queue = slices.Delete(o.queue, 0, n)
}

// report releases and walks everything left and fills the report.
func (s *stream) report() *Report {
	for s.heap.len() > 0 {
		s.release(s.heap.pop())
	}
	for len(s.ripe) > 0 {
		s.walkRipe()
	}
	rep := &Report{}
	var keep []*objState
	for _, o := range s.objects {
		if o == nil {
			continue
		}
		o.finish(s.t)
		if o.keep && o.index >= 0 {
			keep = append(keep, o)
		}
	}
	// Several objects match an --object without a namespace: their
	// timelines follow one another, in the order of their first writes.
	slices.SortFunc(keep, func(a, b *objState) int { return cmp.Compare(a.index, b.index) })
	for _, o := range keep {
		rep.Timeline, rep.TimelineObject = append(rep.Timeline, o.timeline...), o.key
	}
	s.t.fill(rep, s.cfg, s.objects, s.writerKeys)
	if s.all != nil && s.cfg.Object == nil && s.cfg.HottestTimeline && len(rep.Objects) > 0 {
		rep.Timeline, rep.TimelineObject = s.timelineOf(rep.Objects[0].Object)
	}
	return rep
}

// timelineOf walks the kept records of one object again for its timeline.
func (s *stream) timelineOf(k ObjectKey) ([]Attempt, *ObjectKey) {
	cfg := s.cfg
	cfg.HottestTimeline = false
	one := newStream(cfg, -1)
	one.only, one.writerKeys = &k, s.writerKeys
	for p, recs := range s.all {
		if *p == k {
			for _, r := range recs {
				one.add(recordItem(r))
			}
		}
	}
	rep := one.report()
	return rep.Timeline, &k
}

// recQueue holds the records not released yet, in the order of recHeap.
// A log is nearly in completion order (its events are written as requests
// complete, a few milliseconds apart at most): a record that sorts at most
// queueReach places before the newest goes into a sorted run (ring), the
// others into a heap; the smaller of their firsts comes out first. Most
// records so cost a comparison or two, not a walk down a heap of
// thousands.
type recQueue struct {
	// ring[head:] is sorted.
	ring []heapEntry
	head int
	heap recHeap
}

// queueReach is how far back from its end the sorted run takes a record.
const queueReach = 32

func (q *recQueue) len() int { return len(q.ring) - q.head + len(q.heap) }

func (q *recQueue) push(e heapEntry) {
	pos := len(q.ring)
	for pos > q.head && e.less(&q.ring[pos-1]) {
		if pos--; len(q.ring)-pos >= queueReach {
			q.heap.push(e)
			return
		}
	}
	q.ring = append(q.ring, heapEntry{})
	copy(q.ring[pos+1:], q.ring[pos:len(q.ring)-1])
	q.ring[pos] = e
}

// min is the first entry; the queue is not empty.
func (q *recQueue) min() *heapEntry {
	if q.fromHeap() {
		return &q.heap[0]
	}
	return &q.ring[q.head]
}

func (q *recQueue) fromHeap() bool {
	return q.head == len(q.ring) || len(q.heap) > 0 && q.heap[0].less(&q.ring[q.head])
}

// pop removes and returns the first entry; the queue is not empty.
func (q *recQueue) pop() heapEntry {
	if q.fromHeap() {
		return q.heap.pop()
	}
	e := q.ring[q.head]
	q.ring[q.head] = heapEntry{}
	q.head++
	// Move the run to the front of its array once half of it is spent.
	if q.head >= 1024 && q.head > len(q.ring)/2 {
		n := copy(q.ring, q.ring[q.head:])
		clear(q.ring[n:])
		q.ring, q.head = q.ring[:n], 0
	}
	return e
}

// recHeap orders records by completion; gets before writes of the same
// instant, as the walk reads them. Its entries carry their keys, so that
// a comparison reads no record (the heap holds seconds of records, more
// than a cache holds).
type recHeap []heapEntry

type heapEntry struct {
	csec, rsec   int64
	cnsec, rnsec int32
	// write is !read: gets (false) come first.
	write bool
	seq   uint64
	// r is the item's record, nil for a get that is none: obj, oid and
	// rid are then all the stream knows of it, with the times above.
	r        *record
	obj      *ObjectKey
	oid, rid uint32
}

func entryOf(it *item, seq uint64) heapEntry {
	return heapEntry{csec: it.completed.Unix(), cnsec: int32(it.completed.Nanosecond()),
		rsec: it.received.Unix(), rnsec: int32(it.received.Nanosecond()), write: it.r != nil && !it.r.read, seq: seq,
		r: it.r, obj: it.obj, oid: it.oid, rid: it.rid}
}

func (a *heapEntry) less(b *heapEntry) bool {
	switch {
	case a.csec != b.csec:
		return a.csec < b.csec
	case a.cnsec != b.cnsec:
		return a.cnsec < b.cnsec
	case a.write != b.write:
		return b.write
	case a.rsec != b.rsec:
		return a.rsec < b.rsec
	case a.rnsec != b.rnsec:
		return a.rnsec < b.rnsec
	}
	return a.seq < b.seq
}

// The heap is 4-ary: half as deep as a binary one, and a node's children
// are next to each other in memory.
func (h *recHeap) push(e heapEntry) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 4
		if !q[i].less(&q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *recHeap) pop() heapEntry {
	q := *h
	e := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q[n] = heapEntry{}
	q = q[:n]
	*h = q
	for i := 0; ; {
		first := 4*i + 1
		if first >= n {
			break
		}
		m := first
		for c := first + 1; c < min(first+4, n); c++ {
			if q[c].less(&q[m]) {
				m = c
			}
		}
		if !q[m].less(&q[i]) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	return e
}
