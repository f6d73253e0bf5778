package conflicts

import (
	"cmp"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Code below is the analysis as it was before the stream (kept by value
// in test only): TestStreamMatchesReference holds the stream to it.

// refRecord is one write attempt or one read of a named object, as kept
// between decoding and analysis: no bodies, and the strings of the event
// it came from.
type refRecord struct {
	// obj, writer and reader point into the collector's tables: records
	// of one object or writer share them.
	obj       *ObjectKey
	writer    *audit.Writer
	reader    *refReaderKey
	verb      string
	sub       string
	code      int
	message   string
	details   string
	precond   string
	result    string
	force     bool
	auditID   string
	host      string
	received  time.Time
	completed time.Time
}

// refReadRec is one successful get of a named object.
type refReadRec struct {
	obj                 *ObjectKey
	reader              *refReaderKey
	received, completed time.Time
}

// refReaderKey identifies who read: reads carry no field manager.
type refReaderKey struct {
	user, pod, userAgent string
}

// refCollector turns events into records; Report analyses them. Memory grows
// with the records (about 200 bytes each: writes and gets in the window),
// the objects and the writers; the decoder's strings are interned, so an
// event's own allocations do not outlive it.
type refCollector struct {
	cfg     Config
	recs    []refRecord
	reads   []refReadRec
	strs    map[string]string
	objs    map[ObjectKey]*ObjectKey
	writers map[audit.Writer]*audit.Writer
	readers map[refReaderKey]*refReaderKey
	seen    map[string]bool
	dups    int
	dryRuns int
}

// refNewCollector returns an empty collector.
func refNewCollector(cfg Config) *refCollector {
	return &refCollector{cfg: cfg, strs: map[string]string{}, objs: map[ObjectKey]*ObjectKey{},
		writers: map[audit.Writer]*audit.Writer{}, readers: map[refReaderKey]*refReaderKey{}, seen: map[string]bool{}}
}

func (c *refCollector) str(s string) string {
	if v, ok := c.strs[s]; ok {
		return v
	}
	c.strs[s] = s
	return s
}

func refIntern[K comparable](m map[K]*K, k K) *K {
	if p, ok := m[k]; ok {
		return p
	}
	p := &k
	m[k] = p
	return p
}

func refIsWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Add keeps e if it is a write attempt, or a get of a named object, inside
// the window.
func (c *refCollector) Add(e *audit.Event) {
	if id := e.AuditID + " " + e.Stage; e.AuditID != "" && c.seen[id] {
		c.dups++
		return
	} else {
		c.seen[strings.Clone(id)] = true
	}
	write := refIsWrite(e.Verb)
	// A create with generateName has no name yet: its objects are counted
	// together, under the name "".
	unnamed := e.ObjectRef.Name == "" && e.Verb != "create" && e.Verb != "deletecollection"
	if !write && e.Verb != "get" || unnamed || e.ObjectRef.Resource == "" {
		return
	}
	if !c.cfg.Since.IsZero() && e.RequestReceived.Before(c.cfg.Since) || !c.cfg.Until.IsZero() && !e.RequestReceived.Before(c.cfg.Until) {
		return
	}
	ref := &e.ObjectRef
	obj := ObjectKey{Group: c.str(ref.APIGroup), Resource: c.str(ref.Resource), Namespace: c.str(ref.Namespace), Name: c.str(ref.Name)}
	if c.cfg.Namespace != "" && obj.Namespace != c.cfg.Namespace || c.cfg.Object != nil && !refMatchObject(*c.cfg.Object, obj) {
		return
	}
	q := refQuery(e.RequestURI)
	if write && q.Get("dryRun") != "" {
		c.dryRuns++
		return
	}
	fm := q.Get("fieldManager")
	if fm == "" {
		fm = strings.Split(e.UserAgent, "/")[0]
	}
	user, pod, ua := c.str(e.Username), c.str(e.PodName), c.str(e.UserAgent)
	objp, reader := refIntern(c.objs, obj), refIntern(c.readers, refReaderKey{user: user, pod: pod, userAgent: ua})
	if !write {
		if e.Code/100 == 2 {
			c.reads = append(c.reads, refReadRec{obj: objp, reader: reader, received: e.RequestReceived, completed: e.StageTimestamp})
		}
		return
	}
	r := refRecord{
		obj: objp, reader: reader, verb: c.str(e.Verb), sub: c.str(ref.Subresource), code: e.Code,
		result: e.ResponseRV, received: e.RequestReceived, completed: e.StageTimestamp,
		writer:  refIntern(c.writers, audit.Writer{User: user, FieldManager: c.str(fm), Pod: pod}),
		precond: ref.ResourceVersion, details: c.str(e.DetailsKind),
		force:   e.Verb == "patch" && slices.Contains(q["force"], "true"),
		auditID: strings.Clone(e.AuditID), host: c.str(e.Host),
	}
	if e.Code == 409 {
		r.message = c.str(e.Message)
	}
	c.recs = append(c.recs, r)
}

// Merge moves o's records into c.
func (c *refCollector) Merge(o *refCollector) {
	c.recs = append(c.recs, o.recs...)
	c.reads = append(c.reads, o.reads...)
	o.recs, o.reads = nil, nil
}

// refQuery reads a request URI's query; one that does not parse is empty.
func refQuery(uri string) url.Values {
	i := strings.IndexByte(uri, '?')
	if i < 0 {
		return url.Values{}
	}
	q, err := url.ParseQuery(uri[i+1:])
	if err != nil {
		return url.Values{}
	}
	return q
}

// refAgg accumulates one writer's or one object's figures.
type refAgg struct {
	Tally
	userAgents  map[string]bool
	overlapping int
	fields      map[string][]string
	lostTo      map[string]int
	causes      map[Cause]int
	// objects or writers touched, and their 409s.
	peers map[string]int
	// the request time of its 409s and of its retries.
	conflictTime, retryTime time.Duration
}

func refNewAgg() *refAgg {
	return &refAgg{lostTo: map[string]int{}, causes: map[Cause]int{}, peers: map[string]int{}, userAgents: map[string]bool{}, fields: map[string][]string{}}
}

// refWriterState follows one writer on one object.
type refWriterState struct {
	last      *refRecord
	cadence   time.Duration
	lastIdx   int
	chain     int
	step      int
	conflict  bool
	timelineI int
}

// refObjectWalk analyses one object's records in order.
type refObjectWalk struct {
	cfg       Config
	recs      []*refRecord
	reads     []*refReadRec
	lastRead  map[refReaderKey]time.Time
	successes []*refRecord
	writers   map[audit.Writer]*refWriterState
	timeline  []Attempt
	keep      bool
}

// Report analyses the records collected so far.
func (c *refCollector) Report() *Report {
	slices.SortStableFunc(c.recs, func(a, b refRecord) int {
		return cmp.Or(a.completed.Compare(b.completed), a.received.Compare(b.received))
	})
	slices.SortStableFunc(c.reads, func(a, b refReadRec) int {
		return cmp.Or(a.completed.Compare(b.completed), a.received.Compare(b.received))
	})
	byObj := map[ObjectKey][]*refRecord{}
	var order []ObjectKey
	for i := range c.recs {
		r := &c.recs[i]
		if _, ok := byObj[*r.obj]; !ok {
			order = append(order, *r.obj)
		}
		byObj[*r.obj] = append(byObj[*r.obj], r)
	}
	reads := map[ObjectKey][]*refReadRec{}
	for i := range c.reads {
		r := &c.reads[i]
		if _, ok := byObj[*r.obj]; ok {
			reads[*r.obj] = append(reads[*r.obj], r)
		}
	}
	t := refNewTotals()
	rep := &Report{}
	for _, k := range order {
		w := &refObjectWalk{cfg: c.cfg, recs: byObj[k], reads: reads[k], lastRead: map[refReaderKey]time.Time{}, writers: map[audit.Writer]*refWriterState{}}
		w.keep = c.cfg.Object != nil && refMatchObject(*c.cfg.Object, k)
		w.run(t)
		if w.keep {
			rep.Timeline = append(rep.Timeline, w.timeline...)
			rep.TimelineObject = &k
		}
	}
	t.fill(rep, c.cfg)
	if c.cfg.Object == nil && c.cfg.HottestTimeline && len(rep.Objects) > 0 {
		k := rep.Objects[0].Object
		w := &refObjectWalk{cfg: c.cfg, recs: byObj[k], reads: reads[k], lastRead: map[refReaderKey]time.Time{}, writers: map[audit.Writer]*refWriterState{}, keep: true}
		w.run(refNewTotals())
		rep.Timeline, rep.TimelineObject = w.timeline, &k
	}
	return rep
}

func refMatchObject(want, k ObjectKey) bool {
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

func (w *refObjectWalk) run(t *refTotals) {
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

func (w *refObjectWalk) attempt(r *refRecord, t *refTotals) {
	st := w.writers[*r.writer]
	if st == nil {
		st = &refWriterState{}
		w.writers[*r.writer] = st
	}
	a := Attempt{AuditID: r.auditID, Replica: r.host, Received: r.received, Completed: r.completed, Writer: r.writer.String(), Verb: r.verb, Subresource: r.sub,
		Code: r.code, Precondition: r.precond, Result: r.result, Force: r.force}
	retry := false
	if st.conflict {
		gap := r.received.Sub(st.last.completed)
		rd, ok := w.lastRead[*r.reader]
		reread := ok && rd.After(st.last.completed)
		soon := func(d time.Duration) bool { return st.cadence <= 0 || 2*d < st.cadence }
		switch {
		case gap > w.cfg.RetryWindow:
		case reread:
			retry = soon(rd.Sub(st.last.completed))
		case r.precond != "" && st.last.precond != "" && r.precond != st.last.precond || r.force && !st.last.force:
			retry = true
		case r.precond != "" && r.precond == st.last.precond:
		default:
			retry = soon(gap)
		}
	}
	if st.conflict && !retry {
		w.giveUp(*r.writer, st, t)
	}
	if retry {
		st.step++
		if st.step == 2 {
			t.add(r, func(g *refAgg) { g.RetryChains++ })
		}
	} else {
		st.chain, st.step, st.cadence = st.chain+1, 1, 0
		if st.last != nil {
			st.cadence = r.received.Sub(st.last.completed)
		}
	}
	a.Chain, a.Step = st.chain, st.step
	if st.last != nil {
		rd, ok := w.lastRead[*r.reader]
		a.Reread = ok && rd.After(st.last.completed)
	}
	t.add(r, func(g *refAgg) { g.Attempts++ })
	t.add(r, func(g *refAgg) {
		if r.code == 409 {
			g.conflictTime += r.completed.Sub(r.received)
		}
		if retry {
			g.retryTime += r.completed.Sub(r.received)
		}
	})
	t.writers[*r.writer].userAgents[r.reader.userAgent] = true
	if st.last != nil && st.last.completed.After(r.received) {
		t.writers[*r.writer].overlapping++
	}
	st.conflict = r.code == 409
	switch {
	case r.code == 409:
		winners := w.winners(r)
		a.Cause = refClassify(r, winners)
		for _, win := range winners {
			a.LostTo = append(a.LostTo, win.writer.String())
		}
		if a.Cause == ApplyConflict {
			a.FieldOwners = ApplyConflictOwners(r.message)
			a.LostTo = nil
			for _, o := range a.FieldOwners {
				a.LostTo = append(a.LostTo, "manager "+o.Manager)
				for _, f := range o.Fields {
					if fs := t.writers[*r.writer].fields[o.Manager]; !slices.Contains(fs, f) {
						t.writers[*r.writer].fields[o.Manager] = append(fs, f)
					}
				}
			}
		}
		t.conflict(r, a.Cause, a.LostTo)
	case r.code/100 == 2:
		t.add(r, func(g *refAgg) { g.Successes++ })
	}
	st.last = r
	if w.keep {
		st.timelineI = len(w.timeline)
		w.timeline = append(w.timeline, a)
	}
}

func (w *refObjectWalk) giveUp(k audit.Writer, st *refWriterState, t *refTotals) {
	st.conflict = false
	t.add(st.last, func(g *refAgg) { g.GiveUps++ })
	if w.keep {
		w.timeline[st.timelineI].GiveUp = true
	}
}

// refInFlight is how long after a 409 completed a success may complete and
// still have committed before the 409 was checked: audit events of two
// racing requests are written in either order.
const refInFlight = time.Second

// winners are the successful writes between r's read and its rejection:
// exactly, by resourceVersion, when r has a precondition and every success
// has its resulting version (RequestResponse); else by time, from the
// writer's last read, or the last success alone when no read is in the log.
// A success refCounts when it was received before r completed.
func (w *refObjectWalk) winners(r *refRecord) []*refRecord {
	hi := len(w.successes)
	for hi > 0 && w.successes[hi-1].completed.After(r.completed.Add(refInFlight)) {
		hi--
	}
	var cand []*refRecord
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

func (w *refObjectWalk) resultsKnown() bool {
	for _, s := range w.successes {
		if s.result == "" {
			return false
		}
	}
	return len(w.successes) > 0
}

// refClassify names the cause of the 409 r, lost to winners.
func refClassify(r *refRecord, winners []*refRecord) Cause {
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

// refTotals accumulates the report's figures across objects.
type refTotals struct {
	sum     Tally
	writers map[audit.Writer]*refAgg
	objects map[ObjectKey]*refAgg
	causes  map[Cause]map[audit.Writer]int
	first   refRecord
	last    refRecord
	seen    bool
}

func refNewTotals() *refTotals {
	return &refTotals{writers: map[audit.Writer]*refAgg{}, objects: map[ObjectKey]*refAgg{}, causes: map[Cause]map[audit.Writer]int{}}
}

// add applies f to the attempt's writer, object and the summary.
func (t *refTotals) add(r *refRecord, f func(*refAgg)) {
	w := t.writers[*r.writer]
	if w == nil {
		w = refNewAgg()
		t.writers[*r.writer] = w
	}
	o := t.objects[*r.obj]
	if o == nil {
		o = refNewAgg()
		t.objects[*r.obj] = o
	}
	s := refAgg{Tally: t.sum}
	f(w)
	f(o)
	f(&s)
	t.sum = s.Tally
	if _, ok := w.peers[r.obj.String()]; !ok {
		w.peers[r.obj.String()] = 0
	}
	if _, ok := o.peers[r.writer.String()]; !ok {
		o.peers[r.writer.String()] = 0
	}
	if !t.seen || r.received.Before(t.first.received) {
		t.first = *r
	}
	if !t.seen || r.received.After(t.last.received) {
		t.last = *r
	}
	t.seen = true
}

func (t *refTotals) conflict(r *refRecord, c Cause, lostTo []string) {
	t.add(r, func(g *refAgg) { g.Conflicts++ })
	w, o := t.writers[*r.writer], t.objects[*r.obj]
	w.causes[c]++
	o.causes[c]++
	for _, l := range lostTo {
		w.lostTo[l]++
	}
	o.peers[r.writer.String()]++
	if t.causes[c] == nil {
		t.causes[c] = map[audit.Writer]int{}
	}
	t.causes[c][*r.writer]++
}

func (t *refTotals) fill(rep *Report, cfg Config) {
	rep.Summary = Summary{Tally: t.sum, Writers: len(t.writers), Objects: len(t.objects)}
	if t.seen {
		rep.Summary.First, rep.Summary.Last = t.first.received, t.last.received
	}
	rep.Writers = []WriterStats{}
	for k, a := range t.writers {
		ws := WriterStats{Writer: k, Tally: a.Tally,
			ConflictRate: a.Rate(), Objects: len(a.peers), LostTo: refCounts(a.lostTo), Causes: refCauseCounts(a.causes),
			ConflictSeconds: a.conflictTime.Seconds(), RetrySeconds: a.retryTime.Seconds()}
		uas := slices.Sorted(maps.Keys(a.userAgents))
		if len(uas) == 1 {
			ws.UserAgent = uas[0]
		} else if len(uas) > 1 {
			ws.Shared = &Shared{UserAgents: uas}
		}
		if a.overlapping > 0 {
			if ws.Shared == nil {
				ws.Shared = &Shared{}
			}
			ws.Shared.Overlapping = a.overlapping
		}
		for _, m := range slices.Sorted(maps.Keys(a.fields)) {
			ws.FieldsLost = append(ws.FieldsLost, FieldOwner{Manager: m, Fields: slices.Sorted(slices.Values(a.fields[m]))})
		}
		rep.Writers = append(rep.Writers, ws)
	}
	slices.SortFunc(rep.Writers, func(a, b WriterStats) int {
		return cmp.Or(cmp.Compare(b.Conflicts, a.Conflicts), cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(a.Writer.String(), b.Writer.String()))
	})
	rep.Objects = []ObjectStats{}
	for k, a := range t.objects {
		o := ObjectStats{Object: k, Tally: a.Tally, Writers: len(a.peers)}
		for _, c := range refCounts(a.peers) {
			if c.Count > 0 {
				o.WorstWriter, o.WorstConflicts = c.Name, c.Count
			}
			break
		}
		rep.Objects = append(rep.Objects, o)
	}
	slices.SortFunc(rep.Objects, func(a, b ObjectStats) int {
		return cmp.Or(cmp.Compare(b.Conflicts, a.Conflicts), cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(a.Object.String(), b.Object.String()))
	})
	rep.Causes = []CauseStats{}
	for _, info := range Causes {
		if ws := t.causes[info.Cause]; len(ws) > 0 {
			n := 0
			for _, c := range ws {
				n += c
			}
			cs := CauseStats{Cause: info.Cause, Count: n, Fix: info.Fix, Writers: len(ws)}
			if info.Cause == ApplyConflict {
				cs.Fields = refCauseFields(t.writers)
			}
			rep.Causes = append(rep.Causes, cs)
		}
	}
}

// refCauseFields merges every writer's apply-conflict fields per manager:
// apply conflicts are the only 409s that name fields.
func refCauseFields(writers map[audit.Writer]*refAgg) []FieldOwner {
	merged := map[string]map[string]bool{}
	for _, a := range writers {
		for m, fs := range a.fields {
			if merged[m] == nil {
				merged[m] = map[string]bool{}
			}
			for _, f := range fs {
				merged[m][f] = true
			}
		}
	}
	var out []FieldOwner
	for _, m := range slices.Sorted(maps.Keys(merged)) {
		out = append(out, FieldOwner{Manager: m, Fields: slices.Sorted(maps.Keys(merged[m]))})
	}
	return out
}

// refCounts sorts a map by count, then name.
func refCounts(m map[string]int) []Count {
	var out []Count
	for k, v := range m {
		out = append(out, Count{Name: k, Count: v})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) })
	return out
}

func refCauseCounts(m map[Cause]int) []CauseCount {
	var out []CauseCount
	for _, info := range Causes {
		if n := m[info.Cause]; n > 0 {
			out = append(out, CauseCount{Cause: info.Cause, Count: n})
		}
	}
	return out
}
