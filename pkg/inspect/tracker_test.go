package inspect

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

var t0 = time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)

// mf is a managedFields entry in short: manager, operation ("Apply" or
// "Update"), subresource, time offset in seconds from t0, FieldsV1 JSON.
type mf struct {
	manager, op, sub string
	sec              int
	fields           string
}

// version is one version of a Deployment named name: its RV, generation,
// replicas, an optional status.readyReplicas (-1: none) and managedFields.
type version struct {
	name     string
	uid      string
	rv       string
	gen      int64
	replicas int64
	ready    int64
	mfs      []mf
}

func (v version) object(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	uid := v.uid
	if uid == "" {
		uid = "uid-" + v.name
	}
	md := map[string]any{"name": v.name, "namespace": "shop", "uid": uid, "resourceVersion": v.rv, "generation": v.gen}
	var entries []any
	for _, m := range v.mfs {
		var f map[string]any
		if err := utiljson.Unmarshal([]byte(m.fields), &f); err != nil {
			t.Fatalf("bad fields %s: %v", m.fields, err)
		}
		e := map[string]any{"manager": m.manager, "operation": m.op, "time": t0.Add(time.Duration(m.sec) * time.Second).Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": f}
		if m.op == "Update" {
			e["apiVersion"] = "apps/v1"
		}
		if m.sub != "" {
			e["subresource"] = m.sub
		}
		entries = append(entries, e)
	}
	if entries != nil {
		md["managedFields"] = entries
	}
	o := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": md, "spec": map[string]any{"replicas": v.replicas}}
	if v.ready >= 0 {
		o["status"] = map[string]any{"readyReplicas": v.ready}
	}
	return &unstructured.Unstructured{Object: o}
}

const deploy = "apps/v1/deployments"

func ev(t testing.TB, typ follow.EventType, sec int, v version) follow.Event {
	return follow.Event{Type: typ, Time: t0.Add(time.Duration(sec) * time.Second), Resource: deploy, Object: v.object(t)}
}

func synced(sec int, reason follow.SyncReason, rv, gapFrom string) follow.Event {
	return follow.Event{Type: follow.Synced, Time: t0.Add(time.Duration(sec) * time.Second), Resource: deploy, Reason: reason, ResourceVersion: rv, GapFrom: gapFrom}
}

// row renders an event in one line for comparisons.
func row(e Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s rv=%s", e.Type, e.Object, e.ResourceVersion)
	if e.Revisions != nil {
		fmt.Fprintf(&b, " +%d", *e.Revisions)
	}
	if e.Generation != nil {
		fmt.Fprintf(&b, " gen=%d", *e.Generation)
		if e.GenerationBumped {
			b.WriteString("*")
		}
	}
	if e.Writer != nil {
		fmt.Fprintf(&b, " by=%q", e.Writer.String())
		if len(e.Writer.Candidates) > 0 {
			fmt.Fprintf(&b, "%v", e.Writer.Candidates)
		}
	}
	for _, c := range e.Fields {
		fmt.Fprintf(&b, " [%s]", c)
	}
	if e.Churn != "" {
		fmt.Fprintf(&b, " churn=%s", e.Churn)
	}
	if e.Initial {
		b.WriteString(" initial")
	}
	if e.AfterGap {
		b.WriteString(" after-gap")
	}
	if e.Hot {
		fmt.Fprintf(&b, " hot=%g", e.WriteRate)
	}
	if g := e.Gap; g != nil {
		fmt.Fprintf(&b, " gap=%s..%s changes=%d", g.From, g.To, g.Changes)
	}
	if f := e.Fight; f != nil {
		fmt.Fprintf(&b, " fight=%s %v flips=%d span=%s", f.Field, f.Managers, f.Flips, f.Span)
	}
	return b.String()
}

func observeAll(tr *Tracker, evs []follow.Event) []string {
	var out []string
	for _, e := range evs {
		for _, r := range tr.Observe(e) {
			out = append(out, row(r))
		}
	}
	return out
}

const (
	fCreate     = `{"f:spec":{"f:replicas":{}}}`
	fReady      = `{"f:status":{"f:readyReplicas":{}}}`
	fStatusBoth = `{"f:status":{"f:readyReplicas":{},"f:updatedReplicas":{}}}`
	fLabelsA    = `{"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`
)

func TestTrackerStream(t *testing.T) {
	creator := mf{"kubectl-create", "Update", "", 0, fCreate}
	v := func(rv string, gen, replicas int64, mfs ...mf) version {
		return version{name: "web", rv: rv, gen: gen, replicas: replicas, ready: -1, mfs: mfs}
	}
	tests := []struct {
		name   string
		cfg    TrackerConfig
		events []follow.Event
		want   []string
	}{
		{
			name: "initial list, then an update by a new manager",
			events: []follow.Event{
				ev(t, follow.List, 0, v("10", 1, 1, creator)),
				synced(0, follow.SyncInitial, "12", ""),
				ev(t, follow.Modified, 1, v("15", 2, 3, mf{"kubectl-create", "Update", "", 0, `{}`}, mf{"scaler", "Update", "", 1, fCreate})),
			},
			want: []string{
				`ADDED deployment.apps/web rv=10 gen=1 by="? first sight" initial`,
				`MODIFIED deployment.apps/web rv=15 +5 gen=2* by="scaler" [.spec.replicas 1->3] churn=spec`,
			},
		},
		{
			name: "a create while watching names its only manager",
			events: []follow.Event{
				synced(0, follow.SyncInitial, "5", ""),
				ev(t, follow.Added, 1, v("10", 1, 1, creator)),
			},
			want: []string{`ADDED deployment.apps/web rv=10 gen=1 by="kubectl-create"`},
		},
		{
			name: "a status write, the same RV again and an older RV are not rows",
			events: []follow.Event{
				ev(t, follow.List, 0, v("10", 1, 1, creator)),
				synced(0, follow.SyncInitial, "10", ""),
				ev(t, follow.Modified, 1, version{name: "web", rv: "11", gen: 1, replicas: 1, ready: 1, mfs: []mf{creator, {"kcm", "Update", "status", 1, fReady}}}),
				ev(t, follow.Modified, 2, version{name: "web", rv: "11", gen: 1, replicas: 1, ready: 1, mfs: []mf{creator, {"kcm", "Update", "status", 1, fReady}}}),
				ev(t, follow.Modified, 2, v("9", 1, 1, creator)),
			},
			want: []string{
				`ADDED deployment.apps/web rv=10 gen=1 by="? first sight" initial`,
				`MODIFIED deployment.apps/web rv=11 +1 gen=1 by="kcm (status)" [.status.readyReplicas +1] churn=status`,
			},
		},
		{
			name: "time not moved: the sole owner of the changed field",
			events: []follow.Event{
				ev(t, follow.List, 0, v("10", 1, 1, creator)),
				synced(0, follow.SyncInitial, "10", ""),
				ev(t, follow.Modified, 0, v("11", 2, 2, creator)),
			},
			want: []string{
				`ADDED deployment.apps/web rv=10 gen=1 by="? first sight" initial`,
				`MODIFIED deployment.apps/web rv=11 +1 gen=2* by="kubectl-create" [.spec.replicas 1->2] churn=spec`,
			},
		},
		{
			name: "deletion",
			events: []follow.Event{
				ev(t, follow.List, 0, v("10", 1, 1, creator)),
				synced(0, follow.SyncInitial, "10", ""),
				ev(t, follow.Deleted, 3, v("14", 1, 1, creator)),
			},
			want: []string{
				`ADDED deployment.apps/web rv=10 gen=1 by="? first sight" initial`,
				`DELETED deployment.apps/web rv=14 +4 gen=1 by="? deletes are not recorded in managedFields"`,
			},
		},
		{
			name: "a relist after 410 shows the gap and what changed in it",
			events: []follow.Event{
				ev(t, follow.List, 0, v("10", 1, 1, creator)),
				ev(t, follow.List, 0, version{name: "kept", rv: "8", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}}),
				ev(t, follow.List, 0, version{name: "gone", rv: "9", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}}),
				ev(t, follow.List, 0, version{name: "reborn", rv: "7", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}}),
				synced(0, follow.SyncInitial, "10", ""),
				ev(t, follow.List, 60, v("40", 3, 5, mf{"kubectl-create", "Update", "", 0, `{}`}, mf{"hpa", "Update", "", 30, fCreate})),
				ev(t, follow.List, 60, version{name: "kept", rv: "8", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}}),
				ev(t, follow.List, 60, version{name: "new", rv: "35", gen: 1, replicas: 2, ready: -1, mfs: []mf{{"argo", "Apply", "", 20, fCreate}}}),
				ev(t, follow.List, 60, version{name: "reborn", uid: "uid-2", rv: "36", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}}),
				{Type: follow.Synced, Time: t0.Add(time.Minute), Resource: deploy, Reason: follow.SyncRelist, ResourceVersion: "50", GapFrom: "20", GapError: "too old resource version: 20 (30)"},
			},
			want: []string{
				`ADDED deployment.apps/web rv=10 gen=1 by="? first sight" initial`,
				`ADDED deployment.apps/kept rv=8 gen=1 by="? first sight" initial`,
				`ADDED deployment.apps/gone rv=9 gen=1 by="? first sight" initial`,
				`ADDED deployment.apps/reborn rv=7 gen=1 by="? first sight" initial`,
				`GAP deployments.apps rv=50 +30 gap=20..50 changes=5`,
				`MODIFIED deployment.apps/web rv=40 +30 gen=3* by="hpa" [.spec.replicas 1->5] churn=spec after-gap`,
				`ADDED deployment.apps/new rv=35 gen=1 by="argo" after-gap`,
				`DELETED deployment.apps/reborn rv= gen=1 by="? deletes are not recorded in managedFields" after-gap`,
				`ADDED deployment.apps/reborn rv=36 gen=1 by="kubectl-create" after-gap`,
				`DELETED deployment.apps/gone rv= gen=1 by="? deletes are not recorded in managedFields" after-gap`,
			},
		},
		{
			name: "with --since, a relist adopts unchanged objects and shows changed ones as first sight",
			events: []follow.Event{
				ev(t, follow.List, 5, v("40", 3, 5, creator)),
				ev(t, follow.List, 5, version{name: "old", rv: "15", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}}),
				{Type: follow.Synced, Time: t0.Add(5 * time.Second), Resource: deploy, Reason: follow.SyncRelist, ResourceVersion: "50", GapFrom: "20"},
				ev(t, follow.Modified, 6, version{name: "old", rv: "51", gen: 2, replicas: 2, ready: -1, mfs: []mf{creator}}),
			},
			want: []string{
				`GAP deployments.apps rv=50 +30 gap=20..50 changes=1`,
				`MODIFIED deployment.apps/web rv=40 gen=3 by="? first sight" after-gap`,
				`MODIFIED deployment.apps/old rv=51 +36 gen=2* by="kubectl-create" [.spec.replicas 1->2] churn=spec`,
			},
		},
		{
			name: "bookmarks are rows only when asked",
			cfg:  TrackerConfig{ShowBookmarks: true},
			events: []follow.Event{
				{Type: follow.Bookmark, Time: t0, Resource: deploy, ResourceVersion: "99"},
			},
			want: []string{`BOOKMARK deployments.apps rv=99`},
		},
		{
			name:   "hidden bookmark",
			events: []follow.Event{{Type: follow.Bookmark, Time: t0, Resource: deploy, ResourceVersion: "99"}},
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := observeAll(NewTracker(tt.cfg), tt.events)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// flipping returns n writes of .spec.replicas alternating between two
// managers, one second apart, starting at RV 11.
func flipping(t *testing.T, n int, a, b string) []follow.Event {
	evs := []follow.Event{
		ev(t, follow.List, 0, version{name: "web", rv: "10", gen: 1, replicas: 1, ready: -1, mfs: []mf{{"kubectl-create", "Update", "", 0, fCreate}}}),
		synced(0, follow.SyncInitial, "10", ""),
	}
	times := map[string]int{a: -1, b: -1}
	for i := 0; i < n; i++ {
		who, other := a, b
		if i%2 == 1 {
			who, other = b, a
		}
		times[who] = i + 1
		mfs := []mf{{"kubectl-create", "Update", "", 0, `{"f:spec":{}}`}, {who, "Update", "", times[who], fCreate}}
		if times[other] >= 0 {
			mfs = append(mfs, mf{other, "Update", "", times[other], `{"f:spec":{}}`})
		}
		evs = append(evs, ev(t, follow.Modified, i+1, version{name: "web", rv: strconv.Itoa(11 + i), gen: int64(2 + i), replicas: int64(2 + i%2), ready: -1, mfs: mfs}))
	}
	return evs
}

func TestTrackerFight(t *testing.T) {
	tr := NewTracker(TrackerConfig{FightThreshold: 3, FightWindow: time.Minute, HotRate: 0})
	got := observeAll(tr, flipping(t, 6, "hpa", "argo"))
	var fights []string
	for _, r := range got {
		if strings.HasPrefix(r, "FIGHT") {
			fights = append(fights, r)
		}
	}
	want := []string{`FIGHT deployment.apps/web rv=14 fight=.spec.replicas [argo hpa] flips=3 span=3s`}
	if diff := cmp.Diff(want, fights); diff != "" {
		t.Errorf("one FIGHT row when the threshold is reached, no more in the same bout (-want +got):\n%s\nall rows:\n%s", diff, strings.Join(got, "\n"))
	}
	s := tr.Summary(time.Time{})
	if len(s.Fights) != 1 || s.Fights[0].Flips != 5 {
		t.Errorf("the summary should keep the bout's latest count (5 flips): %+v", s.Fights)
	}
	if tr.Fights() != 1 {
		t.Errorf("Fights() = %d, want 1", tr.Fights())
	}
}

func TestTrackerFightNeedsAlternation(t *testing.T) {
	tr := NewTracker(TrackerConfig{FightThreshold: 2, FightWindow: 2 * time.Second, HotRate: 0})
	// Alternating, but two seconds apart: the window never holds 2 flips.
	var evs []follow.Event
	for _, e := range flipping(t, 6, "hpa", "argo") {
		e.Time = t0.Add(e.Time.Sub(t0) * 2)
		evs = append(evs, e)
	}
	for _, r := range observeAll(tr, evs) {
		if strings.HasPrefix(r, "FIGHT") {
			t.Errorf("no fight expected outside the window, got %s", r)
		}
	}
}

func TestTrackerHot(t *testing.T) {
	tr := NewTracker(TrackerConfig{HotRate: 0.5, HotWindow: 4 * time.Second, FightThreshold: 100})
	got := observeAll(tr, flipping(t, 4, "a", "b"))
	want := []string{
		`ADDED deployment.apps/web rv=10 gen=1 by="? first sight" initial`,
		`MODIFIED deployment.apps/web rv=11 +1 gen=2* by="a" [.spec.replicas 1->2] churn=spec`,
		`MODIFIED deployment.apps/web rv=12 +1 gen=3* by="b" [.spec.replicas 2->3] churn=spec`,
		`MODIFIED deployment.apps/web rv=13 +1 gen=4* by="a" [.spec.replicas 3->2] churn=spec hot=0.75`,
		`MODIFIED deployment.apps/web rv=14 +1 gen=5* by="b" [.spec.replicas 2->3] churn=spec hot=0.75`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTrackerSummary(t *testing.T) {
	tr := NewTracker(TrackerConfig{FightThreshold: 3, HotRate: 0})
	observeAll(tr, flipping(t, 4, "hpa", "argo"))
	tr.Observe(ev(t, follow.Modified, 9, version{name: "web", rv: "20", gen: 5, replicas: 3, ready: 2, mfs: []mf{{"kubectl-create", "Update", "", 0, `{"f:spec":{}}`}, {"kcm", "Update", "status", 9, fReady}}}))
	s := tr.Summary(t0.Add(10 * time.Second))
	got := fmt.Sprintf("%s writes=%d objects=%+v managers=%+v fields=%+v fights=%d", s.Duration, s.Writes, s.Objects, s.Managers, s.HotFields, len(s.Fights))
	want := `10s writes=5 objects=[{Object:deployment.apps/web Namespace:shop Resource:apps/v1/deployments Writes:5 Spec:4 Status:1 Metadata:0 Other:0 Managers:[argo hpa kcm (status)] Deleted:false Hot:false PeakRate:0}] managers=[{Manager:argo Writes:2 Fields:1 Objects:1} {Manager:hpa Writes:2 Fields:1 Objects:1} {Manager:kcm (status) Writes:1 Fields:1 Objects:1}] fields=[{Object:deployment.apps/web Namespace:shop Field:.spec.replicas Writes:4 Managers:[argo hpa]} {Object:deployment.apps/web Namespace:shop Field:.status.readyReplicas Writes:1 Managers:[kcm (status)]}] fights=1`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestTrackerMemoryIsBoundedByObjects checks that per-object histories stay
// capped whatever the number of events: the tracker keeps the last version
// and bounded write and field histories.
func TestTrackerMemoryIsBoundedByObjects(t *testing.T) {
	cfg := TrackerConfig{FightThreshold: 3, FightWindow: time.Hour, HotRate: 2, HotWindow: 10 * time.Second}
	tr := NewTracker(cfg)
	evs := flipping(t, 2000, "hpa", "argo")
	for i := range evs {
		evs[i].Time = t0.Add(time.Duration(i) * time.Millisecond)
	}
	observeAll(tr, evs)
	if len(tr.objects) != 1 {
		t.Fatalf("want 1 object kept, got %d", len(tr.objects))
	}
	for _, st := range tr.objects {
		if max := int(cfg.HotRate*cfg.HotWindow.Seconds()) + 1; len(st.sum.recent) > max {
			t.Errorf("hot history holds %d times, want at most %d", len(st.sum.recent), max)
		}
		for _, h := range st.sum.fields {
			if max := 4*cfg.FightThreshold + 1; h.writers.Kept() > max {
				t.Errorf("fight history of %s holds %d writes, want at most %d", h.class.path.Value(), h.writers.Kept(), max)
			}
		}
		if len(tr.stats.fights) != 1 || len(st.sum.fields) != 1 {
			t.Errorf("summary state grew with events: %d fights, %d fields", len(tr.stats.fights), len(st.sum.fields))
		}
	}
}

// TestTrackerTakesInitialListItemsAsTheyCome checks that the tracker keeps
// an initial list's items as the state they start, not as decoded objects,
// while it waits for the SYNCED line, and that its rows and later rows are
// those of a list whose items it held whole.
func TestTrackerTakesInitialListItemsAsTheyCome(t *testing.T) {
	creator := mf{"kubectl-create", "Update", "", 0, fCreate}
	run := func(reason follow.SyncReason) ([]Event, *Tracker) {
		tr := NewTracker(NewTrackerConfig())
		var rows []Event
		for i, name := range []string{"web", "api", "db"} {
			e := ev(t, follow.List, 0, version{name: name, rv: fmt.Sprint(10 + i), gen: int64(1 + i), replicas: 1, ready: -1, mfs: []mf{creator}})
			e.Reason = reason
			rows = append(rows, tr.Observe(e)...)
		}
		rows = append(rows, tr.Observe(synced(0, follow.SyncInitial, "20", ""))...)
		rows = append(rows, tr.Observe(ev(t, follow.Modified, 5, version{name: "api", rv: "21", gen: 3, replicas: 2, ready: -1, mfs: []mf{{"hpa", "Update", "", 5, fCreate}}}))...)
		return rows, tr
	}
	held, _ := run("")
	tr := NewTracker(NewTrackerConfig())
	e := ev(t, follow.List, 0, version{name: "web", rv: "10", gen: 1, replicas: 1, ready: -1, mfs: []mf{creator}})
	e.Reason = follow.SyncInitial
	tr.Observe(e)
	if p := tr.pending[deploy]; len(p) != 1 || p[0].u != nil || p[0].st == nil {
		t.Errorf("want the pending item kept as its state, without the object, got %+v", p)
	}
	got, _ := run(follow.SyncInitial)
	if len(got) != 4 {
		t.Fatalf("want 4 rows, got %d", len(got))
	}
	if diff := cmp.Diff(held, got); diff != "" {
		t.Errorf("rows (-held whole +taken as they come):\n%s", diff)
	}
}

// TestTrackerClassesWritesAsDocumented checks the churn class of writes
// that change .status and an annotation at once: docs/watch.md reserves
// other for objects without a generation, and a /status write is status
// (both were other).
func TestTrackerClassesWritesAsDocumented(t *testing.T) {
	const both = `{"f:metadata":{"f:annotations":{".":{},"f:note":{}}},"f:status":{"f:readyReplicas":{}}}`
	tests := []struct {
		name string
		sub  string
		want follow.Class
	}{
		{"through /status", "status", follow.Status},
		{"through the main resource", "", follow.Metadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker(NewTrackerConfig())
			tr.Observe(ev(t, follow.List, 0, version{name: "web", rv: "10", gen: 1, replicas: 1, ready: 1, mfs: []mf{{"ctl", "Update", tt.sub, 0, `{"f:status":{"f:readyReplicas":{}}}`}}}))
			tr.Observe(synced(0, follow.SyncInitial, "10", ""))
			e := ev(t, follow.Modified, 2, version{name: "web", rv: "11", gen: 1, replicas: 1, ready: 2, mfs: []mf{{"ctl", "Update", tt.sub, 2, both}}})
			e.Object.SetAnnotations(map[string]string{"note": "x"})
			rows := tr.Observe(e)
			if len(rows) != 1 {
				t.Fatalf("want one row, got %d", len(rows))
			}
			if rows[0].Churn != tt.want || !rows[0].Writer.Known() {
				t.Errorf("got %s, want churn=%s by ctl", row(rows[0]), tt.want)
			}
		})
	}
}

// TestTrackerSummaryCountsCreatesApart: a creation is not a write, as in
// churn: the summary counts it in Creates, and the object's and its
// manager's writes are its modifications only.
func TestTrackerSummaryCountsCreatesApart(t *testing.T) {
	creator := mf{"kubectl-create", "Update", "", 0, fCreate}
	v := func(rv string, gen, replicas int64, mfs ...mf) version {
		return version{name: "web", rv: rv, gen: gen, replicas: replicas, ready: -1, mfs: mfs}
	}
	// With the hot rate on: a creation counts in neither.
	tr := NewTracker(TrackerConfig{FightThreshold: 100, HotRate: 0.5, HotWindow: 4 * time.Second})
	observeAll(tr, []follow.Event{
		synced(0, follow.SyncInitial, "5", ""),
		ev(t, follow.Added, 1, v("10", 1, 1, creator)),
		ev(t, follow.Modified, 2, v("11", 2, 2, creator)),
		ev(t, follow.Modified, 3, v("12", 3, 3, creator)),
	})
	s := tr.Summary(t0.Add(5 * time.Second))
	if s.Creates != 1 || s.Writes != 2 || len(s.Objects) != 1 || s.Objects[0].Writes != 2 || len(s.Managers) != 1 || s.Managers[0].Writes != 2 {
		t.Errorf("summary: %d creates, %d writes, objects %+v, managers %+v; want 1 create and 2 writes, by kubectl-create", s.Creates, s.Writes, s.Objects, s.Managers)
	}
}
