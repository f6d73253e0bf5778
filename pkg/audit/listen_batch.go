package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// batch is one POST's events, as the log lines passed on: meta[i] is
// where line i ends in lines, and when its event completed; events[i] is
// its event, as Decode reads the line, its strings in lines (or in memory
// of their own), so that the analysis does not read the line again.
type batch struct {
	lines  []byte
	meta   []lineMeta
	events []Event
	newest int64
	// held is the memory of lines and meta, counted in the receiver's
	// budget while the batch is queued or kept.
	held int64
	// While it is read: its items refused (and why, the first
	// MaxRejects), of other stages, dropped for want of memory.
	rejected, other, dropped int64
	rejects                  []Reject
}

type lineMeta struct {
	end int
	// ts is the event's stageTimestamp, in nanoseconds (nanos).
	ts int64
}

// lineMetaBytes and eventBytes are the memory of one lineMeta and one
// Event.
const (
	lineMetaBytes = int64(unsafe.Sizeof(lineMeta{}))
	eventBytes    = int64(unsafe.Sizeof(Event{}))
)

// Memory kept for the next batches: at most freeBodies bodies of up to
// maxFreeBody bytes, freeBatches batches whose lines took up to
// maxFreeBody. A reservation that does not fit gives it back first
// (evict).
const (
	freeBodies  = 4
	freeBatches = 8
	maxFreeBody = 1 << 20
)

// maxScanners is how many batches are read at once at most (one a core):
// reading a body from the network is not bounded by it, only the
// scanning once it is in.
const maxScanners = 2

// memoBytes is the most a scanner's memo holds: its entries, each a value
// of at most memoMax bytes.
const memoBytes = memoBuckets * memoWays * (memoMax + int64(unsafe.Sizeof(memoEntry{})))

// budget counts the memory a receiver holds, up to max.
type budget struct {
	max        int64
	held, peak atomic.Int64
}

// take counts n more bytes held, unless that passes max.
func (b *budget) take(n int64) bool { return b.takeUpTo(n, n) == n }

// takeUpTo counts up to want more bytes held, at least need, as much as
// max allows; it returns how many (0 when not even need fits).
func (b *budget) takeUpTo(need, want int64) int64 {
	for {
		h := b.held.Load()
		n := min(want, b.max-h)
		if n < need {
			return 0
		}
		if b.held.CompareAndSwap(h, h+n) {
			for p := b.peak.Load(); h+n > p && !b.peak.CompareAndSwap(p, h+n); p = b.peak.Load() {
			}
			return n
		}
	}
}

func (b *budget) give(n int64) { b.held.Add(-n) }

// reserve counts n more bytes held, giving back the memory kept for the
// next batches first if need be.
func (l *Listener) reserve(n int64) bool { return l.reserveUpTo(n, n) == n }

// reserveUpTo is takeUpTo, giving back the memory kept for the next
// batches first if need be.
func (l *Listener) reserveUpTo(need, want int64) int64 {
	if n := l.mem.takeUpTo(need, want); n > 0 || need == 0 {
		return n
	}
	l.evict()
	return l.mem.takeUpTo(need, want)
}

// evict gives back the memory kept for the next batches.
func (l *Listener) evict() {
	for {
		select {
		case buf := <-l.bodies:
			l.mem.give(int64(cap(buf)))
		case b := <-l.batches:
			l.mem.give(b.held)
		default:
			return
		}
	}
}

// growFor returns s with room for n more elements of size bytes each,
// its new memory counted: twice the capacity, or as much as the bound
// allows; false when it does not allow n more.
func growFor[T any](l *Listener, s []T, n int, size int64, held *int64) ([]T, bool) {
	if len(s)+n <= cap(s) {
		return s, true
	}
	need := int64(len(s)+n-cap(s)) * size
	want := max(int64(cap(s))*size, 64<<10, need)
	r := l.reserveUpTo(need, want)
	got := r / size * size
	l.mem.give(r - got)
	if got < need {
		l.mem.give(got)
		return s, false
	}
	*held += got
	grown := make([]T, len(s), cap(s)+int(got/size))
	copy(grown, s)
	return grown, true
}

func (l *Listener) getBatch() *batch {
	select {
	case b := <-l.batches:
		return b
	default:
		return &batch{newest: math.MinInt64}
	}
}

// putBatch keeps b's memory for another batch, or gives it back.
func (l *Listener) putBatch(b *batch) {
	clear(b.events)
	b.lines, b.meta, b.events, b.rejects = b.lines[:0], b.meta[:0], b.events[:0], nil
	b.newest, b.rejected, b.other, b.dropped = math.MinInt64, 0, 0, 0
	if cap(b.lines) <= maxFreeBody {
		select {
		case l.batches <- b:
			return
		default:
		}
	}
	l.mem.give(b.held)
}

func (l *Listener) getBody() []byte {
	select {
	case buf := <-l.bodies:
		return buf[:0]
	default:
		return nil
	}
}

func (l *Listener) putBody(buf []byte) {
	if cap(buf) <= maxFreeBody {
		select {
		case l.bodies <- buf[:0]:
			return
		default:
		}
	}
	l.mem.give(int64(cap(buf)))
}

// readBatch reads the EventList body into b: each item the decoder
// would read as an event of stage ResponseComplete or Panic becomes a
// line; one it would refuse is counted, and the first MaxRejects say
// why. The error is that of a body that is not an EventList.
func (l *Listener) readBatch(b *batch, body []byte) error {
	memo := <-l.scanners
	defer func() { l.scanners <- memo }()
	index := 0
	return eachItem(body, memo, func(it *listItem) {
		l.addItem(b, it, memo, index, body)
		index++
	}, func() {
		b.lines, b.meta, b.events, b.rejects = b.lines[:0], b.meta[:0], b.events[:0], nil
		b.newest, b.rejected, b.other, b.dropped = math.MinInt64, 0, 0, 0
		index = 0
	})
}

// addItem appends item index's line to b, if the decoder will read it as
// an event to pass on.
func (l *Listener) addItem(b *batch, it *listItem, memo *valueMemo, index int, body []byte) {
	n := lineLen(it.raw)
	if len(it.raw) > MaxLineBytes || n-1 > MaxLineBytes {
		b.reject(index, fmt.Sprintf("longer than %d bytes", MaxLineBytes))
		return
	}
	// An item read where it stands is judged before its line is made.
	read := it.scanned && (it.typeMeta == 0 || bytes.HasPrefix(it.raw, []byte(`{"kind":`)))
	if read {
		if msg, ev := scannedEvent(it); !b.keep(index, msg, ev) {
			return
		}
	}
	var ok bool
	if b.lines, ok = growFor(l, b.lines, n, 1, &b.held); ok {
		if b.meta, ok = growFor(l, b.meta, 1, lineMetaBytes, &b.held); ok {
			b.events, ok = growFor(l, b.events, 1, eventBytes, &b.held)
		}
	}
	if !ok {
		b.dropped++
		return
	}
	start := len(b.lines)
	b.lines = appendLine(b.lines, it.raw)
	line := b.lines[start : len(b.lines)-1]
	b.events = append(b.events, it.ev)
	ev := &b.events[len(b.events)-1]
	if read {
		// Its strings move from the body, which the next request
		// reuses, to the line.
		from, to := it.raw, line
		if len(line) != len(it.raw) {
			// kind and apiVersion put first: the item's bytes after its
			// '{' end the line.
			from, to = it.raw[1:], line[len(line)-(len(it.raw)-1):]
		}
		ev.moveStrings(from, to, body)
	} else {
		var msg string
		if _, msg = itemLineEvent(line, memo, ev); !b.keep(index, msg, ev) {
			b.lines, b.events = b.lines[:start], b.events[:len(b.events)-1]
			return
		}
	}
	ts := nanos(ev.StageTimestamp)
	b.meta = append(b.meta, lineMeta{end: len(b.lines), ts: ts})
	b.newest = max(b.newest, ts)
}

// moveStrings points ev's strings that lie in from at the same bytes of
// to, a copy of from, and copies those that lie elsewhere in body (none
// should): an event read where its item stood in the body, once the item
// is copied into its line.
func (ev *Event) moveStrings(from, to, body []byte) {
	for _, s := range ev.strings() {
		if off, ok := offsetIn(*s, from); ok {
			*s = unsafe.String(&to[off], len(*s))
		} else if _, ok := offsetIn(*s, body); ok {
			*s = strings.Clone(*s)
		}
	}
}

// offsetIn is where s starts in b, if its bytes are b's.
func offsetIn(s string, b []byte) (int, bool) {
	if len(s) == 0 || len(b) == 0 {
		return 0, false
	}
	off := uintptr(unsafe.Pointer(unsafe.StringData(s))) - uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return int(off), off < uintptr(len(b)) && uintptr(len(s)) <= uintptr(len(b))-off
}

// keep says whether an item's event is passed on: not when the decoder
// refuses its line (msg, counted and kept among the first), nor when it
// is of another stage (counted).
func (b *batch) keep(index int, msg string, ev *Event) bool {
	switch {
	case msg != "":
		b.reject(index, msg)
		return false
	case ev.Stage != StageResponseComplete && ev.Stage != StagePanic:
		b.other++
		return false
	}
	return true
}

// scannedEvent is the event of an item the list's scanner read where it
// stands, whose line is the item with kind and apiVersion put first (it
// names neither: typeMeta 0) or the item itself (it starts with its
// kind): that line's event already, once its kind and apiVersion are
// checked as the decoder checks them. FuzzListenItem holds this to
// Decode.
func scannedEvent(it *listItem) (string, *Event) {
	kind, apiVersion := it.kind, it.apiVersion
	if it.typeMeta == 0 {
		kind, apiVersion = "Event", "audit.k8s.io/v1"
	}
	if err := check(kind, apiVersion); err != nil {
		return err.Error(), nil
	}
	return "", &it.ev
}

// itemLineEvent reads an item's line as the decoder does (block.line),
// into ev: the event, or why the decoder would refuse the line.
func itemLineEvent(line []byte, memo *valueMemo, ev *Event) (*Event, string) {
	kind, apiVersion, ok := scanEvent(unsafe.String(unsafe.SliceData(line), len(line)), ev, memo)
	if !ok {
		var w wireEvent
		if err := json.Unmarshal(line, &w); err != nil {
			return nil, "not an audit event: " + err.Error()
		}
		kind, apiVersion, *ev = w.Kind, w.APIVersion, w.event()
	}
	if err := check(kind, apiVersion); err != nil {
		return nil, err.Error()
	}
	return ev, ""
}

// nanos is t in nanoseconds since 1970, within ±2⁶² (some 146 years):
// far enough for any event, near enough to subtract a window from.
func nanos(t time.Time) int64 {
	const lim, sec = 1 << 62, int64(time.Second)
	switch s := t.Unix(); {
	case s < -lim/sec:
		return -lim
	case s > lim/sec:
		return lim
	}
	return t.Unix()*1e9 + int64(t.Nanosecond())
}

func (b *batch) reject(index int, msg string) {
	b.rejected++
	if len(b.rejects) < MaxRejects {
		b.rejects = append(b.rejects, Reject{Reason: fmt.Sprintf("item %d: %s", index, msg)})
	}
}

// lateWindow drops, once the analysis's copy has stopped (on), the events
// that complete more than window before the newest passed on: the
// analysis, which accepts events that far out of order, then never needs
// the copy for them.
type lateWindow struct {
	window int64
	on     bool
	newest int64
}

// unsafeFilter drops b's late lines (when on) and returns the newest
// completion once b is passed on, and how many it dropped. Listener.mu
// is held: batches are filtered in the order they are queued.
func (w *lateWindow) unsafeFilter(b *batch) (newest, late int64) {
	if !w.on {
		return max(w.newest, b.newest), 0
	}
	newest = w.newest
	out, start := 0, 0
	kept, events := b.meta[:0], b.events[:0]
	for i, m := range b.meta {
		line := b.lines[start:m.end]
		start = m.end
		if newest != math.MinInt64 && m.ts < newest-w.window {
			late++
			continue
		}
		newest = max(newest, m.ts)
		moved := b.lines[out : out+len(line)]
		ev := b.events[i]
		ev.moveStrings(line, moved, nil)
		copy(moved, line)
		out += len(line)
		kept, events = append(kept, lineMeta{end: out, ts: m.ts}), append(events, ev)
	}
	clear(b.events[len(events):])
	b.lines, b.meta, b.events = b.lines[:out], kept, events
	return newest, late
}

// enqueue queues b's lines for the source, after the late window; it
// returns how many events it passed on and dropped as late, and false
// when the queue is full or closed: b, its late events dropped, is then
// the caller's to count and put back.
func (l *Listener) enqueue(b *batch) (passed, late int64, queued bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, 0, false
	}
	newest, late := l.late.unsafeFilter(b)
	passed = int64(len(b.meta))
	if passed == 0 {
		l.late.newest = newest
		l.putBatch(b)
		return 0, late, true
	}
	select {
	case l.queue <- b:
	default:
		return 0, late, false
	}
	l.late.newest = newest
	if waiting := int64(len(l.queue)); waiting > l.stats.peakQueued.Load() {
		l.stats.peakQueued.Store(waiting)
	}
	return passed, late, true
}

// spoolStopped is told by the analysis's Spool that its copy stopped:
// late events are dropped from now on.
func (l *Listener) spoolStopped(reason string) {
	l.mu.Lock()
	l.late.on = true
	l.mu.Unlock()
	l.stats.mu.Lock()
	l.stats.spoolStopped = reason
	l.stats.mu.Unlock()
}
