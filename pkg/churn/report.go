package churn

import (
	"math"
	"sort"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// minRateSpan is the shortest span rates are computed over, so that a
// write or two in a short run is not a high rate.
const minRateSpan = 10 * time.Second

// Report returns what the tracker saw from its start until end.
func (t *Tracker) Report(end time.Time) *Report { return t.report(end, t.cfg.Top) }

// report ranks top objects, managers and types.
func (t *Tracker) report(end time.Time, top int) *Report {
	r := &Report{Start: t.start, End: end, Duration: end.Sub(t.start), TypesWatched: len(t.types), Warnings: t.warnings}
	minutes := max(r.Duration, minRateSpan).Minutes()
	rate := func(n int) float64 { return math.Round(float64(n)/minutes*10) / 10 }
	var written []objKey
	for k, st := range t.objects {
		if !(st.act != nil && st.act.deleted) {
			r.ObjectsWatched++
		}
		if st.act == nil {
			continue
		}
		written = append(written, k)
		fighters := t.fighters(st)
		for mk, c := range st.act.managers {
			if !fighters[managerName(&entryID{manager: mk.manager, subresource: mk.subresource})] {
				r.Loops = t.appendLoop(r.Loops, k, mk, st.act.selfWrites[mk], *c, rate)
			}
		}
	}
	sort.Slice(written, func(i, j int) bool { return t.less(written[i], written[j]) })
	for i, k := range written {
		if i == top {
			break
		}
		r.Objects = append(r.Objects, t.object(k, rate))
	}
	r.Managers = rankManagers(t.managers, rate, top)
	r.Types = t.rankTypes(rate, top)
	for _, ts := range t.types {
		r.Writes += ts.counts.Writes
	}
	sort.SliceStable(r.Loops, func(i, j int) bool { return r.Loops[i].Writes > r.Loops[j].Writes })
	for _, f := range t.fights {
		r.Fights = append(r.Fights, *f)
	}
	sort.SliceStable(r.Fights, func(i, j int) bool { return r.Fights[i].Flips > r.Fights[j].Flips })
	r.Gaps = t.gaps
	r.emptyLists()
	return r
}

func (r *Report) emptyLists() {
	if r.Objects == nil {
		r.Objects = []Object{}
	}
	if r.Managers == nil {
		r.Managers = []ManagerWrites{}
	}
	if r.Types == nil {
		r.Types = []Type{}
	}
	if r.Loops == nil {
		r.Loops = []Loop{}
	}
	if r.Fights == nil {
		r.Fights = []Fight{}
	}
}

// fighters returns the managers (as fights name them) of the object's
// fights: a fight's writes alternate between its managers, so none of
// them is a self-loop.
func (t *Tracker) fighters(st *objState) map[string]bool {
	m := map[string]bool{}
	for _, ff := range st.act.fields {
		if ff.reported != nil {
			for _, name := range ff.reported.Managers {
				m[name] = true
			}
		}
	}
	return m
}

// appendLoop appends the self-loop of manager mk on object k: n writes
// without a generation change, each with no other writer since its previous
// one (c are all its writes, for the class), if they are frequent enough.
func (t *Tracker) appendLoop(loops []Loop, k objKey, mk mgrKey, n int, c Counts, rate func(int) float64) []Loop {
	if n < t.cfg.MinLoopWrites || rate(n) <= t.cfg.LoopRate {
		return loops
	}
	class := follow.Other
	switch {
	case c.Status >= c.Metadata && c.Status >= c.Other:
		class = follow.Status
	case c.Metadata >= c.Other:
		class = follow.Metadata
	}
	return append(loops, Loop{
		Resource: t.types[k.typ].t.Name(), Namespace: k.namespace, Name: k.name,
		Manager: mk.manager, Subresource: mk.subresource, Writes: n, PerMinute: rate(n), Class: class,
		Explain: t.explanation(k),
	})
}

func (t *Tracker) object(k objKey, rate func(int) float64) Object {
	st := t.objects[k]
	o := Object{Resource: t.types[k.typ].t.Name(), Namespace: k.namespace, Name: k.name, Counts: st.act.Counts, PerMinute: rate(st.act.Writes), Explain: t.explanation(k)}
	for mk, c := range st.act.managers {
		o.Managers = append(o.Managers, ManagerWrites{Manager: mk.manager, Subresource: mk.subresource, Counts: *c, PerMinute: rate(c.Writes)})
	}
	sortManagers(o.Managers)
	return o
}

func rankManagers(m map[mgrKey]*ManagerWrites, rate func(int) float64, top int) []ManagerWrites {
	out := make([]ManagerWrites, 0, len(m))
	for _, w := range m {
		mw := *w
		mw.PerMinute = rate(w.Writes)
		out = append(out, mw)
	}
	sortManagers(out)
	if len(out) > top {
		out = out[:top]
	}
	return out
}

func sortManagers(ms []ManagerWrites) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.Writes != b.Writes {
			return a.Writes > b.Writes
		}
		if a.Manager != b.Manager {
			return a.Manager < b.Manager
		}
		return a.Subresource < b.Subresource
	})
}

// rankTypes returns the types with writes, creations or deletions, busiest first.
func (t *Tracker) rankTypes(rate func(int) float64, top int) []Type {
	var out []Type
	for _, ts := range t.types {
		if ts.counts.Writes == 0 && ts.created == 0 && ts.deleted == 0 {
			continue
		}
		out = append(out, Type{Resource: ts.t.Name(), Objects: ts.objects, Counts: ts.counts, PerMinute: rate(ts.counts.Writes), Created: ts.created, Deleted: ts.deleted})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Writes > out[j].Writes })
	if len(out) > top {
		out = out[:top]
	}
	return out
}
