package conflicts

import (
	"cmp"
	"slices"
	"time"
)

// totals accumulates the report's figures across objects.
type totals struct {
	sum     Tally
	writers map[*WriterKey]*agg
	objects map[*ObjectKey]*agg
	causes  map[Cause]map[*WriterKey]int
	// names caches the keys' String, the peers' map keys.
	writerNames map[*WriterKey]string
	objectNames map[*ObjectKey]string
	first, last time.Time
	seen        bool
}

func newTotals() *totals {
	return &totals{writers: map[*WriterKey]*agg{}, objects: map[*ObjectKey]*agg{}, causes: map[Cause]map[*WriterKey]int{},
		writerNames: map[*WriterKey]string{}, objectNames: map[*ObjectKey]string{}}
}

func (t *totals) names(r *record) (writer, object string) {
	writer, ok := t.writerNames[r.writer]
	if !ok {
		writer = r.writer.String()
		t.writerNames[r.writer] = writer
	}
	object, ok = t.objectNames[r.obj]
	if !ok {
		object = r.obj.String()
		t.objectNames[r.obj] = object
	}
	return writer, object
}

// add applies f to the attempt's writer, object and the summary. A
// writer's user agent is the one of its first attempt on the first object
// it wrote (objects in the order of their first write).
func (t *totals) add(o *objState, r *record, f func(*agg)) {
	w := t.writers[r.writer]
	if w == nil || o.index < w.uaIndex {
		if w == nil {
			w = newAgg()
			t.writers[r.writer] = w
		}
		w.userAgent, w.uaIndex = r.reader.userAgent, o.index
	}
	g := t.objects[r.obj]
	if g == nil {
		g = newAgg()
		t.objects[r.obj] = g
	}
	s := agg{Tally: t.sum}
	f(w)
	f(g)
	f(&s)
	t.sum = s.Tally
	wname, oname := t.names(r)
	if _, ok := w.peers[oname]; !ok {
		w.peers[oname] = 0
	}
	if _, ok := g.peers[wname]; !ok {
		g.peers[wname] = 0
	}
	if !t.seen || r.received.Before(t.first) {
		t.first = r.received
	}
	if !t.seen || r.received.After(t.last) {
		t.last = r.received
	}
	t.seen = true
}

func (t *totals) conflict(o *objState, r *record, c Cause, lostTo []string) {
	t.add(o, r, func(g *agg) { g.Conflicts++ })
	w, g := t.writers[r.writer], t.objects[r.obj]
	w.causes[c]++
	g.causes[c]++
	for _, l := range lostTo {
		w.lostTo[l]++
	}
	wname, _ := t.names(r)
	g.peers[wname]++
	if t.causes[c] == nil {
		t.causes[c] = map[*WriterKey]int{}
	}
	t.causes[c][r.writer]++
}

func (t *totals) fill(rep *Report, cfg Config) {
	rep.Summary = Summary{Tally: t.sum, Writers: len(t.writers), Objects: len(t.objects)}
	if t.seen {
		rep.Summary.First, rep.Summary.Last = t.first, t.last
	}
	rep.Writers = []WriterStats{}
	for k, a := range t.writers {
		rep.Writers = append(rep.Writers, WriterStats{Writer: *k, UserAgent: a.userAgent, Tally: a.Tally,
			ConflictRate: a.Rate(), Objects: len(a.peers), LostTo: counts(a.lostTo), Causes: causeCounts(a.causes)})
	}
	slices.SortFunc(rep.Writers, func(a, b WriterStats) int {
		return cmp.Or(cmp.Compare(b.Conflicts, a.Conflicts), cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(a.Writer.String(), b.Writer.String()))
	})
	rep.Objects = []ObjectStats{}
	for k, a := range t.objects {
		o := ObjectStats{Object: *k, Tally: a.Tally, Writers: len(a.peers)}
		for _, c := range counts(a.peers) {
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
	if cfg.Top > 0 {
		rep.Writers, rep.Objects = rep.Writers[:min(cfg.Top, len(rep.Writers))], rep.Objects[:min(cfg.Top, len(rep.Objects))]
	}
	rep.Causes = []CauseStats{}
	for _, info := range Causes {
		if ws := t.causes[info.Cause]; len(ws) > 0 {
			n := 0
			for _, c := range ws {
				n += c
			}
			rep.Causes = append(rep.Causes, CauseStats{Cause: info.Cause, Count: n, Fix: info.Fix, Writers: len(ws)})
		}
	}
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
