package churn

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

var (
	cmType     = apitypes.Type{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
	deployType = apitypes.Type{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Kind: "Deployment", Namespaced: true}
	t0         = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
)

// mf is one managedFields entry: manager, subresource, seconds after t0,
// and its fieldsV1.
type mf struct {
	manager, sub string
	at           int
	fields       string
}

// meta builds an object as a metadata Source returns it.
func meta(ty apitypes.Type, name string, rv, gen int, entries ...mf) *unstructured.Unstructured {
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: strconv.Itoa(rv), Generation: int64(gen),
	}}
	for _, e := range entries {
		tm := metav1.NewTime(t0.Add(time.Duration(e.at) * time.Second))
		p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: e.manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Subresource: e.sub,
			Time: &tm, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(e.fields)},
		})
	}
	return &unstructured.Unstructured{Object: follow.MetadataObject(p)}
}

func listed(tr *Tracker, ty apitypes.Type, objs ...*unstructured.Unstructured) {
	key := follow.ResourceKey(ty.Resource)
	for _, u := range objs {
		tr.Observe(follow.Event{Type: follow.List, Time: t0, Resource: key, Reason: follow.SyncInitial, Object: u})
	}
	tr.Observe(follow.Event{Type: follow.Synced, Time: t0, Resource: key, Reason: follow.SyncInitial, ResourceVersion: "1"})
}

func modified(tr *Tracker, ty apitypes.Type, at time.Duration, u *unstructured.Unstructured) {
	tr.Observe(follow.Event{Type: follow.Modified, Time: t0.Add(at), Resource: follow.ResourceKey(ty.Resource), Object: u})
}

const (
	createFields = `{"f:data":{".":{},"f:k":{}}}`
	stampFields  = `{"f:metadata":{"f:annotations":{".":{},"f:stamp":{}}}}`
)

// A manager re-stamping an annotation five times a second is a metadata
// self-loop; quiet objects stay out of the report.
func TestTrackerMetadataLoop(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
	var quiet []*unstructured.Unstructured
	for i := range 100 {
		quiet = append(quiet, meta(cmType, fmt.Sprintf("quiet-%d", i), 2+i, 0, mf{"kubectl-create", "", 0, createFields}))
	}
	listed(tr, cmType, append(quiet, meta(cmType, "hot", 200, 0, mf{"kubectl-create", "", 0, createFields}))...)
	for i := range 50 {
		at := time.Duration(i) * 200 * time.Millisecond
		modified(tr, cmType, at, meta(cmType, "hot", 201+i, 0, mf{"kubectl-create", "", 0, createFields}, mf{"looper", "", int(at / time.Second), stampFields}))
	}
	r := tr.Report(t0.Add(10 * time.Second))
	if r.ObjectsWatched != 101 || r.Writes != 50 {
		t.Errorf("watched %d objects and %d writes, want 101 and 50", r.ObjectsWatched, r.Writes)
	}
	if len(r.Objects) != 1 || r.Objects[0].Name != "hot" {
		t.Fatalf("objects ranked: %+v, want only hot", r.Objects)
	}
	want := []Loop{{Resource: "configmaps", Namespace: "ns", Name: "hot", Manager: "looper", Writes: 50, PerMinute: 300, Class: follow.Metadata}}
	if d := cmp.Diff(want, r.Loops); d != "" {
		t.Errorf("loops (-want +got):\n%s", d)
	}
	if d := cmp.Diff(Counts{Writes: 50, Metadata: 50}, r.Objects[0].Counts); d != "" {
		t.Errorf("classes (-want +got):\n%s", d)
	}
	if len(r.Fights) != 0 {
		t.Errorf("fights: %+v, want none", r.Fights)
	}
}

// Status writes through /status are a status loop; a generation bump is a
// spec write, never a loop.
func TestTrackerStatusLoopAndSpecWrites(t *testing.T) {
	cfg := NewConfig()
	cfg.LoopRate = 19
	tr := NewTracker(cfg, []apitypes.Type{deployType}, t0)
	spec := mf{"kubectl", "", 0, `{"f:spec":{"f:replicas":{}}}`}
	listed(tr, deployType, meta(deployType, "web", 2, 1, spec))
	rv := 3
	for i := range 20 {
		modified(tr, deployType, time.Duration(i)*time.Second, meta(deployType, "web", rv, 1, spec, mf{"operator", "status", i, `{"f:status":{"f:at":{}}}`}))
		rv++
	}
	for i := range 3 {
		modified(tr, deployType, time.Duration(20+i)*time.Second, meta(deployType, "web", rv, 2+i, mf{"kubectl", "", 20 + i, `{"f:spec":{"f:replicas":{}}}`}, mf{"operator", "status", 19, `{"f:status":{"f:at":{}}}`}))
		rv++
	}
	r := tr.Report(t0.Add(time.Minute))
	want := []Loop{{Resource: "deployments.apps", Namespace: "ns", Name: "web", Manager: "operator", Subresource: "status", Writes: 20, PerMinute: 20, Class: follow.Status}}
	if d := cmp.Diff(want, r.Loops); d != "" {
		t.Errorf("loops (-want +got):\n%s", d)
	}
	if d := cmp.Diff(Counts{Writes: 23, Spec: 3, Status: 20}, r.Objects[0].Counts); d != "" {
		t.Errorf("classes (-want +got):\n%s", d)
	}
}

// Two managers taking a ConfigMap's key from each other fight; neither is
// a self-loop, although each writes often without a generation change (both
// were listed as loops). A manager whose writes are each preceded by
// another's is no loop either; one rewriting its own field is, from its
// second write on (the first followed another writer's).
func TestTrackerFightersAreNoSelfLoops(t *testing.T) {
	cfg := NewConfig()
	cfg.LoopRate = 10 // each fighter writes 15 times a minute
	tr := NewTracker(cfg, []apitypes.Type{cmType}, t0)
	owns := `{"f:data":{".":{},"f:k":{}}}`
	listed(tr, cmType, meta(cmType, "tug", 2, 0, mf{"a", "", 0, owns}))
	rv := 3
	for i := range 40 {
		var a, b mf
		if i%2 == 0 {
			a, b = mf{"a", "", 0, `{"f:data":{".":{}}}`}, mf{"b", "", i, `{"f:data":{"f:k":{}}}`}
		} else {
			a, b = mf{"a", "", i, owns}, mf{"b", "", i - 1, `{}`}
		}
		modified(tr, cmType, time.Duration(i)*time.Second, meta(cmType, "tug", rv, 0, a, b))
		rv++
	}
	for i := range 40 {
		modified(tr, cmType, time.Duration(40+i)*time.Second, meta(cmType, "tug", rv, 0, mf{"a", "", 39, owns}, mf{"b", "", 38, `{}`}, mf{"looper", "", 40 + i, stampFields}))
		rv++
	}
	r := tr.Report(t0.Add(80 * time.Second))
	if len(r.Fights) != 1 || !cmp.Equal(r.Fights[0].Managers, []string{"a", "b"}) {
		t.Fatalf("fights: %+v, want one between a and b", r.Fights)
	}
	want := []Loop{{Resource: "configmaps", Namespace: "ns", Name: "tug", Manager: "looper", Writes: 39, PerMinute: 29.3, Class: follow.Metadata}}
	if d := cmp.Diff(want, r.Loops); d != "" {
		t.Errorf("loops (-want +got):\n%s", d)
	}
}

// Two managers taking .spec.replicas from each other fight, as watch says.
func TestTrackerFight(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{deployType}, t0)
	base := `{"f:spec":{"f:template":{}}}`
	replicas := `{"f:spec":{"f:replicas":{},"f:template":{}}}`
	listed(tr, deployType, meta(deployType, "web", 2, 1, mf{"a", "", 0, replicas}))
	for i := range 8 {
		var a, b mf
		if i%2 == 0 {
			a, b = mf{"a", "", 0, base}, mf{"b", "", i, `{"f:spec":{"f:replicas":{}}}`}
		} else {
			a, b = mf{"a", "", i, replicas}, mf{"b", "", i - 1, `{}`}
		}
		modified(tr, deployType, time.Duration(i)*time.Second, meta(deployType, "web", 3+i, 2+i, a, b))
	}
	r := tr.Report(t0.Add(10 * time.Second))
	if len(r.Fights) != 1 {
		t.Fatalf("fights: %+v, want one", r.Fights)
	}
	f := r.Fights[0]
	if f.Field != ".spec.replicas" || !cmp.Equal(f.Managers, []string{"a", "b"}) || f.Flips < 4 {
		t.Errorf("fight %+v, want .spec.replicas between a and b", f)
	}
	if len(r.Loops) != 0 {
		t.Errorf("loops %+v: spec writes are no loop", r.Loops)
	}
}

// A relist after 410 Gone records a gap and counts what changed in it once.
func TestTrackerGap(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
	listed(tr, cmType, meta(cmType, "a", 2, 0), meta(cmType, "b", 3, 0))
	key := follow.ResourceKey(cmType.Resource)
	for _, u := range []*unstructured.Unstructured{meta(cmType, "a", 9, 0), meta(cmType, "c", 10, 0)} {
		tr.Observe(follow.Event{Type: follow.List, Time: t0, Resource: key, Reason: follow.SyncRelist, Object: u})
	}
	tr.Observe(follow.Event{Type: follow.Synced, Time: t0, Resource: key, Reason: follow.SyncRelist, ResourceVersion: "11", GapFrom: "3", GapError: "too old"})
	r := tr.Report(t0.Add(time.Minute))
	revisions := uint64(8)
	want := []follow.Gap{{Resource: "configmaps", From: "3", To: "11", Revisions: &revisions, Changes: 3, Error: "too old", Time: t0}}
	if d := cmp.Diff(want, r.Gaps); d != "" {
		t.Errorf("gaps (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]Type{{Resource: "configmaps", Objects: 2, Counts: Counts{Writes: 1, Other: 1}, PerMinute: 1, Created: 1, Deleted: 1}}, r.Types); d != "" {
		t.Errorf("types (-want +got):\n%s", d)
	}
}

// Within one second no entry time moves: the writer is told from the
// field sets and from what the generation says.
func TestPickWriterWithinOneSecond(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{deployType}, t0)
	spec := mf{"hpa", "", 7, `{"f:spec":{"f:replicas":{}}}`}
	status := mf{"kcm", "status", 7, `{"f:status":{"f:replicas":{}}}`}
	read := func(u *unstructured.Unstructured) *objState {
		return &objState{gen: u.GetGeneration(), entries: tr.readEntries(u, true)}
	}
	old := read(meta(deployType, "web", 2, 3, spec, status))
	for _, tc := range []struct {
		name   string
		newGen int
		want   string
	}{{"generation bumped: the spec writer", 4, "hpa"}, {"generation unmoved: the status writer", 3, "kcm"}} {
		u := meta(deployType, "web", 3, tc.newGen, spec, status)
		entries := tr.readEntries(u, true)
		w := pickWriter(old, entries, tc.newGen != 3, true)
		if w < 0 || entries[w].id.manager != tc.want {
			t.Errorf("%s: writer %d, want %s", tc.name, w, tc.want)
		}
	}
}

// A status write in the same second as the status writer's previous one
// is the status writer's, even when a spec writer wrote later.
func TestPickWriterStatusOlderThanSpec(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{deployType}, t0)
	spec := mf{"hpa", "", 8, `{"f:spec":{"f:replicas":{}}}`}
	status := mf{"kcm", "status", 7, `{"f:status":{"f:replicas":{}}}`}
	old := &objState{gen: 3, entries: tr.readEntries(meta(deployType, "web", 2, 3, spec, status), true), act: &activity{}}
	old.act.lastID = old.entries[0].id
	entries := tr.readEntries(meta(deployType, "web", 3, 3, spec, status), true)
	if w := pickWriter(old, entries, false, true); w != 1 {
		t.Errorf("writer %d, want the status entry", w)
	}
}

// Deleted objects written a few times are forgotten, but their writes stay
// counted in their type and manager; busy ones stay ranked.
func TestTrackerForgetsShortLivedObjects(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
	listed(tr, cmType, meta(cmType, "brief", 2, 0), meta(cmType, "busy", 3, 0))
	rv := 4
	write := func(name string, n int) {
		for i := range n {
			modified(tr, cmType, time.Duration(rv)*time.Second, meta(cmType, name, rv, 0, mf{"job", "", i, stampFields}))
			rv++
		}
	}
	write("brief", 2)
	write("busy", 6)
	for _, name := range []string{"brief", "busy"} {
		tr.Observe(follow.Event{Type: follow.Deleted, Time: t0, Resource: follow.ResourceKey(cmType.Resource), Object: meta(cmType, name, rv, 0)})
		rv++
	}
	if len(tr.objects) != 1 {
		t.Errorf("kept %d objects, want only the busy one", len(tr.objects))
	}
	r := tr.Report(t0.Add(time.Minute))
	if r.Writes != 8 || len(r.Objects) != 1 || r.Objects[0].Name != "busy" || r.ObjectsWatched != 0 {
		t.Errorf("report: %d writes, objects %+v, %d watched", r.Writes, r.Objects, r.ObjectsWatched)
	}
	if d := cmp.Diff([]ManagerWrites{{Manager: "job", Counts: Counts{Writes: 8, Metadata: 8}, PerMinute: 8, Objects: 2}}, r.Managers); d != "" {
		t.Errorf("managers (-want +got):\n%s", d)
	}
}
