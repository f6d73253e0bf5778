package churn

import (
	"hash/fnv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Tracker is the deterministic core of churn: it consumes the
// follow.Events of a metadata Source in order, counts and
// classifies writes, finds fights, and returns the Report. It is not safe
// for concurrent use.
//
// Per object it keeps an objState: the resourceVersion, the generation and
// one entry per managedFields item (interned identity, time, fingerprint),
// about 300 bytes for a quiet object. An object written while watched also
// gets an activity (counts per manager, fight histories) and keeps its
// entries' raw field sets, to tell which fields change hands.
type Tracker struct {
	cfg   Config
	types []*typeState
	// typeIndex maps group/version/resource to an index in types.
	typeIndex map[string]int32
	objects   map[objKey]*objState
	// pending holds a relist's items until its SYNCED event.
	pending map[string][]*unstructured.Unstructured
	synced  map[string]bool
	// ids and strs intern entry identities and namespaces.
	ids  map[entryID]*entryID
	strs map[string]string

	// managers are the writes of each manager, kept as they happen so that
	// the objects forgotten on deletion still count.
	managers map[mgrKey]*ManagerWrites
	fights   []*Fight
	gaps     []follow.Gap
	explain  map[objKey]*explainState
	warnings []string
	start    time.Time
}

type typeState struct {
	t       apitypes.Type
	objects int
	counts  Counts
	created int
	deleted int
}

type objKey struct {
	typ             int32
	namespace, name string
}

type entryID struct{ manager, operation, apiVersion, subresource string }

type entry struct {
	id   *entryID
	time int64
	fp   uint64
	// rawLen is the length of the raw field set, which grows when the
	// entry gains fields: it tells the writer among entries whose sets
	// both changed within one second.
	rawLen int
	// raw is the field set's JSON, kept only for objects with activity.
	raw string
}

type objState struct {
	rv      string
	uid     uint64
	gen     int64
	entries []entry
	act     *activity
}

type mgrKey struct{ manager, subresource string }

type activity struct {
	Counts
	managers map[mgrKey]*Counts
	// selfWrites counts, per manager, its writes without a generation
	// change that no other writer preceded since its previous one: the
	// writes of a self-loop.
	selfWrites map[mgrKey]int
	fields     map[string]*fieldFight
	lastID     *entryID
	deleted    bool
}

type fieldFight struct {
	writers  follow.FieldWriters
	reported *Fight
}

// NewTracker returns a Tracker of the given types, which are watched from
// start; zero Config fields take their defaults.
func NewTracker(cfg Config, types []apitypes.Type, start time.Time) *Tracker {
	cfg = cfg.withDefaults()
	t := &Tracker{
		cfg: cfg, typeIndex: map[string]int32{}, objects: map[objKey]*objState{},
		pending: map[string][]*unstructured.Unstructured{}, synced: map[string]bool{},
		ids: map[entryID]*entryID{}, strs: map[string]string{}, explain: map[objKey]*explainState{},
		managers: map[mgrKey]*ManagerWrites{},
		start:    start,
	}
	for i, ty := range types {
		t.types = append(t.types, &typeState{t: ty})
		t.typeIndex[follow.ResourceKey(ty.Resource)] = int32(i)
	}
	return t
}

// Observe consumes one event.
func (t *Tracker) Observe(ev follow.Event) {
	ti, ok := t.typeIndex[ev.Resource]
	if !ok {
		return
	}
	switch ev.Type {
	case follow.List:
		if ev.Reason == follow.SyncInitial {
			// An initial list is taken in item by item, as its pages
			// come: none of it is held until its SYNCED.
			t.remember(t.key(ti, ev.Object), ev.Object)
			return
		}
		t.pending[ev.Resource] = append(t.pending[ev.Resource], ev.Object)
	case follow.Synced:
		items := t.pending[ev.Resource]
		delete(t.pending, ev.Resource)
		if ev.Reason == follow.SyncRelist {
			t.relisted(ev, ti, items)
		} else {
			for _, u := range items {
				t.remember(t.key(ti, u), u)
			}
		}
		t.synced[ev.Resource] = true
	case follow.Added, follow.Modified:
		k := t.key(ti, ev.Object)
		st := t.objects[k]
		switch {
		case st == nil || st.uid != hash(string(ev.Object.GetUID())):
			if st != nil || ev.Type == follow.Added {
				t.types[ti].created++
			}
			t.remember(k, ev.Object)
		case newer(ev.Object.GetResourceVersion(), st.rv):
			t.write(ev.Time, k, st, ev.Object, false)
		}
	case follow.Deleted:
		k := t.key(ti, ev.Object)
		t.types[ti].deleted++
		t.forget(k)
	}
}

// newer reports whether rv comes after old; resourceVersions that cannot
// be compared count as newer, so that no write is lost.
func newer(rv, old string) bool {
	c, err := resourceversion.CompareResourceVersion(rv, old)
	return err != nil || c > 0
}

func (t *Tracker) key(ti int32, u *unstructured.Unstructured) objKey {
	return objKey{typ: ti, namespace: t.intern(u.GetNamespace()), name: u.GetName()}
}

func (t *Tracker) intern(s string) string {
	if v, ok := t.strs[s]; ok {
		return v
	}
	t.strs[s] = s
	return s
}

func hash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// remember starts following an object seen without a write: listed,
// created, or first seen.
func (t *Tracker) remember(k objKey, u *unstructured.Unstructured) {
	if old := t.objects[k]; old == nil {
		t.types[k.typ].objects++
	}
	st := &objState{rv: u.GetResourceVersion(), uid: hash(string(u.GetUID())), gen: u.GetGeneration()}
	st.entries = t.readEntries(u, false)
	t.objects[k] = st
}

// forget stops following a deleted object. One written at least
// MinLoopWrites times stays in the rankings, without its entries; the
// others go (their writes stay counted in their type and managers), so that
// short-lived objects (Pods of Jobs, Events) do not accumulate.
func (t *Tracker) forget(k objKey) {
	st := t.objects[k]
	if st == nil {
		return
	}
	if st.act == nil || st.act.Writes < t.cfg.MinLoopWrites {
		delete(t.objects, k)
		delete(t.explain, k)
		t.types[k.typ].objects--
		return
	}
	st.act.deleted = true
	st.act.fields = nil
	st.entries = nil
	st.rv = ""
}

// readEntries reads the managedFields of an object from a metadata Source;
// keepRaw keeps the field sets.
func (t *Tracker) readEntries(u *unstructured.Unstructured, keepRaw bool) []entry {
	md, _ := u.Object["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	if len(list) == 0 {
		return nil
	}
	out := make([]entry, 0, len(list))
	for _, r := range list {
		m, _ := r.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		id := entryID{manager: str("manager"), operation: str("operation"), apiVersion: str("apiVersion"), subresource: str("subresource")}
		p, ok := t.ids[id]
		if !ok {
			p = &id
			t.ids[id] = p
		}
		raw := str(follow.RawFieldsKey)
		e := entry{id: p, fp: hash(raw), rawLen: len(raw)}
		e.time, _ = m["time"].(int64)
		if keepRaw {
			e.raw = raw
		}
		out = append(out, e)
	}
	return out
}

// withDefaults fills every zero (or negative) tunable with NewConfig's.
func (cfg Config) withDefaults() Config {
	def := NewConfig()
	orDefault(&cfg.LoopRate, def.LoopRate)
	orDefault(&cfg.MinLoopWrites, def.MinLoopWrites)
	orDefault(&cfg.FightThreshold, def.FightThreshold)
	orDefault(&cfg.FightWindow, def.FightWindow)
	orDefault(&cfg.Top, def.Top)
	orDefault(&cfg.LiveEvery, def.LiveEvery)
	orDefault(&cfg.LiveTop, def.LiveTop)
	orDefault(&cfg.ExplainSamples, def.ExplainSamples)
	return cfg
}

// orDefault sets *v to def when *v is not positive.
func orDefault[T int | int64 | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
