package conflicts

import (
	"cmp"
	"slices"
)

// totals accumulates the report's figures across objects.
type totals struct {
	sum     Tally
	writers map[WriterKey]*agg
	objects map[ObjectKey]*agg
	causes  map[Cause]map[WriterKey]int
	first   record
	last    record
	seen    bool
}

func newTotals() *totals {
	return &totals{writers: map[WriterKey]*agg{}, objects: map[ObjectKey]*agg{}, causes: map[Cause]map[WriterKey]int{}}
}

// add applies f to the attempt's writer, object and the summary.
func (t *totals) add(r *record, f func(*agg)) {
	w := t.writers[*r.writer]
	if w == nil {
		w = newAgg()
		w.userAgent = r.reader.userAgent
		t.writers[*r.writer] = w
	}
	o := t.objects[*r.obj]
	if o == nil {
		o = newAgg()
		t.objects[*r.obj] = o
	}
	s := agg{Tally: t.sum}
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

func (t *totals) conflict(r *record, c Cause, lostTo []string) {
	t.add(r, func(g *agg) { g.Conflicts++ })
	w, o := t.writers[*r.writer], t.objects[*r.obj]
	w.causes[c]++
	o.causes[c]++
	for _, l := range lostTo {
		w.lostTo[l]++
	}
	o.peers[r.writer.String()]++
	if t.causes[c] == nil {
		t.causes[c] = map[WriterKey]int{}
	}
	t.causes[c][*r.writer]++
}

func (t *totals) fill(rep *Report, cfg Config) {
	rep.Summary = Summary{Tally: t.sum, Writers: len(t.writers), Objects: len(t.objects)}
	if t.seen {
		rep.Summary.First, rep.Summary.Last = t.first.received, t.last.received
	}
	rep.Writers = []WriterStats{}
	for k, a := range t.writers {
		rep.Writers = append(rep.Writers, WriterStats{Writer: k, UserAgent: a.userAgent, Tally: a.Tally,
			ConflictRate: a.Rate(), Objects: len(a.peers), LostTo: counts(a.lostTo), Causes: causeCounts(a.causes)})
	}
	slices.SortFunc(rep.Writers, func(a, b WriterStats) int {
		return cmp.Or(cmp.Compare(b.Conflicts, a.Conflicts), cmp.Compare(b.Attempts, a.Attempts), cmp.Compare(a.Writer.String(), b.Writer.String()))
	})
	rep.Objects = []ObjectStats{}
	for k, a := range t.objects {
		o := ObjectStats{Object: k, Tally: a.Tally, Writers: len(a.peers)}
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
