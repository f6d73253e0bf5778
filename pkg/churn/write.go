package churn

import (
	"encoding/json"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// write counts a new version of a known object. afterGap marks a change
// seen only by a relist: it counts once, however many writes hid behind it,
// and feeds no fight.
func (t *Tracker) write(at time.Time, k objKey, st *objState, u *unstructured.Unstructured, afterGap bool) {
	entries := t.readEntries(u, true)
	gen := u.GetGeneration()
	bumped := gen != 0 && st.gen != 0 && gen != st.gen
	w := pickWriter(st, entries, bumped, gen != 0)
	var writer *entry
	if w >= 0 {
		writer = &entries[w]
	}
	class := classify(bumped, gen != 0, writer)
	if st.act == nil {
		st.act = &activity{managers: map[mgrKey]*Counts{}, selfWrites: map[mgrKey]int{}}
	} else if writer != nil && !afterGap {
		t.fightsOf(at, k, st, entries, writer)
	}
	if writer != nil && !afterGap && class != follow.Spec && (st.act.lastID == nil || sameManager(st.act.lastID, writer.id)) {
		st.act.selfWrites[mgrKey{manager: writer.id.manager, subresource: writer.id.subresource}]++
	}
	st.rv, st.gen, st.entries = u.GetResourceVersion(), gen, entries
	st.act.add(class)
	t.types[k.typ].counts.add(class)
	mk := mgrKey{manager: "(unknown)"}
	if writer != nil {
		mk = mgrKey{manager: writer.id.manager, subresource: writer.id.subresource}
		st.act.lastID = writer.id
	}
	m := t.managers[mk]
	if m == nil {
		m = &ManagerWrites{Manager: mk.manager, Subresource: mk.subresource}
		t.managers[mk] = m
	}
	m.Counts.add(class)
	c := st.act.managers[mk]
	if c == nil {
		c = &Counts{}
		st.act.managers[mk] = c
		m.Objects++
	}
	c.add(class)
}

// pickWriter returns the index in entries of the entry that made this
// version, or -1. On a live server the writer's entry is the one whose
// time moved. Times have a one-second granularity, so several writes
// within a second leave it unmoved; the writer is then the entry that is
// new, or whose field set changed and grew, or, when nothing moved (the
// same fields rewritten), a /status entry when the type has a generation
// that did not move (a spec write would have bumped it; a metadata write is
// rarer), else one of the latest entries (never a /status one for a
// generation bump), the previous writer first. Within one second the
// attribution from metadata alone is a best guess.
func pickWriter(st *objState, entries []entry, bumped, hasGen bool) int {
	old := map[*entryID]*entry{}
	for i := range st.entries {
		old[st.entries[i].id] = &st.entries[i]
	}
	var latest int64
	for _, e := range entries {
		latest = max(latest, e.time)
	}
	best, bestScore := -1, 0
	for i, e := range entries {
		o := old[e.id]
		status := e.id.subresource == "status"
		score := 0
		switch {
		case bumped && status:
		case o == nil:
			score = 8
		case e.time > o.time:
			score = 9
		case e.fp != o.fp && e.rawLen >= o.rawLen:
			score = 7
		default:
			switch {
			case hasGen && !bumped && status:
				score = 3
			case e.time == latest:
				score = 1
			}
			if score > 0 && e.id == lastID(st) {
				score++
			}
		}
		if score > bestScore || score == bestScore && score > 0 && e.time > entries[best].time {
			best, bestScore = i, score
		}
	}
	return best
}

// sameManager says whether two entries are one manager's through one
// subresource (its Apply and Update entries are one writer).
func sameManager(a, b *entryID) bool {
	return a.manager == b.manager && a.subresource == b.subresource
}

func lastID(st *objState) *entryID {
	if st.act == nil {
		return nil
	}
	return st.act.lastID
}

// classify classifies a write from the generation and the writer's entry:
// what it touched is what its field set owns, the best churn knows without
// the objects.
func classify(bumped, hasGen bool, w *entry) follow.Class {
	cw := follow.Write{GenerationBumped: bumped, HasGeneration: hasGen}
	if w != nil {
		cw.Subresource = w.id.subresource
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(w.raw), &top) == nil {
			for k := range top {
				cw.Touched |= follow.PartOf(strings.TrimPrefix(k, "f:"))
			}
		}
	}
	return follow.Classify(cw)
}

// fightsOf finds the fields the writer took from other managers in this
// write (fields its set gained that another set lost) and records each
// hand-over in the field's FieldWriters, as watch does.
func (t *Tracker) fightsOf(at time.Time, k objKey, st *objState, entries []entry, writer *entry) {
	old := map[*entryID]*entry{}
	for i := range st.entries {
		old[st.entries[i].id] = &st.entries[i]
	}
	ow := old[writer.id]
	if ow != nil && ow.fp == writer.fp {
		return
	}
	gained := decode(writer.raw)
	if ow != nil {
		gained = gained.Difference(decode(ow.raw))
	}
	if gained.Empty() {
		return
	}
	now := map[*entryID]*entry{}
	for i := range entries {
		now[entries[i].id] = &entries[i]
	}
	for _, o := range st.entries {
		if o.id == writer.id {
			continue
		}
		lost := decode(o.raw)
		if n := now[o.id]; n != nil {
			if n.fp == o.fp {
				continue
			}
			lost = lost.Difference(decode(n.raw))
		}
		gained.Intersection(lost).Leaves().Iterate(func(p fieldpath.Path) {
			t.handOver(at, k, st, p.String(), managerName(o.id), managerName(writer.id))
		})
	}
}

func (t *Tracker) handOver(at time.Time, k objKey, st *objState, field, from, to string) {
	if st.act.fields == nil {
		st.act.fields = map[string]*fieldFight{}
	}
	ff := st.act.fields[field]
	if ff == nil {
		ff = &fieldFight{}
		st.act.fields[field] = ff
		// The field's first hand-over: the loser held it until now.
		ff.writers.Write(from, at, t.cfg.FightThreshold, t.cfg.FightWindow)
	}
	f, first := ff.writers.Write(to, at, t.cfg.FightThreshold, t.cfg.FightWindow)
	if f == nil {
		return
	}
	f.Object, f.Namespace, f.Field = t.types[k.typ].t.Name()+"/"+k.name, k.namespace, field
	if !first && ff.reported != nil {
		ff.reported.Fight = *f
		return
	}
	ff.reported = &Fight{Resource: t.types[k.typ].t.Name(), Fight: *f}
	t.fights = append(t.fights, ff.reported)
}

func managerName(id *entryID) string {
	if id.subresource != "" {
		return id.manager + " (" + id.subresource + ")"
	}
	return id.manager
}

func decode(raw string) *fieldpath.Set {
	s := &fieldpath.Set{}
	if raw == "" {
		return s
	}
	if err := s.FromJSON(strings.NewReader(raw)); err != nil {
		return &fieldpath.Set{}
	}
	return s
}

// relisted handles the end of a relist after a 410 Gone: a Gap, and the
// changes found by comparing the relist with what was known.
func (t *Tracker) relisted(ev follow.Event, ti int32, items []*unstructured.Unstructured) {
	g := follow.GapOf(ev)
	g.Resource = t.types[ti].t.Name()
	seen := make(map[objKey]bool, len(items))
	for _, u := range items {
		k := t.key(ti, u)
		seen[k] = true
		st := t.objects[k]
		switch {
		case st != nil && st.rv != "" && st.uid == hash(string(u.GetUID())):
			if st.rv != u.GetResourceVersion() {
				t.write(ev.Time, k, st, u, true)
				g.Changes++
			}
		default:
			if st != nil || t.synced[ev.Resource] {
				t.types[ti].created++
				g.Changes++
			}
			t.remember(k, u)
		}
	}
	for k, st := range t.objects {
		if k.typ == ti && !seen[k] && st.rv != "" {
			t.types[ti].deleted++
			g.Changes++
			t.forget(k)
		}
	}
	t.gaps = append(t.gaps, g)
}
