package inspect

import (
	"math"
	"sort"
	"strings"
	"time"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/diff"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// TrackerConfig tunes the Tracker. NewTrackerConfig fills the defaults.
type TrackerConfig struct {
	// FightThreshold is how many times a field must change hands between
	// managers within FightWindow to be reported as a fight. Default 4.
	FightThreshold int
	// FightWindow is the window fights are counted in. Default 1m.
	FightWindow time.Duration
	// HotRate flags objects written more than this many times per second,
	// averaged over HotWindow; 0 turns it off. Default 1.
	HotRate float64
	// HotWindow is the window HotRate is measured over. Default 10s.
	HotWindow time.Duration
	// ShowBookmarks makes BOOKMARK events rows.
	ShowBookmarks bool
	// TopFields is how many of the hottest fields the Summary lists. Default 10.
	TopFields int
}

// NewTrackerConfig returns a TrackerConfig with the documented defaults.
func NewTrackerConfig() TrackerConfig {
	return TrackerConfig{FightThreshold: 4, FightWindow: time.Minute, HotRate: 1, HotWindow: 10 * time.Second, TopFields: 10}
}

// EventType is the type of a row.
type EventType string

// The row types.
const (
	EventAdded    EventType = "ADDED"
	EventModified EventType = "MODIFIED"
	EventDeleted  EventType = "DELETED"
	EventGap      EventType = "GAP"
	EventFight    EventType = "FIGHT"
	EventBookmark EventType = "BOOKMARK"
)

// Event is one row of the watch: a new version of an object, a deletion, a
// gap in history, a fight, or a bookmark.
type Event struct {
	Type EventType `json:"type"`
	// Time is when kubectl-rv received the event that led to this row.
	Time time.Time `json:"time"`
	// Resource is group/version/resource.
	Resource string `json:"resource"`
	// Object is kind.group/name ("deployment.apps/web", "pod/api-0"); for a
	// GAP, the resource.
	Object    string `json:"object,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// ResourceVersion is the new version; for DELETED the deletion's RV
	// (empty when the deletion was seen only after a gap), for GAP the RV
	// of the relist.
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// PreviousResourceVersion is the last version seen before this one.
	PreviousResourceVersion string `json:"previousResourceVersion,omitempty"`
	// Revisions is how many cluster revisions passed between the previous
	// version and this one (1 when nothing else in the cluster was written in
	// between); absent when there is no previous version.
	Revisions *uint64 `json:"revisions,omitempty"`
	// Generation is metadata.generation, when the object has one.
	Generation *int64 `json:"generation,omitempty"`
	// GenerationBumped is true when Generation moved since the previous version.
	GenerationBumped bool `json:"generationBumped,omitempty"`
	// Writer is who wrote this version (ADDED, MODIFIED, DELETED).
	Writer *Writer `json:"writer,omitempty"`
	// Fields are the changes from the previous version.
	Fields []diff.Change `json:"fields,omitempty"`
	// Churn classifies a MODIFIED write.
	Churn follow.Class `json:"churn,omitempty"`
	// Initial marks the objects of the first list.
	Initial bool `json:"initial,omitempty"`
	// AfterGap marks changes seen by comparing a relist with the last known
	// state: several writes may hide behind one row.
	AfterGap bool `json:"afterGap,omitempty"`
	// Hot is true when the object is written faster than the hot rate;
	// WriteRate is its rate in writes per second.
	Hot       bool    `json:"hot,omitempty"`
	WriteRate float64 `json:"writeRate,omitempty"`
	// Gap and Fight detail GAP and FIGHT rows.
	Gap   *follow.Gap   `json:"gap,omitempty"`
	Fight *follow.Fight `json:"fight,omitempty"`
}

// Tracker is the deterministic core of watch: it consumes follow.Events in
// order and returns the rows they make. It keeps a snapshot of the last
// version of every watched object (to diff against; about the size of the
// object's JSON) and bounded per-object histories for fights and hot
// objects, so its memory grows with the number of watched objects, not with
// the number of events. It is not safe for concurrent use.
type Tracker struct {
	cfg    TrackerConfig
	differ *diff.Differ

	objects map[objKey]*objState
	// pending holds the LIST items of a list until its SYNCED line: those
	// of an initial list as the state they start (so that a list is
	// never held whole), those of a relist as received.
	pending map[string][]pendingItem
	// synced is true for resources whose full state is known (a list was
	// made), so that an object first seen in a relist was created in the gap.
	synced map[string]bool
	// sets interns the field sets of the snapshots' entries.
	sets setCache

	started, last time.Time
	stats         stats
}

type objKey struct{ resource, namespace, name string }

// pendingItem is a LIST item waiting for its SYNCED line: u for a relist;
// for an initial list, the state it starts and what its row shows.
type pendingItem struct {
	u      *unstructured.Unstructured
	key    objKey
	st     *objState
	kind   string
	gen    int64
	hasGen bool
}

type objState struct {
	rv string
	// uid is a fingerprint of metadata.uid (see uidOf).
	uid  uint64
	snap snapshot
	// sum is what the summary, hot objects and fights keep of the object;
	// nil until it is written.
	sum *objStats
}

// NewTracker returns a Tracker; zero TrackerConfig fields take their
// defaults.
func NewTracker(cfg TrackerConfig) *Tracker {
	def := NewTrackerConfig()
	if cfg.FightThreshold <= 0 {
		cfg.FightThreshold = def.FightThreshold
	}
	if cfg.FightWindow <= 0 {
		cfg.FightWindow = def.FightWindow
	}
	if cfg.HotWindow <= 0 {
		cfg.HotWindow = def.HotWindow
	}
	if cfg.TopFields <= 0 {
		cfg.TopFields = def.TopFields
	}
	return &Tracker{
		cfg: cfg,
		differ: diff.New(diff.Options{Ignore: [][]string{
			{"metadata", "resourceVersion"},
			{"metadata", "managedFields"},
			{"metadata", "generation"},
		}}),
		objects: map[objKey]*objState{},
		pending: map[string][]pendingItem{},
		synced:  map[string]bool{},
		stats:   newStats(),
	}
}

// Observe consumes one event and returns the rows it makes, possibly none
// (a duplicate, a LIST item waiting for its SYNCED line, a hidden bookmark).
func (t *Tracker) Observe(ev follow.Event) []Event {
	if t.started.IsZero() || ev.Time.Before(t.started) {
		t.started = ev.Time
	}
	if ev.Time.After(t.last) {
		t.last = ev.Time
	}
	switch ev.Type {
	case follow.Added, follow.Modified:
		return t.write(ev)
	case follow.Deleted:
		return t.deleted(ev.Time, ev.Resource, ev.Object, ev.Object.GetResourceVersion(), false)
	case follow.Bookmark:
		if !t.cfg.ShowBookmarks {
			return nil
		}
		return []Event{{Type: EventBookmark, Time: ev.Time, Resource: ev.Resource, Object: resourceName(ev.Resource), ResourceVersion: ev.ResourceVersion}}
	case follow.List:
		t.pending[ev.Resource] = append(t.pending[ev.Resource], t.pend(ev))
		return nil
	case follow.Synced:
		items := t.pending[ev.Resource]
		delete(t.pending, ev.Resource)
		if ev.Reason == follow.SyncRelist {
			return t.relisted(ev, items)
		}
		return t.listed(ev, items)
	}
	return nil
}

// keyOf returns u's key. The resource and namespace are interned: they are
// shared by many objects, and each decoded object has its own copy.
func keyOf(resource string, u *unstructured.Unstructured) objKey {
	return objKey{resource: unique.Make(resource).Value(), namespace: unique.Make(u.GetNamespace()).Value(), name: u.GetName()}
}

// uidOf returns the FNV-1a 64-bit hash of u's metadata.uid, which the
// Tracker compares to tell an object deleted and created again under the
// same name from a new version of the same object. Keeping 8 bytes rather
// than the 36-byte UUID saves 48 bytes per object; a collision would need
// two UIDs of the same name (one per recreation) to share a 64-bit hash,
// about 1 in 1.8e19 per recreation, and would cost one row reading as a
// change instead of a deletion and a creation.
func uidOf(u *unstructured.Unstructured) uint64 {
	return fnv1a(string(u.GetUID()))
}

// write handles ADDED and MODIFIED watch events.
func (t *Tracker) write(ev follow.Event) []Event {
	k := keyOf(ev.Resource, ev.Object)
	st := t.objects[k]
	if st != nil && st.uid == uidOf(ev.Object) {
		if c, err := resourceversion.CompareResourceVersion(ev.Object.GetResourceVersion(), st.rv); err == nil && c <= 0 {
			// Already seen (a replayed event after a resume): never twice.
			return nil
		}
		return t.changed(ev.Time, EventType(ev.Type), k, st, ev.Object, false)
	}
	if ev.Type == follow.Added {
		return []Event{t.created(ev.Time, k, ev.Object, false)}
	}
	return []Event{t.firstSight(ev.Time, EventModified, k, ev.Object, false)}
}

// created records an object whose whole history is in view (created while
// watched, or in a gap of a resource whose state was known).
func (t *Tracker) created(at time.Time, k objKey, u *unstructured.Unstructured, afterGap bool) Event {
	_, entries := t.remember(k, u)
	w := attributeCreate(entries)
	e := t.baseEvent(EventAdded, at, k, u)
	e.Writer = &w
	e.AfterGap = afterGap
	// Not a write (see Summary): nor a step of the hot rate.
	t.stats.created()
	return e
}

// firstSight records an object seen for the first time without its history.
func (t *Tracker) firstSight(at time.Time, typ EventType, k objKey, u *unstructured.Unstructured, afterGap bool) Event {
	t.remember(k, u)
	e := t.baseEvent(typ, at, k, u)
	e.Writer = &Writer{Reason: ReasonFirstSight}
	e.AfterGap = afterGap
	return e
}

// remember starts the state of an object and returns it with u's entries.
func (t *Tracker) remember(k objKey, u *unstructured.Unstructured) (*objState, []*entryView) {
	st, entries := t.newState(u)
	t.install(k, st)
	return st, entries
}

// newState returns the state an object starts, and u's entries.
func (t *Tracker) newState(u *unstructured.Unstructured) (*objState, []*entryView) {
	entries, _ := readEntries(u)
	return &objState{rv: u.GetResourceVersion(), uid: uidOf(u), snap: newSnapshot(u.Object, encodeBody(u.Object), entries, &t.sets)}, entries
}

// install makes st the state of the object of key k.
func (t *Tracker) install(k objKey, st *objState) {
	if prev := t.objects[k]; prev != nil && prev.sum != nil {
		// Created again under the same name: same summary, new histories.
		st.sum = prev.sum
		t.stats.restart(st.sum)
	}
	t.objects[k] = st
}

// pend returns a LIST item as it waits for its SYNCED line: an item of an
// initial list already as the state it starts, so that the tracker keeps
// no decoded object of a list that a follow.Source delivers page by page.
func (t *Tracker) pend(ev follow.Event) pendingItem {
	if ev.Reason != follow.SyncInitial {
		return pendingItem{u: ev.Object}
	}
	u := ev.Object
	k := keyOf(ev.Resource, u)
	st, _ := t.newState(u)
	p := pendingItem{key: k, st: st, kind: unique.Make(u.GetKind()).Value()}
	if g, found, err := unstructured.NestedInt64(u.Object, "metadata", "generation"); err == nil && found {
		p.gen, p.hasGen = g, true
	}
	return p
}

func (t *Tracker) baseEvent(typ EventType, at time.Time, k objKey, u *unstructured.Unstructured) Event {
	e := Event{Type: typ, Time: at, Resource: k.resource, Object: objectRef(k.resource, u.GetKind(), k.name), Namespace: k.namespace, Name: k.name, ResourceVersion: u.GetResourceVersion()}
	if g, found, err := unstructured.NestedInt64(u.Object, "metadata", "generation"); err == nil && found {
		e.Generation = &g
	}
	return e
}

// changed records a new version of a known object.
func (t *Tracker) changed(at time.Time, typ EventType, k objKey, st *objState, u *unstructured.Unstructured, afterGap bool) []Event {
	e := t.baseEvent(typ, at, k, u)
	e.AfterGap = afterGap
	e.PreviousResourceVersion = st.rv
	e.Revisions = follow.RevisionsBetween(st.rv, e.ResourceVersion)
	body := encodeBody(u.Object)
	oldGen, oldFound := e.Generation, e.Generation != nil
	if !st.snap.unchanged(body) {
		old, cur, metaChanged := st.snap.changedFields(k, string(u.GetUID()), body, u.Object)
		e.Fields = t.differ.Objects(old, cur)
		if metaChanged {
			oldGen, oldFound = generationOf(old)
		}
	}
	paths := make([]fieldpath.Path, len(e.Fields))
	names := make([]unique.Handle[string], len(e.Fields))
	for i, c := range e.Fields {
		paths[i] = c.Path
		names[i] = unique.Make(c.Path.String())
	}
	entries, err := readEntries(u)
	var w Writer
	if err != nil {
		w = Writer{Reason: "invalid managedFields: " + strings.ReplaceAll(err.Error(), "\n", " ")}
	} else {
		w = attribute(st.snap.views(), entries, paths)
	}
	e.Writer = &w
	e.GenerationBumped = e.Generation != nil && (!oldFound || *oldGen != *e.Generation)
	e.Churn = follow.Classify(follow.Write{GenerationBumped: e.GenerationBumped, HasGeneration: e.Generation != nil, Subresource: w.Subresource, Touched: touched(paths)})

	st.rv, st.snap = e.ResourceVersion, newSnapshot(u.Object, body, entries, &t.sets)
	t.stats.write(k, st, u.GetKind(), &e, names)
	t.hot(st, &e, at)
	out := []Event{e}
	if w.Known() && !afterGap {
		out = append(out, t.fights(at, st.sum, &e, w, names)...)
	}
	return out
}

// touched returns the parts of the object the changed paths are in.
func touched(paths []fieldpath.Path) follow.Parts {
	var p follow.Parts
	for _, path := range paths {
		if len(path) > 0 && path[0].FieldName != nil {
			p |= follow.PartOf(*path[0].FieldName)
		}
	}
	return p
}

func (t *Tracker) deleted(at time.Time, resource string, u *unstructured.Unstructured, rv string, afterGap bool) []Event {
	k := keyOf(resource, u)
	e := t.baseEvent(EventDeleted, at, k, u)
	e.ResourceVersion = rv
	e.AfterGap = afterGap
	e.Writer = &Writer{Reason: ReasonDeleted}
	st := t.objects[k]
	if st != nil {
		e.PreviousResourceVersion = st.rv
		e.Revisions = follow.RevisionsBetween(st.rv, rv)
		delete(t.objects, k)
	}
	t.stats.deleted(k, st, u.GetKind())
	return []Event{e}
}

// listed handles the end of the initial list: every object is a row.
func (t *Tracker) listed(ev follow.Event, items []pendingItem) []Event {
	t.synced[ev.Resource] = true
	out := make([]Event, 0, len(items))
	for _, p := range items {
		var e Event
		if p.u != nil {
			e = t.firstSight(ev.Time, EventAdded, keyOf(ev.Resource, p.u), p.u, false)
		} else {
			// As firstSight makes it, from what the item kept.
			t.install(p.key, p.st)
			k := p.key
			e = Event{Type: EventAdded, Time: ev.Time, Resource: k.resource, Object: objectRef(k.resource, p.kind, k.name), Namespace: k.namespace, Name: k.name,
				ResourceVersion: p.st.rv, Writer: &Writer{Reason: ReasonFirstSight}}
			if p.hasGen {
				g := p.gen
				e.Generation = &g
			}
		}
		e.Initial = true
		out = append(out, e)
	}
	return out
}

// relisted handles the end of a relist after a 410 Gone: a GAP row, then
// the changes visible by comparing the relist with the last known state.
func (t *Tracker) relisted(ev follow.Event, pending []pendingItem) []Event {
	gap := follow.GapOf(ev)
	var rows []Event
	seen := make(map[objKey]bool, len(pending))
	for _, p := range pending {
		u := p.u
		if u == nil {
			// An initial list's item ended by a relist's SYNCED line, which
			// no stream writes: taken in silently.
			t.install(p.key, p.st)
			seen[p.key] = true
			continue
		}
		k := keyOf(ev.Resource, u)
		seen[k] = true
		st := t.objects[k]
		switch {
		case st != nil && st.uid == uidOf(u):
			if st.rv == u.GetResourceVersion() {
				continue
			}
			rows = append(rows, t.changed(ev.Time, EventModified, k, st, u, true)...)
		case st != nil:
			// Deleted and created again in the gap.
			rows = append(rows, t.deleted(ev.Time, ev.Resource, st.snap.unstructured(k), "", true)...)
			rows = append(rows, t.created(ev.Time, k, u, true))
		case t.synced[ev.Resource]:
			rows = append(rows, t.created(ev.Time, k, u, true))
		default:
			// Started with --since: objects not written after the gap's
			// start are taken in silently.
			if c, err := resourceversion.CompareResourceVersion(u.GetResourceVersion(), ev.GapFrom); err == nil && c <= 0 {
				t.remember(k, u)
				continue
			}
			rows = append(rows, t.firstSight(ev.Time, EventModified, k, u, true))
		}
	}
	var gone []objKey
	for k := range t.objects {
		if k.resource == ev.Resource && !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Slice(gone, func(i, j int) bool {
		if gone[i].namespace != gone[j].namespace {
			return gone[i].namespace < gone[j].namespace
		}
		return gone[i].name < gone[j].name
	})
	for _, k := range gone {
		rows = append(rows, t.deleted(ev.Time, ev.Resource, t.objects[k].snap.unstructured(k), "", true)...)
	}
	for _, r := range rows {
		if r.Type != EventFight {
			gap.Changes++
		}
	}
	t.synced[ev.Resource] = true
	t.stats.gaps = append(t.stats.gaps, gap)
	g := gap
	head := Event{Type: EventGap, Time: ev.Time, Resource: ev.Resource, Object: resourceName(ev.Resource), ResourceVersion: ev.ResourceVersion, PreviousResourceVersion: ev.GapFrom, Revisions: gap.Revisions, Gap: &g}
	return append([]Event{head}, rows...)
}

// hot updates the object's write times and flags the row when the object is
// written faster than HotRate. Only the latest ceil(HotRate*HotWindow)+1
// times are kept: enough to tell, bounded whatever the rate.
func (t *Tracker) hot(st *objState, e *Event, at time.Time) {
	if t.cfg.HotRate <= 0 {
		return
	}
	keep := int(math.Ceil(t.cfg.HotRate*t.cfg.HotWindow.Seconds())) + 1
	o := st.sum
	now := at.UnixNano()
	o.recent = append(o.recent, now)
	if len(o.recent) > keep {
		o.recent = append(o.recent[:0], o.recent[len(o.recent)-keep:]...)
	}
	n := 0
	for _, w := range o.recent {
		if time.Duration(now-w) <= t.cfg.HotWindow {
			n++
		}
	}
	rate := float64(n) / t.cfg.HotWindow.Seconds()
	if rate > t.cfg.HotRate {
		e.Hot = true
		e.WriteRate = math.Round(rate*100) / 100
		t.stats.hot(o, rate)
	}
}

// fights updates the history of every changed field and returns a FIGHT row
// for each field that changed hands FightThreshold times within FightWindow.
// A field is reported once per bout: again only after a quiet window.
// names are the changed fields' paths, as the stats counted them.
func (t *Tracker) fights(at time.Time, o *objStats, e *Event, w Writer, names []unique.Handle[string]) []Event {
	manager := writerName(w)
	var out []Event
	for _, name := range names {
		path := name.Value()
		h := t.stats.field(o, name)
		f, first := h.writers.Write(manager, at, t.cfg.FightThreshold, t.cfg.FightWindow)
		if f == nil {
			continue
		}
		f.Object, f.Namespace, f.Field = e.Object, e.Namespace, path
		if !first {
			// The bout goes on: the summary keeps the latest count.
			*t.stats.reported[fieldRef{o, name}] = *f
			continue
		}
		t.stats.reported[fieldRef{o, name}] = t.stats.fight(*f)
		out = append(out, Event{Type: EventFight, Time: at, Resource: e.Resource, Object: e.Object, Namespace: e.Namespace, Name: e.Name, ResourceVersion: e.ResourceVersion, Fight: f})
	}
	return out
}

// objectRef names an object the way kubectl does: deployment.apps/web.
func objectRef(resource, kind, name string) string {
	group := groupOf(resource)
	k := strings.ToLower(kind)
	if k == "" {
		k = resourceName(resource)
	}
	if group != "" {
		k += "." + group
	}
	return k + "/" + name
}

// groupOf returns the group of group/version/resource ("" for the core group).
func groupOf(resource string) string {
	parts := strings.Split(resource, "/")
	if len(parts) == 3 {
		return parts[0]
	}
	return ""
}

// resourceName returns resource.group for group/version/resource.
func resourceName(resource string) string {
	parts := strings.Split(resource, "/")
	switch len(parts) {
	case 3:
		return parts[2] + "." + parts[0]
	case 2:
		return parts[1]
	}
	return resource
}
