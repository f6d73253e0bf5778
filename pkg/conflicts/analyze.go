package conflicts

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// agg accumulates one writer's figures.
type agg struct {
	Tally
	// sharing is the evidence that several clients share the writer: its
	// attempts' user agents and overlapping attempts. lastReader is the
	// reader of its last attempt, whose user agent sharing has seen.
	sharing    audit.Sharing
	lastReader *readerKey
	lostTo     map[string]int
	causes     map[Cause]int
	// fieldsLost are the fields of its apply conflicts, per owner.
	fieldsLost map[string][]string
	// objects counts the objects written.
	objects int
	// conflictTime and retryTime are the request times (received to
	// completed) of the writer's 409s and of its retries.
	conflictTime, retryTime time.Duration
}

func newAgg() *agg {
	return &agg{lostTo: map[string]int{}, causes: map[Cause]int{}}
}

// sawReader notes the user agent of an attempt made as reader.
func (a *agg) sawReader(reader *readerKey) {
	if reader == a.lastReader {
		return
	}
	a.lastReader = reader
	a.sharing.SawUserAgent(reader.userAgent)
}

// writerState follows one writer on one object: its last attempt (not the
// record: only what a give-up or a retry needs) and its chain. An object
// keeps it only while the writer's last attempt is a 409 (a retry chain
// may go on), or for every writer when the object's timeline is kept.
type writerState struct {
	lastCompleted time.Time
	writer        *audit.Writer
	reader        *readerKey
	// wid is writer's number (record.wid).
	wid uint32
	// precond and force are the last attempt's precondition and apply
	// force: a retry that re-read may send a newer precondition, or force.
	precond string
	force   bool
	// cadence is how long the writer waited, before the chain's first
	// attempt, since its previous attempt on the object completed (0:
	// none, or it had not completed): the writer's own pace, which its next
	// periodic write keeps and a retry does not.
	cadence   time.Duration
	attempted bool
	conflict  bool
	// shown says whether the filter shows the last attempt.
	shown       bool
	chain, step int32
	timelineI   int32
}

// writerMark is a writer of an object, by number, and its last attempt.
type writerMark struct {
	wid  uint32
	last attemptMark
}

// attemptMark is when a writer's last attempt on an object completed, as
// Unix nanoseconds: one number per writer and object, the most of them a
// log holds.
type attemptMark int64

// writerCount is the number of 409s of one writer (by number) on one object.
type writerCount struct {
	writer uint32
	n      int32
}

// readMark is when a reader (by number) last read an object: its
// request's receive time as seconds and nanoseconds, which order as
// time.Time does without its pointer to a location.
type readMark struct {
	sec    int64
	nsec   int32
	reader uint32
}

func (m readMark) at() time.Time { return time.Unix(m.sec, int64(m.nsec)) }

// objState is one object's walk: its records are stepped through in
// completion order.
type objState struct {
	// The fields read for most records come first, so that a record
	// released reads few of the state's cache lines.

	// queue holds released records waiting for a 409 before them to ripen.
	queue []*record
	// lastRead is each reader's last get of the object, by reader number.
	lastRead []readMark
	// oldest is the oldest of lastRead (its reader is not kept) when
	// oldestKnown; setRead keeps it, fold reads it.
	oldest      readMark
	oldestKnown bool
	// keep says that the object's timeline is kept (--object, or the
	// hottest object's when its records are read again).
	keep bool
	// hasSuccess and noResult decide, at the end, between exact winners
	// (every success has its resulting resourceVersion) and winners by
	// time; until then pending keeps both answers.
	hasSuccess, noResult bool
	// index numbers the objects in the order of their first write.
	index int
	// writers are the writers that attempted a write, by number, sorted,
	// each with when its last attempt on the object completed: one slice,
	// so that an attempt reads one place of the object's state for both.
	writers []writerMark
	// chains are the writers whose last attempt was a 409 (all writers,
	// when keep), by number.
	chains map[uint32]*writerState
	stream *stream
	// successes are the released successes not folded, in order;
	// successAt[i] is successes[i]'s completion and writer, which fold
	// reads without going to the record.
	successes []*record
	successAt []pastSuccess
	// versions are the resulting versions of successAt and history, kept
	// while every success has one (nil after noResult): most logs have
	// none, and an object's state is most of the stream's memory.
	versions *versions
	key      *ObjectKey
	// history holds the successes folded out of successes that a later
	// 409 may still need, oldest first, at most maxHistory: while every
	// success has its resulting resourceVersion (winners by version, whose
	// 409s may name any earlier version), the last ones; after that (winners
	// by time), those completed after the oldest last get of a reader of the
	// object, and the last one. cut is the latest completion dropped from
	// it (versions.cut the last dropped success's resulting version).
	history []pastSuccess
	cut     time.Time
	// shownIDs are the writers with an attempt Config.Filter shows, by
	// number, sorted; kept only with a filter (see shownWriters).
	shownIDs []uint32
	// worst counts the 409s of each writer that had one, by number, sorted.
	worst []writerCount
	// settledExact says that pending 409s beyond maxPending were settled
	// by version: a success without a resulting version after that makes
	// the stream inexact.
	settledExact bool
	pending      []pendingConflict
	timeline     []Attempt
	tally        Tally
}

// versions are an object's successes' resulting versions as rvNumber
// reads them: success[i] is successAt[i]'s, history[i] history[i]'s, cut
// that of the last success dropped from the history.
type versions struct {
	success, history []uint64
	cut              uint64
}

// pastSuccess is a folded success: when it completed (as readMark keeps
// it), and who wrote (by number).
type pastSuccess struct {
	sec    int64
	nsec   int32
	writer uint32
}

func (p pastSuccess) completed() time.Time { return time.Unix(p.sec, int64(p.nsec)) }

// after says whether p completed after m's read.
func (p pastSuccess) after(m readMark) bool {
	return p.sec > m.sec || p.sec == m.sec && p.nsec > m.nsec
}

// maxHistory bounds an object's history; a 409 that needs a success
// dropped beyond it makes the stream inexact.
const maxHistory = 128

// outcome is a 409's cause and winners.
type outcome struct {
	cause Cause
	// lostTo names the winners, once per winning write.
	lostTo []string
	// owners are an apply conflict's owners and their fields.
	owners []FieldOwner
}

type pendingConflict struct {
	r           *record
	exact, time outcome
	// timeCut says that time needs a success dropped from the history.
	timeCut   bool
	timelineI int
}

// released tracks a write as it is released, before it is walked: 409s
// look ahead at the successes that complete within inFlight.
func (o *objState) released(r *record, s *stream) {
	if o.index < 0 {
		o.index = s.nobjs
		s.nobjs++
	}
	if r.code/100 != 2 {
		return
	}
	o.hasSuccess = true
	o.successes = append(o.successes, r)
	o.successAt = append(o.successAt, pastSuccess{sec: r.completed.Unix(), nsec: int32(r.completed.Nanosecond()), writer: r.wid})
	if !o.noResult && r.result != "" {
		rv, ok := rvNumber(r.result)
		if !ok && !o.keep && s.skew >= 0 {
			// A version too long for a number cannot be folded.
			s.inexact = true
		}
		if o.versions == nil {
			o.versions = &versions{}
		}
		o.versions.success = append(o.versions.success, rv)
	}
	if r.result == "" && !o.noResult {
		o.noResult = true
		o.versions = nil
		if o.settledExact {
			s.inexact = true
		}
		for _, p := range o.pending {
			o.settle(p, p.time, p.timeCut, s.t)
		}
		o.pending = nil
	}
	if !o.keep && s.skew >= 0 {
		o.fold(s.frontier.Add(-foldAfter))
	}
}

// rvNumber reads a resourceVersion as CompareResourceVersion orders it: a
// decimal number without leading zeros, which orders as its value. A
// string it refuses (or "") is 0, older than none and newer than none;
// ok is false for a well-formed version too long for a uint64.
func rvNumber(v string) (n uint64, ok bool) {
	if v == "" || v[0] == '0' {
		return 0, true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, true
		}
		if i == 19 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// fold moves the successes completed before horizon into the history,
// and drops from it what no reader can need.
func (o *objState) fold(horizon time.Time) {
	hsec, hnsec := horizon.Unix(), int32(horizon.Nanosecond())
	n := 0
	for n < len(o.successAt) && (o.successAt[n].sec < hsec || o.successAt[n].sec == hsec && o.successAt[n].nsec < hnsec) {
		n++
	}
	if n == 0 {
		return
	}
	o.history = append(o.history, o.successAt[:n]...)
	o.successAt = slices.Delete(o.successAt, 0, n)
	o.successes = slices.Delete(o.successes, 0, n)
	if v := o.versions; v != nil {
		v.history = append(v.history, v.success[:n]...)
		v.success = slices.Delete(v.success, 0, n)
	}
	drop := 0
	switch {
	case !o.noResult:
		// Winners by version: a later 409 may name any earlier version.
	case len(o.lastRead) > 0:
		oldest := o.oldestRead()
		for drop < len(o.history)-1 && !o.history[drop].after(oldest) {
			drop++
		}
	default:
		drop = len(o.history) - 1
	}
	drop = max(drop, len(o.history)-maxHistory)
	if drop > 0 {
		if c := o.history[drop-1].completed(); c.After(o.cut) {
			o.cut = c
		}
		o.history = slices.Delete(o.history, 0, drop)
		if v := o.versions; v != nil {
			v.cut = v.history[drop-1]
			v.history = slices.Delete(v.history, 0, drop)
		}
	}
}

// step walks one record: a get or a write attempt.
func (o *objState) step(r *record, s *stream) {
	if !r.read {
		o.attempt(r, s.t)
		return
	}
	o.setRead(r.rid, r.received)
}

// findReader finds reader's mark in lastRead (sorted by reader), or where
// it would go: a search written out, since the generic one's comparison
// is a call per step and runs for every get.
func (o *objState) findReader(reader uint32) (int, bool) {
	lo, hi := 0, len(o.lastRead)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.lastRead[m].reader < reader {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(o.lastRead) && o.lastRead[lo].reader == reader
}

// findWriter finds wid's mark in writers, or where it would go, as
// findReader does in lastRead.
func (o *objState) findWriter(wid uint32) (int, bool) {
	lo, hi := 0, len(o.writers)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.writers[m].wid < wid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(o.writers) && o.writers[lo].wid == wid
}

// readAt is when reader last read the object.
func (o *objState) readAt(reader uint32) (time.Time, bool) {
	i, ok := o.findReader(reader)
	if !ok {
		return time.Time{}, false
	}
	return o.lastRead[i].at(), true
}

func (o *objState) setRead(reader uint32, at time.Time) {
	o.setMark(readMark{sec: at.Unix(), nsec: int32(at.Nanosecond()), reader: reader})
}

// setMark sets m's reader's last read of the object to m.
func (o *objState) setMark(m readMark) {
	reader := m.reader
	i, ok := o.findReader(reader)
	if ok {
		old := o.lastRead[i]
		o.lastRead[i] = m
		if o.oldestKnown && !m.before(o.oldest) && !old.before(o.oldest) && !o.oldest.before(old) {
			// The oldest read moved on: found again when needed.
			o.oldestKnown = false
		}
	} else {
		o.lastRead = slices.Insert(o.lastRead, i, m)
		if len(o.lastRead) == 1 {
			o.oldest, o.oldestKnown = m, true
		}
	}
	if o.oldestKnown && m.before(o.oldest) {
		o.oldest = m
	}
}

// before orders marks by time.
func (m readMark) before(n readMark) bool {
	return m.sec < n.sec || m.sec == n.sec && m.nsec < n.nsec
}

// oldestRead is the oldest of lastRead, which is not empty.
func (o *objState) oldestRead() readMark {
	if !o.oldestKnown {
		o.oldest = o.lastRead[0]
		for _, m := range o.lastRead[1:] {
			if m.before(o.oldest) {
				o.oldest = m
			}
		}
		o.oldestKnown = true
	}
	return o.oldest
}

// state returns the writer's state on the object and whether chains
// holds it, and counts the writer among the object's. A writer without
// one gets a new state in the stream's scratch: most attempts succeed,
// and a success's state is not kept (attempt keeps it if it must).
// The writer's previous attempt on the object is returned too (ok false
// for its first), and r becomes its last.
func (o *objState) state(r *record) (st *writerState, kept bool, prev attemptMark, ok bool) {
	i, ok := o.findWriter(r.wid)
	if !ok {
		o.writers = slices.Insert(o.writers, i, writerMark{wid: r.wid})
	}
	w := &o.writers[i]
	prev, w.last = w.last, attemptMark(r.completed.UnixNano())
	if st := o.chains[r.wid]; st != nil {
		return st, true, prev, ok
	}
	st = &o.stream.scratch
	*st = writerState{writer: r.writer, wid: r.wid}
	return st, false, prev, ok
}

// isRetry says whether r, the writer's next attempt after its 409 st,
// retries it. It must come within the retry window; then:
//
//   - after a re-read of the object, the re-read decides: a retry loop
//     re-reads right after the 409, a periodic writer at its next period,
//     so the re-read must come sooner than half the writer's own pace on
//     the object (or the writer have no pace yet). The re-read, not the
//     write, is timed: a slow get does not make a retry late;
//   - without one, a new precondition or an apply that now forces is a
//     retry whatever the pace;
//   - an update sent again with the same precondition comes from the same
//     stale read: not a retry;
//   - a blind re-send without a precondition (a patch, an apply) is a
//     retry when sooner than half the writer's pace, or with no pace yet.
//
// reread says whether the writer re-read.
func (o *objState) isRetry(r *record, st *writerState) (retry, reread bool) {
	rd, ok := o.readAt(r.rid)
	reread = ok && rd.After(st.lastCompleted)
	if !st.conflict {
		return false, reread
	}
	gap := r.received.Sub(st.lastCompleted)
	if gap > o.stream.cfg.RetryWindow {
		return false, reread
	}
	return retryRule(reread, rd.Sub(st.lastCompleted), gap, st.cadence,
		r.precond != "" && st.precond != "" && r.precond != st.precond || r.force && !st.force,
		r.precond != "" && r.precond == st.precond), reread
}

// retryRule is isRetry's rule, once the attempt is within the window:
// readGap and gap are the re-read's and the attempt's time since the
// 409, pace the writer's own pace (0 or less: none yet), evidence a new
// precondition or force, stale the same precondition again.
func retryRule(reread bool, readGap, gap, pace time.Duration, evidence, stale bool) bool {
	soon := func(d time.Duration) bool { return pace <= 0 || 2*d < pace }
	switch {
	case reread:
		return soon(readGap)
	case evidence:
		return true
	case stale:
		return false
	}
	return soon(gap)
}

func (o *objState) attempt(r *record, t *totals) {
	st, kept, prev, seen := o.state(r)
	retry, reread := false, false
	if st.attempted {
		retry, reread = o.isRetry(r, st)
	}
	if st.conflict && !retry {
		o.giveUp(st, t)
	}
	if retry {
		st.step++
		if st.step == 2 && r.shown {
			t.add(o, r.wid, r.reader, r.received, true, fRetryChains)
		}
	} else {
		st.chain, st.step, st.cadence = st.chain+1, 1, 0
		if seen {
			st.cadence = time.Duration(r.received.UnixNano() - int64(prev))
		}
	}
	if !r.shown {
		t.unshown++
	} else {
		o.shownBy(r.wid)
		t.add(o, r.wid, r.reader, r.received, true, fAttempts).spent(r, retry)
		if seen && audit.Overlaps(time.Unix(0, int64(prev)), r.received) {
			t.overlap(r.wid)
		}
	}
	st.conflict, st.shown = r.code == 409, r.shown
	st.attempted, st.lastCompleted, st.reader = true, r.completed, r.reader
	st.precond, st.force = r.precond, r.force
	timelineI := -1
	if o.keep {
		if r.shown {
			timelineI = len(o.timeline)
			o.timeline = append(o.timeline, Attempt{AuditID: r.auditID, Replica: r.host, Received: r.received, Completed: r.completed, Writer: t.writerName(r.writer),
				Verb: r.verb, Subresource: r.sub, Code: r.code, Precondition: r.precond, Result: r.result,
				Chain: int(st.chain), Step: int(st.step), Reread: reread, Force: r.force})
		}
		st.timelineI = int32(timelineI)
	}
	switch {
	case r.code == 409:
		o.conflict(r, timelineI, t)
	case r.code/100 == 2 && r.shown:
		t.add(o, r.wid, r.reader, r.received, true, fSuccesses)
	}
	// Without a timeline, only a chain that may go on needs its state.
	switch {
	case !st.conflict && !o.keep:
		if kept {
			delete(o.chains, r.wid)
		}
	case !kept:
		if o.chains == nil {
			o.chains = map[uint32]*writerState{}
		}
		p := *st
		o.chains[r.wid] = &p
	}
}

// shownBy notes that the writer wid made an attempt the filter shows on
// the object; without a filter, its writers are all shown.
func (o *objState) shownBy(wid uint32) {
	if o.stream.cfg.Filter == nil {
		return
	}
	if i, ok := slices.BinarySearch(o.shownIDs, wid); !ok {
		o.shownIDs = slices.Insert(o.shownIDs, i, wid)
	}
}

// shownWriters calls fn with each writer, by number, with an attempt the
// filter shows on the object, and returns how many there are.
func (o *objState) shownWriters(fn func(wid uint32)) int {
	if o.stream.cfg.Filter != nil {
		for _, id := range o.shownIDs {
			fn(id)
		}
		return len(o.shownIDs)
	}
	for _, w := range o.writers {
		fn(w.wid)
	}
	return len(o.writers)
}

// conflict finds the winners and cause of the 409 r. Whether they are
// found by resourceVersion depends on every success of the object, so
// until one without a resulting version is seen, both answers are kept.
func (o *objState) conflict(r *record, timelineI int, t *totals) {
	cand := o.candidates(r)
	byTime, cut := o.byTime(r, cand)
	p := pendingConflict{r: r, timelineI: timelineI, time: o.outcome(r, byTime), timeCut: cut}
	if r.precond == "" || o.noResult {
		o.settle(p, p.time, p.timeCut, t)
		return
	}
	p.exact = o.outcome(r, o.byVersion(r, cand))
	o.pending = append(o.pending, p)
	if len(o.pending) > maxPending && !o.keep && o.stream.skew >= 0 {
		// An object whose successes have all had their resulting versions
		// so far will most likely go on so: settle the oldest by version,
		// and follow the log again if that proves wrong.
		o.settledExact = true
		o.settle(o.pending[0], o.pending[0].exact, false, t)
		o.pending = slices.Delete(o.pending, 0, 1)
	}
}

// maxPending bounds the 409s an object keeps both answers for (see
// objState.pending) in a bounded stream.
const maxPending = 16

// settle counts the 409 with the outcome out; cut says that out needs a
// success dropped from the history: the stream cannot tell.
func (o *objState) settle(p pendingConflict, out outcome, cut bool, t *totals) {
	if cut {
		o.stream.inexact = true
	}
	if p.timelineI >= 0 {
		a := &o.timeline[p.timelineI]
		a.Cause, a.LostTo, a.FieldOwners = out.cause, out.lostTo, out.owners
	}
	if !p.r.shown {
		return
	}
	i, ok := slices.BinarySearchFunc(o.worst, p.r.wid, func(c writerCount, w uint32) int { return cmp.Compare(c.writer, w) })
	if !ok {
		o.worst = slices.Insert(o.worst, i, writerCount{writer: p.r.wid})
	}
	o.worst[i].n++
	t.conflict(o, p.r, out)
}

// finish settles what waits for the end of the log: the pending 409s and
// the writers whose last attempt was a 409.
func (o *objState) finish(t *totals) {
	for _, p := range o.pending {
		if o.hasSuccess && !o.noResult {
			o.settle(p, p.exact, false, t)
		} else {
			o.settle(p, p.time, p.timeCut, t)
		}
	}
	o.pending = nil
	for _, st := range o.chains {
		if st.conflict {
			o.giveUp(st, t)
		}
	}
}

func (o *objState) giveUp(st *writerState, t *totals) {
	st.conflict = false
	if !st.shown {
		return
	}
	// The attempt's receive time is already in the summary's first and last.
	t.add(o, st.wid, st.reader, time.Time{}, false, fGiveUps)
	if o.keep && st.timelineI >= 0 {
		o.timeline[st.timelineI].GiveUp = true
	}
}

// inFlight is how long after a 409 completed a success may complete and
// still have committed before the 409 was checked: audit events of two
// racing requests are written in either order.
const inFlight = time.Second

// winnerSet is the successful writes a 409 lost to: the writers of the
// folded ones, then the kept ones.
type winnerSet struct {
	past   []*audit.Writer
	recent []*record
}

// candidates are the kept successes that may have beaten r: received
// before r completed, and completed by r's completion plus inFlight.
func (o *objState) candidates(r *record) []*record {
	hi := len(o.successes)
	for hi > 0 && o.successes[hi-1].completed.After(r.completed.Add(inFlight)) {
		hi--
	}
	var cand []*record
	for _, s := range o.successes[:hi] {
		if s.received.Before(r.completed) {
			cand = append(cand, s)
		}
	}
	return cand
}

// byVersion are the last successes whose resulting resourceVersion is
// newer than r's precondition: of the candidates and, when all of them
// are, of the history (its successes completed a second before r, at
// least, so they were received before r completed).
func (o *objState) byVersion(r *record, cand []*record) winnerSet {
	i := len(cand)
	for i > 0 {
		c, err := resourceversion.CompareResourceVersion(cand[i-1].result, r.precond)
		if err != nil || c <= 0 {
			break
		}
		i--
	}
	ws := winnerSet{recent: cand[i:]}
	pre, ok := rvNumber(r.precond)
	if i > 0 || pre == 0 || !ok {
		// A precondition too long for a number is newer than every folded
		// version; one CompareResourceVersion refuses is newer than none.
		return ws
	}
	// Only called while every success has its version (versions is set
	// once there is one).
	v := o.versions
	if v == nil {
		return ws
	}
	j := len(o.history)
	for j > 0 && v.history[j-1] > pre {
		j--
	}
	if j == 0 && v.cut > pre {
		o.stream.inexact = true
	}
	for _, p := range o.history[j:] {
		ws.past = append(ws.past, o.stream.writerKeys[p.writer])
	}
	return ws
}

// byTime are the successes since the writer's last get, or the last
// success alone when no get of the writer's is in the log; cut says that
// some may have been dropped from the history.
func (o *objState) byTime(r *record, cand []*record) (ws winnerSet, cut bool) {
	base, ok := o.readAt(r.rid)
	if !ok {
		for i := len(cand) - 1; i >= 0; i-- {
			if !cand[i].completed.After(r.completed) {
				return winnerSet{recent: cand[i : i+1]}, false
			}
		}
		// Every folded success is older than r: the last one is the last
		// success before r.
		if len(o.history) > 0 {
			return winnerSet{past: []*audit.Writer{o.stream.writerKeys[o.history[len(o.history)-1].writer]}}, false
		}
		return winnerSet{}, false
	}
	i := len(cand)
	for i > 0 && cand[i-1].completed.After(base) {
		i--
	}
	ws = winnerSet{recent: cand[i:]}
	if i == 0 {
		j := len(o.history)
		for j > 0 && o.history[j-1].completed().After(base) {
			j--
		}
		cut = j == 0 && o.cut.After(base)
		for _, p := range o.history[j:] {
			ws.past = append(ws.past, o.stream.writerKeys[p.writer])
		}
	}
	return ws, cut
}

func (o *objState) outcome(r *record, ws winnerSet) outcome {
	out := outcome{cause: classify(r, ws)}
	if out.cause == ApplyConflict {
		out.owners = ApplyConflictOwners(r.message)
		for _, ow := range out.owners {
			out.lostTo = append(out.lostTo, "manager "+ow.Manager)
		}
		return out
	}
	t := o.stream.t
	for _, w := range ws.past {
		out.lostTo = append(out.lostTo, t.writerName(w))
	}
	for _, win := range ws.recent {
		out.lostTo = append(out.lostTo, t.writerName(win.writer))
	}
	return out
}

// matchObject reports whether the object k is the one the user named in
// want (Config.Object), its type resolved with kubectl's rules
// (apitypes.ParseOfflineType: short names, singular, kind, .group).
func matchObject(want, k ObjectKey) bool {
	if want.Name != k.Name || want.Namespace != "" && want.Namespace != k.Namespace {
		return false
	}
	return apitypes.ParseOfflineType(want.Resource).Matches(k.Group, k.Resource)
}

// applyFailed and alreadyExists are what classify reads in a 409's
// message: the collector keeps the message of a 409 only when one holds.
func applyFailed(msg string) bool { return strings.HasPrefix(msg, "Apply failed with") }

func alreadyExists(verb, msg string) bool {
	return verb == "create" && strings.HasSuffix(msg, "already exists")
}

// classify names the cause of the 409 r, lost to winners.
func classify(r *record, ws winnerSet) Cause {
	switch {
	case r.details == "resourcequotas" && r.verb == "create":
		return Quota
	case applyFailed(r.message):
		return ApplyConflict
	case r.obj.Group == "coordination.k8s.io" && r.obj.Resource == "leases":
		return LeaseContention
	case r.verb == "delete" || r.verb == "deletecollection":
		return DeletePrecondition
	case alreadyExists(r.verb, r.message):
		return AlreadyExists
	case len(ws.recent) == 0 && len(ws.past) == 0:
		return Unknown
	}
	for _, w := range ws.past {
		if *w != *r.writer {
			return Contention
		}
	}
	for _, win := range ws.recent {
		if *win.writer != *r.writer {
			return Contention
		}
	}
	return StaleOwnCache
}
