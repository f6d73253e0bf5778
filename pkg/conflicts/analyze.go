package conflicts

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// agg accumulates one writer's or one object's figures.
type agg struct {
	Tally
	userAgent string
	// uaIndex is the index of the object whose record gave userAgent.
	uaIndex int
	lostTo  map[string]int
	causes  map[Cause]int
	// objects counts the objects written.
	objects int
}

func newAgg() *agg {
	return &agg{lostTo: map[string]int{}, causes: map[Cause]int{}}
}

// writerState follows one writer on one object: its last attempt (not the
// record: only what a give-up or a retry needs), its chain, its 409s.
type writerState struct {
	lastCompleted time.Time
	reader        *readerKey
	attempted     bool
	conflict      bool
	chain, step   int32
	conflicts     int32
	timelineI     int32
}

// objState is one object's walk: its records are stepped through in
// completion order.
type objState struct {
	cfg Config
	key *ObjectKey
	// index numbers the objects in the order of their first write.
	index int
	// queue holds released records waiting for a 409 before them to ripen.
	queue []*record
	// successes are the released successes not folded, in order.
	successes []*record
	// history holds the successes folded out of successes that a later
	// 409 may still need, oldest first: those completed after the oldest
	// last get of a reader of the object, and the last one. cut is the
	// latest completion dropped from it.
	history  []pastSuccess
	cut      time.Time
	stream   *stream
	lastRead map[*readerKey]time.Time
	writers  map[*WriterKey]*writerState
	// hasSuccess and noResult decide, at the end, between exact winners
	// (every success has its resulting resourceVersion) and winners by
	// time; until then pending keeps both answers.
	hasSuccess, noResult bool
	pending              []pendingConflict
	keep                 bool
	timeline             []Attempt
	tally                Tally
}

// pastSuccess is a folded success: when it completed, and who wrote.
type pastSuccess struct {
	completed time.Time
	writer    *WriterKey
}

// maxHistory bounds an object's history; a 409 that needs a success
// dropped beyond it makes the stream inexact.
const maxHistory = 128

// outcome is a 409's cause and winners.
type outcome struct {
	cause Cause
	// lostTo names the winners, once per winning write.
	lostTo []string
}

type pendingConflict struct {
	r           *record
	exact, time outcome
	timelineI   int
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
	if r.result == "" && !o.noResult {
		o.noResult = true
		for _, p := range o.pending {
			o.settle(p, p.time, s.t)
		}
		o.pending = nil
	}
	if o.noResult && !o.keep && s.skew >= 0 {
		o.fold(s.frontier.Add(-foldAfter))
	}
}

// fold moves the successes completed before horizon into the history,
// and drops from it what no reader can need.
func (o *objState) fold(horizon time.Time) {
	n := 0
	for n < len(o.successes) && o.successes[n].completed.Before(horizon) {
		o.history = append(o.history, pastSuccess{completed: o.successes[n].completed, writer: o.successes[n].writer})
		n++
	}
	if n == 0 {
		return
	}
	o.successes = slices.Delete(o.successes, 0, n)
	var oldest time.Time
	first := true
	for _, at := range o.lastRead {
		if first || at.Before(oldest) {
			oldest, first = at, false
		}
	}
	drop := 0
	for drop < len(o.history)-1 && (first || !o.history[drop].completed.After(oldest)) {
		drop++
	}
	drop = max(drop, len(o.history)-maxHistory)
	if drop > 0 {
		if c := o.history[drop-1].completed; c.After(o.cut) {
			o.cut = c
		}
		o.history = slices.Delete(o.history, 0, drop)
	}
}

// step walks one record: a get or a write attempt.
func (o *objState) step(r *record, s *stream) {
	if !r.read {
		o.attempt(r, s.t)
		return
	}
	o.lastRead[r.reader] = r.received
}

func (o *objState) attempt(r *record, t *totals) {
	st := o.writers[r.writer]
	if st == nil {
		st = &writerState{}
		o.writers[r.writer] = st
	}
	a := Attempt{Received: r.received, Completed: r.completed, Writer: r.writer.String(), Verb: r.verb, Subresource: r.sub,
		Code: r.code, Precondition: r.precond, Result: r.result}
	retry := st.conflict && r.received.Sub(st.lastCompleted) <= o.cfg.RetryWindow
	if st.conflict && !retry {
		o.giveUp(r.writer, st, t)
	}
	if retry {
		st.step++
		if st.step == 2 {
			t.add(o, r.writer, r.reader, r.received, true, func(g *agg) { g.RetryChains++ })
		}
	} else {
		st.chain, st.step = st.chain+1, 1
	}
	a.Chain, a.Step = int(st.chain), int(st.step)
	if st.attempted {
		rd, ok := o.lastRead[r.reader]
		a.Reread = ok && rd.After(st.lastCompleted)
	}
	t.add(o, r.writer, r.reader, r.received, true, func(g *agg) { g.Attempts++ })
	st.conflict = r.code == 409
	st.attempted, st.lastCompleted, st.reader = true, r.completed, r.reader
	timelineI := -1
	if o.keep {
		timelineI = len(o.timeline)
		st.timelineI = int32(timelineI)
		o.timeline = append(o.timeline, a)
	}
	switch {
	case r.code == 409:
		o.conflict(r, timelineI, t)
	case r.code/100 == 2:
		t.add(o, r.writer, r.reader, r.received, true, func(g *agg) { g.Successes++ })
	}
}

// conflict finds the winners and cause of the 409 r. Whether they are
// found by resourceVersion depends on every success of the object, so
// until one without a resulting version is seen, both answers are kept.
func (o *objState) conflict(r *record, timelineI int, t *totals) {
	cand := o.candidates(r)
	p := pendingConflict{r: r, timelineI: timelineI, time: o.outcome(r, o.byTime(r, cand))}
	if r.precond == "" || o.noResult {
		o.settle(p, p.time, t)
		return
	}
	p.exact = o.outcome(r, byVersion(r, cand))
	o.pending = append(o.pending, p)
}

func (o *objState) settle(p pendingConflict, out outcome, t *totals) {
	if p.timelineI >= 0 {
		o.timeline[p.timelineI].Cause, o.timeline[p.timelineI].LostTo = out.cause, out.lostTo
	}
	o.writers[p.r.writer].conflicts++
	t.conflict(o, p.r, out.cause, out.lostTo)
}

// finish settles what waits for the end of the log: the pending 409s and
// the writers whose last attempt was a 409.
func (o *objState) finish(t *totals) {
	for _, p := range o.pending {
		out := p.time
		if o.hasSuccess && !o.noResult {
			out = p.exact
		}
		o.settle(p, out, t)
	}
	o.pending = nil
	for w, st := range o.writers {
		if st.conflict {
			o.giveUp(w, st, t)
		}
	}
}

func (o *objState) giveUp(w *WriterKey, st *writerState, t *totals) {
	st.conflict = false
	// The attempt's receive time is already in the summary's first and last.
	t.add(o, w, st.reader, time.Time{}, false, func(g *agg) { g.GiveUps++ })
	if o.keep {
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
	past   []*WriterKey
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

// byVersion are the candidates whose resulting resourceVersion is newer
// than r's precondition (the successes are never folded then).
func byVersion(r *record, cand []*record) winnerSet {
	i := len(cand)
	for i > 0 {
		c, err := resourceversion.CompareResourceVersion(cand[i-1].result, r.precond)
		if err != nil || c <= 0 {
			break
		}
		i--
	}
	return winnerSet{recent: cand[i:]}
}

// byTime are the successes since the writer's last get, or the last
// success alone when no get of the writer's is in the log.
func (o *objState) byTime(r *record, cand []*record) winnerSet {
	base, ok := o.lastRead[r.reader]
	if !ok {
		for i := len(cand) - 1; i >= 0; i-- {
			if !cand[i].completed.After(r.completed) {
				return winnerSet{recent: cand[i : i+1]}
			}
		}
		// Every folded success is older than r: the last one is the last
		// success before r.
		if len(o.history) > 0 {
			return winnerSet{past: []*WriterKey{o.history[len(o.history)-1].writer}}
		}
		return winnerSet{}
	}
	i := len(cand)
	for i > 0 && cand[i-1].completed.After(base) {
		i--
	}
	ws := winnerSet{recent: cand[i:]}
	if i == 0 {
		j := len(o.history)
		for j > 0 && o.history[j-1].completed.After(base) {
			j--
		}
		if j == 0 && o.cut.After(base) {
			o.stream.inexact = true
		}
		for _, p := range o.history[j:] {
			ws.past = append(ws.past, p.writer)
		}
	}
	return ws
}

func (o *objState) outcome(r *record, ws winnerSet) outcome {
	out := outcome{cause: classify(r, ws)}
	if out.cause == ApplyConflict {
		out.lostTo = applyOwners(r.message)
		return out
	}
	for _, w := range ws.past {
		out.lostTo = append(out.lostTo, w.String())
	}
	for _, win := range ws.recent {
		out.lostTo = append(out.lostTo, win.writer.String())
	}
	return out
}

func matchObject(want, k ObjectKey) bool {
	if want.Name != k.Name || want.Namespace != "" && want.Namespace != k.Namespace {
		return false
	}
	full := k.Resource
	if k.Group != "" {
		full += "." + k.Group
	}
	r := want.Resource
	return r == k.Resource || r == full || r+"s" == k.Resource || r+"es" == k.Resource ||
		strings.HasPrefix(r, strings.TrimSuffix(k.Resource, "s")+".") && r+"s" == full
}

// applyOwnerRE finds the managers an apply conflicted with in the message
// `Apply failed with 2 conflicts: conflict with "a": .data.x; conflict with "b" using v1: .data.y`.
var applyOwnerRE = regexp.MustCompile(`conflict with "([^"]*)"`)

// applyOwners are the field managers that own the fields an apply
// conflicted with: the apply lost to their earlier writes, whoever made
// them, so they are named "manager NAME".
func applyOwners(msg string) []string {
	var out []string
	for _, m := range applyOwnerRE.FindAllStringSubmatch(msg, -1) {
		if name := "manager " + m[1]; !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// classify names the cause of the 409 r, lost to winners.
func classify(r *record, ws winnerSet) Cause {
	switch {
	case r.details == "resourcequotas" && r.verb == "create":
		return Quota
	case strings.HasPrefix(r.message, "Apply failed with"):
		return ApplyConflict
	case r.obj.Group == "coordination.k8s.io" && r.obj.Resource == "leases":
		return LeaseContention
	case r.verb == "delete" || r.verb == "deletecollection":
		return DeletePrecondition
	case r.verb == "create" && strings.HasSuffix(r.message, "already exists"):
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
