package inspect

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unique"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Summary is what a watch saw, printed when it ends.
type Summary struct {
	Started  time.Time       `json:"started"`
	Ended    time.Time       `json:"ended"`
	Duration follow.Duration `json:"duration"`
	// Writes counts modifications seen, Creates creations and Deletes
	// deletions: as churn does, a creation is not a write.
	Creates int `json:"creates"`
	Writes  int `json:"writes"`
	Deletes int `json:"deletes"`
	// Objects are the written objects, most written first.
	Objects []ObjectSummary `json:"objects"`
	// Managers are the writers, most writes first.
	Managers []ManagerSummary `json:"managers"`
	// HotFields are the most written fields.
	HotFields []FieldSummary `json:"hotFields"`
	Gaps      []follow.Gap   `json:"gaps"`
	Fights    []follow.Fight `json:"fights"`
}

// ObjectSummary counts the writes of one object by churn class.
type ObjectSummary struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`
	Resource  string `json:"resource"`
	Writes    int    `json:"writes"`
	// Spec, Status, Metadata and Other split Writes by Churn.
	Spec     int      `json:"spec"`
	Status   int      `json:"status"`
	Metadata int      `json:"metadata"`
	Other    int      `json:"other"`
	Managers []string `json:"managers,omitempty"`
	Deleted  bool     `json:"deleted,omitempty"`
	// Hot is true when the object was written faster than the hot rate at
	// some point; PeakRate is its highest rate in writes per second.
	Hot      bool    `json:"hot,omitempty"`
	PeakRate float64 `json:"peakRate,omitempty"`
}

// ManagerSummary counts one manager's writes.
type ManagerSummary struct {
	Manager string `json:"manager"`
	Writes  int    `json:"writes"`
	// Fields is how many distinct fields it changed, Objects how many objects.
	Fields  int `json:"fields"`
	Objects int `json:"objects"`
}

// FieldSummary counts the writes of one field of one object.
type FieldSummary struct {
	Object    string   `json:"object"`
	Namespace string   `json:"namespace,omitempty"`
	Field     string   `json:"field"`
	Writes    int      `json:"writes"`
	Managers  []string `json:"managers"`
}

// stats is what the Summary is made of. What it keeps of each written
// object (objStats) hangs off the object's state while the object lives, and
// moves to gone when it is deleted, so that an object costs no second map
// entry; managers and field paths are interned, since few managers write
// the same few fields of many objects.
type stats struct {
	creates, writes, deletes int
	// managers counts each known writer's writes; how many objects and
	// fields each wrote is counted from the objects' managers at the end.
	managers map[string]int
	// gone holds the stats of deleted objects, by key.
	gone map[objKey]*objStats
	// classes interns objClasses.
	classes map[objClass]*objClass
	// fieldClasses interns fieldClasses.
	fieldClasses map[fieldClass]*fieldClass
	// reported is the fight reported of each field in a bout, whose
	// counts the summary updates while the bout goes on.
	reported map[fieldRef]*follow.Fight
	gaps     []follow.Gap
	fights   []*follow.Fight
	sets     managerSets
}

// objStats is the history of one object: the write counts of its
// ObjectSummary and, per written field, the counts of its FieldSummary and
// the fight history. recent and the fight histories are those of the
// current incarnation of the object (reset when it is created again).
//
// It is kept small (80 bytes): an object is deleted when its stats are in
// stats.gone, and hot when peak is not -1.
type objStats struct {
	class                                 *objClass
	writes, spec, status, metadata, other int32
	// peak is the highest hot rate, in hundredths of writes per second
	// (the summary's precision); -1 until the object is hot.
	peak   int32
	fields []fieldState
	// recent are the wall times (Unix nanoseconds) of the latest writes,
	// for the hot rate.
	recent []int64
}

// fieldState is one written field of an object, in 48 bytes: the path and
// its writers are interned together, and the fight being reported, rare,
// is in stats.reported.
type fieldState struct {
	class   *fieldClass
	writers follow.FieldWriters
	writes  int32
}

// fieldClass is a field's path and the managers that wrote it, interned.
type fieldClass struct {
	path     unique.Handle[string]
	managers *managerSet
}

// fieldRef names a field of an object for stats.reported.
type fieldRef struct {
	obj  *objStats
	path unique.Handle[string]
}

func newStats() stats {
	return stats{managers: map[string]int{}, gone: map[objKey]*objStats{}, reported: map[fieldRef]*follow.Fight{}}
}

// objectOf returns the stats of the object of key k whose state is st (nil
// when the object is not watched), making them for a first write or
// deletion: an object deleted and created again keeps its counts, under its
// key, as the Summary shows them.
func (s *stats) objectOf(k objKey, st *objState, kind string) *objStats {
	if st != nil && st.sum != nil {
		return st.sum
	}
	o := s.gone[k]
	if o != nil {
		delete(s.gone, k)
		s.restart(o)
	} else {
		o = &objStats{class: s.classOf(kind, nil), peak: -1}
	}
	if st != nil {
		st.sum = o
	}
	return o
}

// field returns the object's state of the field at path, adding it.
func (s *stats) field(o *objStats, path unique.Handle[string]) *fieldState {
	for i := range o.fields {
		if o.fields[i].class.path == path {
			return &o.fields[i]
		}
	}
	o.fields = append(o.fields, fieldState{class: s.fieldClassOf(path, nil)})
	return &o.fields[len(o.fields)-1]
}

// restart forgets what only the previous incarnation of the object needs:
// its hot rate and fight histories.
func (s *stats) restart(o *objStats) {
	o.recent = nil
	for i := range o.fields {
		o.fields[i].writers = follow.FieldWriters{}
		delete(s.reported, fieldRef{o, o.fields[i].class.path})
	}
}

// created counts a creation: not a write (see Summary).
func (s *stats) created() { s.creates++ }

// write counts a modification of the object of key k (state st), each
// path named as in paths.
func (s *stats) write(k objKey, st *objState, kind string, e *Event, paths []unique.Handle[string]) {
	s.writes++
	o := s.objectOf(k, st, kind)
	o.writes++
	switch e.Churn {
	case follow.Spec:
		o.spec++
	case follow.Status:
		o.status++
	case follow.Metadata:
		o.metadata++
	case follow.Other:
		o.other++
	}
	manager := ""
	if e.Writer != nil && e.Writer.Known() {
		manager = writerName(*e.Writer)
		s.managers[manager]++
		o.class = s.classOf(o.class.kind, s.sets.with(o.class.managers, manager))
	}
	for _, p := range paths {
		f := s.field(o, p)
		f.writes++
		if manager != "" {
			f.class = s.fieldClassOf(p, s.sets.with(f.class.managers, manager))
		}
	}
}

// writerName is the writer as the summary and fights name it.
func writerName(w Writer) string {
	if w.Subresource != "" {
		return w.Manager + " (" + w.Subresource + ")"
	}
	return w.Manager
}

func (s *stats) deleted(k objKey, st *objState, kind string) {
	s.deletes++
	s.gone[k] = s.objectOf(k, st, kind)
}

func (s *stats) hot(o *objStats, rate float64) {
	if r := int32(math.Round(rate * 100)); r > o.peak {
		o.peak = r
	}
}

// fieldClassOf returns the interned fieldClass of path and managers.
func (s *stats) fieldClassOf(path unique.Handle[string], managers *managerSet) *fieldClass {
	return interned(&s.fieldClasses, fieldClass{path: path, managers: managers})
}

// interned returns the one pointer *table holds for v, adding v when it is
// new: equal classes share one copy.
func interned[T comparable](table *map[T]*T, v T) *T {
	if p := (*table)[v]; p != nil {
		return p
	}
	if *table == nil {
		*table = map[T]*T{}
	}
	p := &v
	(*table)[v] = p
	return p
}

// objClass is the kind of an object and the managers that wrote it,
// interned: many objects share both.
type objClass struct {
	kind     string
	managers *managerSet
}

// classOf returns the interned objClass of kind and managers.
func (s *stats) classOf(kind string, managers *managerSet) *objClass {
	return interned(&s.classes, objClass{kind: kind, managers: managers})
}

func (s *stats) fight(f follow.Fight) *follow.Fight {
	p := &f
	s.fights = append(s.fights, p)
	return p
}

// managerSet is a sorted set of manager names, interned by managerSets:
// objects and fields point to a shared one.
type managerSet struct{ names []string }

func (m *managerSet) list() []string {
	if m == nil {
		return nil
	}
	return m.names
}

type setPlus struct {
	set     *managerSet
	manager string
}

// managerSets interns managerSets; the nil set is empty.
type managerSets struct {
	byNames map[string]*managerSet
	plus    map[setPlus]*managerSet
}

// with returns the set of set's names and manager.
func (ms *managerSets) with(set *managerSet, manager string) *managerSet {
	if slices.Contains(set.list(), manager) {
		return set
	}
	if r, ok := ms.plus[setPlus{set, manager}]; ok {
		return r
	}
	names := append(slices.Clone(set.list()), manager)
	sort.Strings(names)
	var key strings.Builder
	for _, n := range names {
		key.WriteString(strconv.Itoa(len(n)))
		key.WriteByte(':')
		key.WriteString(n)
	}
	if ms.byNames == nil {
		ms.byNames, ms.plus = map[string]*managerSet{}, map[setPlus]*managerSet{}
	}
	r := ms.byNames[key.String()]
	if r == nil {
		r = &managerSet{names: names}
		ms.byNames[key.String()] = r
	}
	ms.plus[setPlus{set, manager}] = r
	return r
}

// Summary returns what the tracker saw until ended (the end of the watch;
// in a replay, the time of the last event).
func (t *Tracker) Summary(ended time.Time) Summary {
	if ended.IsZero() {
		ended = t.last
	}
	started := t.started
	if started.IsZero() {
		started = ended
	}
	s := Summary{Started: started, Ended: ended, Duration: follow.Duration(ended.Sub(started).Round(time.Millisecond)), Creates: t.stats.creates, Writes: t.stats.writes, Deletes: t.stats.deletes,
		Objects: []ObjectSummary{}, Managers: []ManagerSummary{}, HotFields: []FieldSummary{}, Gaps: []follow.Gap{}, Fights: []follow.Fight{}}
	managers := map[string]*ManagerSummary{}
	for name, n := range t.stats.managers {
		managers[name] = &ManagerSummary{Manager: name, Writes: n}
	}
	add := func(k objKey, o *objStats, deleted bool) {
		ref := objectRef(k.resource, o.class.kind, k.name)
		sum := ObjectSummary{Object: ref, Namespace: k.namespace, Resource: k.resource, Writes: int(o.writes),
			Spec: int(o.spec), Status: int(o.status), Metadata: int(o.metadata), Other: int(o.other),
			Managers: slices.Clone(o.class.managers.list()), Deleted: deleted, Hot: o.peak >= 0, PeakRate: float64(max(o.peak, 0)) / 100}
		s.Objects = append(s.Objects, sum)
		for _, m := range o.class.managers.list() {
			managers[m].Objects++
		}
		for _, f := range o.fields {
			for _, m := range f.class.managers.list() {
				managers[m].Fields++
			}
			s.HotFields = append(s.HotFields, FieldSummary{Object: ref, Namespace: k.namespace, Field: f.class.path.Value(), Writes: int(f.writes), Managers: append([]string{}, f.class.managers.list()...)})
		}
	}
	for k, st := range t.objects {
		if st.sum != nil {
			add(k, st.sum, false)
		}
	}
	for k, o := range t.stats.gone {
		add(k, o, true)
	}
	sort.Slice(s.Objects, func(i, j int) bool {
		a, b := s.Objects[i], s.Objects[j]
		if a.Writes != b.Writes {
			return a.Writes > b.Writes
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Object < b.Object
	})
	for _, m := range managers {
		s.Managers = append(s.Managers, *m)
	}
	sort.Slice(s.Managers, func(i, j int) bool {
		if s.Managers[i].Writes != s.Managers[j].Writes {
			return s.Managers[i].Writes > s.Managers[j].Writes
		}
		return s.Managers[i].Manager < s.Managers[j].Manager
	})
	sort.Slice(s.HotFields, func(i, j int) bool {
		a, b := s.HotFields[i], s.HotFields[j]
		if a.Writes != b.Writes {
			return a.Writes > b.Writes
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Field < b.Field
	})
	if len(s.HotFields) > t.cfg.TopFields {
		s.HotFields = s.HotFields[:t.cfg.TopFields]
	}
	s.Gaps = append(s.Gaps, t.stats.gaps...)
	for _, f := range t.stats.fights {
		s.Fights = append(s.Fights, *f)
	}
	return s
}

// Fights returns how many fights were seen (for --fail-on-fight).
func (t *Tracker) Fights() int { return len(t.stats.fights) }
