package conflicts

import (
	"cmp"
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
	lostTo    map[string]int
	causes    map[Cause]int
	// objects or writers touched, and their 409s.
	peers map[string]int
}

func newAgg() *agg {
	return &agg{lostTo: map[string]int{}, causes: map[Cause]int{}, peers: map[string]int{}}
}

// writerState follows one writer on one object.
type writerState struct {
	last      *record
	lastIdx   int
	chain     int
	step      int
	conflict  bool
	timelineI int
}

// objectWalk analyses one object's records in order.
type objectWalk struct {
	cfg       Config
	recs      []*record
	reads     []*readRec
	lastRead  map[readerKey]time.Time
	successes []*record
	writers   map[WriterKey]*writerState
	timeline  []Attempt
	keep      bool
}

// Report analyses the records collected so far.
func (c *Collector) Report() *Report {
	slices.SortStableFunc(c.recs, func(a, b record) int {
		return cmp.Or(a.completed.Compare(b.completed), a.received.Compare(b.received))
	})
	slices.SortStableFunc(c.reads, func(a, b readRec) int {
		return cmp.Or(a.completed.Compare(b.completed), a.received.Compare(b.received))
	})
	byObj := map[ObjectKey][]*record{}
	var order []ObjectKey
	for i := range c.recs {
		r := &c.recs[i]
		if _, ok := byObj[*r.obj]; !ok {
			order = append(order, *r.obj)
		}
		byObj[*r.obj] = append(byObj[*r.obj], r)
	}
	reads := map[ObjectKey][]*readRec{}
	for i := range c.reads {
		r := &c.reads[i]
		if _, ok := byObj[*r.obj]; ok {
			reads[*r.obj] = append(reads[*r.obj], r)
		}
	}
	t := newTotals()
	rep := &Report{}
	for _, k := range order {
		w := &objectWalk{cfg: c.cfg, recs: byObj[k], reads: reads[k], lastRead: map[readerKey]time.Time{}, writers: map[WriterKey]*writerState{}}
		w.keep = c.cfg.Object != nil && matchObject(*c.cfg.Object, k)
		w.run(t)
		if w.keep {
			rep.Timeline = append(rep.Timeline, w.timeline...)
			rep.TimelineObject = &k
		}
	}
	t.fill(rep, c.cfg)
	if c.cfg.Object == nil && c.cfg.HottestTimeline && len(rep.Objects) > 0 {
		k := rep.Objects[0].Object
		w := &objectWalk{cfg: c.cfg, recs: byObj[k], reads: reads[k], lastRead: map[readerKey]time.Time{}, writers: map[WriterKey]*writerState{}, keep: true}
		w.run(newTotals())
		rep.Timeline, rep.TimelineObject = w.timeline, &k
	}
	return rep
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

func (w *objectWalk) run(t *totals) {
	for _, r := range w.recs {
		if r.code/100 == 2 {
			w.successes = append(w.successes, r)
		}
	}
	next := 0
	for _, r := range w.recs {
		for ; next < len(w.reads) && !w.reads[next].completed.After(r.completed); next++ {
			w.lastRead[*w.reads[next].reader] = w.reads[next].received
		}
		w.attempt(r, t)
	}
	for k, st := range w.writers {
		if st.conflict {
			w.giveUp(k, st, t)
		}
	}
}

func (w *objectWalk) attempt(r *record, t *totals) {
	st := w.writers[*r.writer]
	if st == nil {
		st = &writerState{}
		w.writers[*r.writer] = st
	}
	a := Attempt{Received: r.received, Completed: r.completed, Writer: r.writer.String(), Verb: r.verb, Subresource: r.sub,
		Code: r.code, Precondition: r.precond, Result: r.result}
	retry := st.conflict && r.received.Sub(st.last.completed) <= w.cfg.RetryWindow
	if st.conflict && !retry {
		w.giveUp(*r.writer, st, t)
	}
	if retry {
		st.step++
		if st.step == 2 {
			t.add(r, func(g *agg) { g.RetryChains++ })
		}
	} else {
		st.chain, st.step = st.chain+1, 1
	}
	a.Chain, a.Step = st.chain, st.step
	if st.last != nil {
		rd, ok := w.lastRead[*r.reader]
		a.Reread = ok && rd.After(st.last.completed)
	}
	t.add(r, func(g *agg) { g.Attempts++ })
	st.conflict = r.code == 409
	switch {
	case r.code == 409:
		winners := w.winners(r)
		a.Cause = classify(r, winners)
		for _, win := range winners {
			a.LostTo = append(a.LostTo, win.writer.String())
		}
		if a.Cause == ApplyConflict {
			a.LostTo = applyOwners(r.message)
		}
		t.conflict(r, a.Cause, a.LostTo)
	case r.code/100 == 2:
		t.add(r, func(g *agg) { g.Successes++ })
	}
	st.last = r
	if w.keep {
		st.timelineI = len(w.timeline)
		w.timeline = append(w.timeline, a)
	}
}

func (w *objectWalk) giveUp(k WriterKey, st *writerState, t *totals) {
	st.conflict = false
	t.add(st.last, func(g *agg) { g.GiveUps++ })
	if w.keep {
		w.timeline[st.timelineI].GiveUp = true
	}
}

// inFlight is how long after a 409 completed a success may complete and
// still have committed before the 409 was checked: audit events of two
// racing requests are written in either order.
const inFlight = time.Second

// winners are the successful writes between r's read and its rejection:
// exactly, by resourceVersion, when r has a precondition and every success
// has its resulting version (RequestResponse); else by time, from the
// writer's last read, or the last success alone when no read is in the log.
// A success counts when it was received before r completed.
func (w *objectWalk) winners(r *record) []*record {
	hi := len(w.successes)
	for hi > 0 && w.successes[hi-1].completed.After(r.completed.Add(inFlight)) {
		hi--
	}
	var cand []*record
	for _, s := range w.successes[:hi] {
		if s.received.Before(r.completed) {
			cand = append(cand, s)
		}
	}
	if r.precond != "" && w.resultsKnown() {
		i := len(cand)
		for i > 0 {
			c, err := resourceversion.CompareResourceVersion(cand[i-1].result, r.precond)
			if err != nil || c <= 0 {
				break
			}
			i--
		}
		return cand[i:]
	}
	base, ok := w.lastRead[*r.reader]
	if !ok {
		for i := len(cand) - 1; i >= 0; i-- {
			if !cand[i].completed.After(r.completed) {
				return cand[i : i+1]
			}
		}
		return nil
	}
	i := len(cand)
	for i > 0 && cand[i-1].completed.After(base) {
		i--
	}
	return cand[i:]
}

func (w *objectWalk) resultsKnown() bool {
	for _, s := range w.successes {
		if s.result == "" {
			return false
		}
	}
	return len(w.successes) > 0
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
func classify(r *record, winners []*record) Cause {
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
	case len(winners) == 0:
		return Unknown
	}
	for _, win := range winners {
		if *win.writer != *r.writer {
			return Contention
		}
	}
	return StaleOwnCache
}
