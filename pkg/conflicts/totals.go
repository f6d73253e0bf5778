package conflicts

import (
	"cmp"
	"slices"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// totals accumulates the report's figures across objects; the objects'
// own figures are in their objState.
type totals struct {
	sum Tally
	// unshown counts the attempts the filter does not show.
	unshown int
	// writers are the writers' figures by number (record.wid; nil for a
	// number without an attempt yet): a slice, not a map of their keys,
	// since every attempt adds to one.
	writers []*agg
	causes  map[Cause]map[*audit.Writer]int
	// causeFields are the fields of each cause's 409s, per owning manager
	// (apply conflicts name them).
	causeFields map[Cause]map[string][]string
	// causeObjects counts each cause's 409s per object and writer, when
	// Config.CauseObjects asks for them (nil otherwise).
	causeObjects map[causeObject]int
	// writerNames caches the writers' String.
	writerNames map[*audit.Writer]string
	first, last time.Time
	seen        bool
}

// causeObject is a cause, an object and a writer: the key of
// totals.causeObjects.
type causeObject struct {
	cause  Cause
	object ObjectKey
	writer *audit.Writer
}

func newTotals(cfg Config) *totals {
	t := &totals{causes: map[Cause]map[*audit.Writer]int{},
		causeFields: map[Cause]map[string][]string{}, writerNames: map[*audit.Writer]string{}}
	if cfg.CauseObjects {
		t.causeObjects = map[causeObject]int{}
	}
	return t
}

func (t *totals) writerName(w *audit.Writer) string {
	name, ok := t.writerNames[w]
	if !ok {
		name = w.String()
		t.writerNames[w] = name
	}
	return name
}

// figure is one of a Tally's counts.
type figure int

const (
	fAttempts figure = iota
	fConflicts
	fSuccesses
	fRetryChains
	fGiveUps
)

// bump adds one to the count f.
func (t *Tally) bump(f figure) {
	switch f {
	case fAttempts:
		t.Attempts++
	case fConflicts:
		t.Conflicts++
	case fSuccesses:
		t.Successes++
	case fRetryChains:
		t.RetryChains++
	default:
		t.GiveUps++
	}
}

// add counts f for the attempt's writer, object and the summary; timed
// false leaves the summary's first and last alone. Each attempt's user
// agent is noted for its writer.
func (t *totals) add(o *objState, wid uint32, reader *readerKey, received time.Time, timed bool, f figure) *agg {
	if int(wid) >= len(t.writers) {
		t.writers = append(t.writers, make([]*agg, int(wid)+1-len(t.writers))...)
	}
	w := t.writers[wid]
	if w == nil {
		w = newAgg()
		t.writers[wid] = w
	}
	if f == fAttempts {
		w.sawReader(reader)
	}
	w.bump(f)
	o.tally.bump(f)
	t.sum.bump(f)
	if !timed {
		return w
	}
	if !t.seen || received.Before(t.first) {
		t.first = received
	}
	if !t.seen || received.After(t.last) {
		t.last = received
	}
	t.seen = true
	return w
}

// spent adds the request time of the attempt r to its writer's (w) time
// in 409s (when it got one) and in retries (when it is one).
func (w *agg) spent(r *record, retry bool) {
	d := r.completed.Sub(r.received)
	if r.code == 409 {
		w.conflictTime += d
	}
	if retry {
		w.retryTime += d
	}
}

// overlap counts an attempt of writer wid received before its previous
// attempt on the object completed.
func (t *totals) overlap(wid uint32) {
	t.writers[wid].sharing.SawOverlap()
}

func (t *totals) conflict(o *objState, r *record, out outcome) {
	c := out.cause
	w := t.add(o, r.wid, r.reader, r.received, true, fConflicts)
	w.causes[c]++
	for _, l := range out.lostTo {
		w.lostTo[l]++
	}
	if len(out.owners) > 0 {
		w.fieldsLost = addFieldOwners(w.fieldsLost, out.owners)
		t.causeFields[c] = addFieldOwners(t.causeFields[c], out.owners)
	}
	if t.causes[c] == nil {
		t.causes[c] = map[*audit.Writer]int{}
	}
	t.causes[c][r.writer]++
	if t.causeObjects != nil {
		t.causeObjects[causeObject{c, *o.key, r.writer}]++
	}
}

func (t *totals) fill(rep *Report, cfg Config, objects []*objState, keys []*audit.Writer) {
	// Sized at once: a log's tens of thousands of objects would otherwise
	// be copied as the slice grows, at the end, when one core works.
	rep.Objects = make([]ObjectStats, 0, len(objects))
	for _, o := range objects {
		if o == nil {
			continue
		}
		n := o.shownWriters(func(id uint32) { t.writers[id].objects++ })
		if n == 0 {
			continue
		}
		stats := ObjectStats{Object: *o.key, Tally: o.tally, Writers: n}
		// Only a writer with a 409 on the object can be its worst.
		for _, c := range o.worst {
			name := t.writerName(keys[c.writer])
			if n := int(c.n); n > stats.WorstConflicts || n > 0 && n == stats.WorstConflicts && name < stats.WorstWriter {
				stats.WorstWriter, stats.WorstConflicts = name, n
			}
		}
		rep.Objects = append(rep.Objects, stats)
	}
	writers := 0
	for _, a := range t.writers {
		if a != nil {
			writers++
		}
	}
	rep.Summary = Summary{Tally: t.sum, Writers: writers, Objects: len(rep.Objects), Unshown: t.unshown}
	if t.seen {
		rep.Summary.First, rep.Summary.Last = t.first, t.last
	}
	rep.Writers = make([]WriterStats, 0, writers)
	for id, a := range t.writers {
		if a == nil {
			continue
		}
		ws := WriterStats{Writer: *keys[id], Tally: a.Tally, ConflictRate: a.Rate(), Objects: a.objects,
			LostTo: counts(a.lostTo), Causes: causeCounts(a.causes), FieldsLost: fieldOwners(a.fieldsLost),
			ConflictSeconds: a.conflictTime.Seconds(), RetrySeconds: a.retryTime.Seconds()}
		ws.UserAgent, ws.Shared = a.sharing.Result()
		rep.Writers = append(rep.Writers, ws)
	}
	slices.SortFunc(rep.Writers, func(a, b WriterStats) int {
		if c := cmp.Or(cmp.Compare(b.Conflicts, a.Conflicts), cmp.Compare(b.Attempts, a.Attempts)); c != 0 {
			return c
		}
		return cmp.Compare(a.Writer.String(), b.Writer.String())
	})
	sortObjects(rep.Objects)
	rep.Causes = []CauseStats{}
	for _, info := range Causes {
		if ws := t.causes[info.Cause]; len(ws) > 0 {
			n := 0
			for _, c := range ws {
				n += c
			}
			rep.Causes = append(rep.Causes, CauseStats{Cause: info.Cause, Count: n, Fix: info.Fix, Writers: len(ws),
				Fields: fieldOwners(t.causeFields[info.Cause])})
		}
	}
	t.fillCauseObjects(rep.Causes)
}

// fillCauseObjects lists each cause's 409s per object and writer, the
// most first, then by object and writer.
func (t *totals) fillCauseObjects(causes []CauseStats) {
	if t.causeObjects == nil {
		return
	}
	by := map[Cause][]CauseObject{}
	for k, n := range t.causeObjects {
		by[k.cause] = append(by[k.cause], CauseObject{Object: k.object, Writer: t.writerName(k.writer), Count: n})
	}
	for i := range causes {
		objs := by[causes[i].Cause]
		slices.SortFunc(objs, func(a, b CauseObject) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Object.String(), b.Object.String()), cmp.Compare(a.Writer, b.Writer))
		})
		causes[i].Objects = objs
	}
}

// sortObjects sorts by conflicts, attempts (both descending), then name;
// the names are made once, not at each comparison (20,000 objects,
// 300,000 comparisons).
func sortObjects(objs []ObjectStats) {
	// The keys are sorted, not the objects: a comparison then reads 40
	// bytes side by side, not two of tens of thousands of ObjectStats
	// spread over megabytes (a cache miss each, most of the sort's time on
	// the 1 GiB log's 20,300 objects). Names are compared only between
	// objects of equal counts.
	type key struct {
		conflicts, attempts int
		name                string
		i                   int
	}
	order := make([]key, len(objs))
	for i := range objs {
		order[i] = key{conflicts: objs[i].Conflicts, attempts: objs[i].Attempts, name: objs[i].Object.String(), i: i}
	}
	slices.SortFunc(order, func(x, y key) int {
		if c := cmp.Compare(y.conflicts, x.conflicts); c != 0 {
			return c
		}
		if c := cmp.Compare(y.attempts, x.attempts); c != 0 {
			return c
		}
		return cmp.Compare(x.name, y.name)
	})
	sorted := make([]ObjectStats, len(objs))
	for i, k := range order {
		sorted[i] = objs[k.i]
	}
	copy(objs, sorted)
}

// counts sorts a map by count, then name.
func counts(m map[string]int) []Count {
	var out []Count
	for k, v := range m {
		out = append(out, Count{Name: k, Count: v})
	}
	slices.SortFunc(out, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) })
	return out
}

func causeCounts(m map[Cause]int) []CauseCount {
	var out []CauseCount
	for _, info := range Causes {
		if n := m[info.Cause]; n > 0 {
			out = append(out, CauseCount{Cause: info.Cause, Count: n})
		}
	}
	return out
}

// addFieldOwners adds the fields of owners to m (made when nil), each
// field once per manager, and returns m.
func addFieldOwners(m map[string][]string, owners []FieldOwner) map[string][]string {
	if m == nil {
		m = map[string][]string{}
	}
	for _, ow := range owners {
		for _, f := range ow.Fields {
			if !slices.Contains(m[ow.Manager], f) {
				m[ow.Manager] = append(m[ow.Manager], f)
			}
		}
	}
	return m
}

// fieldOwners lists the owners by name, their fields sorted.
func fieldOwners(m map[string][]string) []FieldOwner {
	var out []FieldOwner
	for name, fields := range m {
		out = append(out, FieldOwner{Manager: name, Fields: slices.Sorted(slices.Values(fields))})
	}
	slices.SortFunc(out, func(a, b FieldOwner) int { return cmp.Compare(a.Manager, b.Manager) })
	return out
}
