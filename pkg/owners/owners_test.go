package owners

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
)

const inputs = "../managedfields/testdata"

func read(tb testing.TB, files ...string) []objects.Object {
	tb.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(inputs, f))
	}
	objs, err := objects.Read(context.Background(), paths, false, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

func TestAnalyze(t *testing.T) {
	mustPath := func(s string) managedfields.Filter {
		p, err := managedfields.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return managedfields.Filter{Field: p}
	}
	type summary struct {
		Entries        []int // kept entry indexes, per object
		Hazards        int
		Findings       int
		NothingMatched bool
	}
	for _, tc := range []struct {
		name   string
		files  []string
		filter managedfields.Filter
		want   summary
	}{
		{"no filter keeps everything", []string{"hazards.yaml"}, managedfields.Filter{}, summary{Entries: []int{0, 1, 2, 3}, Hazards: 5, Findings: 5}},
		{"manager keeps its entry and hazards", []string{"hazards.yaml"}, managedfields.Filter{Manager: "argocd"}, summary{Entries: []int{1}, Hazards: 1, Findings: 1}},
		{"field without hazard", []string{"hazards.yaml"}, mustPath(".spec.steps[0]"), summary{Entries: []int{0, 1, 2, 3}}},
		{"unknown manager matches nothing", []string{"hazards.yaml"}, managedfields.Filter{Manager: "nobody"}, summary{NothingMatched: true}},
		{"findings add up over objects", []string{"hazards.yaml", "hazards.yaml"}, managedfields.Filter{}, summary{Entries: []int{0, 1, 2, 3, 0, 1, 2, 3}, Hazards: 10, Findings: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Analyze(read(t, tc.files...), Config{Filter: tc.filter})
			if err != nil {
				t.Fatal(err)
			}
			got := summary{Findings: r.Findings, NothingMatched: r.NothingMatched}
			for _, o := range r.Objects {
				for _, e := range o.Entries {
					got.Entries = append(got.Entries, e.Index)
				}
				got.Hazards += len(o.Hazards)
				if o.Decoded == nil || o.Ownership == nil {
					t.Fatalf("an object lacks its ownership: %+v", o)
				}
				if o.Source != filepath.Join(inputs, tc.files[0])+":3" {
					t.Errorf("Source = %q", o.Source)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Analyze (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnalyzeKeepsDecodedOwnership(t *testing.T) {
	r, err := Analyze(read(t, "deployment.yaml"), Config{Filter: managedfields.Filter{Manager: "team-b"}})
	if err != nil {
		t.Fatal(err)
	}
	o := r.Objects[0]
	if o.Ownership.OwnedCount() == 0 || o.Ownership.OwnedCount() >= o.Decoded.OwnedCount() {
		t.Errorf("filtered %d owned fields of %d, want some but not all", o.Ownership.OwnedCount(), o.Decoded.OwnedCount())
	}
	if len(o.Decoded.Entries()) <= len(o.Entries) {
		t.Errorf("kept %d entries of %d, want fewer", len(o.Entries), len(o.Decoded.Entries()))
	}
}

// TestAnalyzeErrorNamesTheObject pins the error text: the file and line
// first for an object read from a file, the object alone for the cluster.
func TestAnalyzeErrorNamesTheObject(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "broken", "namespace": "default", "managedFields": []any{
			map[string]any{"manager": "m", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"q:x": map[string]any{}}},
		}},
	}}
	_, entriesErr := managedfields.Entries(u)
	if entriesErr == nil {
		t.Fatal("the fixture is valid")
	}
	for _, tc := range []struct {
		name string
		src  objects.Source
		want string
	}{
		{"file", objects.Source{File: "cm.yaml", Line: 3, Item: -1}, "cm.yaml:3: ConfigMap default/broken: "},
		{"list item", objects.Source{File: "list.json", Line: 1, Item: 2}, "list.json:1 (items[2]): ConfigMap default/broken: "},
		{"cluster", objects.Source{Item: -1}, "ConfigMap default/broken: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Analyze([]objects.Object{{Object: u, Source: tc.src}}, Config{})
			want := tc.want + entriesErr.Error()
			if err == nil || err.Error() != want {
				t.Errorf("Analyze error = %v, want %q", err, want)
			}
		})
	}
}

// BenchmarkAnalyzeManyDeployments is the engine's share of owners -A over
// 1,000 Deployments (each as the real one in testdata, six managers):
// decode, attach and find hazards, without rendering.
func BenchmarkAnalyzeManyDeployments(b *testing.B) {
	base := read(b, "deployment.yaml")[0].Object
	var objs []objects.Object
	for i := range 1000 {
		u := base.DeepCopy()
		u.SetName(fmt.Sprintf("app-%d", i))
		objs = append(objs, objects.Object{Object: u, Source: objects.Source{Item: -1}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(objs, Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAnalyzeCountsClockSkew(t *testing.T) {
	// hazards.yaml's entries are timed 10:00, 11:00 and 11:30 (and one has none).
	for _, tc := range []struct {
		name string
		now  time.Time
		want ClockSkew
	}{
		{"no now, no check", time.Time{}, ClockSkew{}},
		{"after every write", time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), ClockSkew{}},
		{"between writes", time.Date(2026, 11, 21, 10, 55, 0, 0, time.UTC), ClockSkew{Entries: 2, Max: 35 * time.Minute}},
		{"equal is not ahead", time.Date(2026, 11, 21, 11, 30, 0, 0, time.UTC), ClockSkew{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Analyze(read(t, "hazards.yaml"), Config{Now: tc.now})
			if err != nil {
				t.Fatal(err)
			}
			if r.ClockSkew != tc.want {
				t.Errorf("ClockSkew = %+v, want %+v", r.ClockSkew, tc.want)
			}
		})
	}
}

// driftSummary is what a test checks of an object's drift: the expected
// manager and, per drifted field, its path and the other owners as
// manager/operation/subresource.
type driftSummary struct {
	Expected       string
	Inferred       bool
	ExpectedLeaves int
	Fields         map[string][]string
}

func summarizeDrift(d *Drift) driftSummary {
	s := driftSummary{Expected: d.Expected, Inferred: d.Inferred, ExpectedLeaves: d.ExpectedLeaves, Fields: map[string][]string{}}
	for _, f := range d.Fields {
		var others []string
		for _, ow := range f.Others {
			others = append(others, ow.Manager+"/"+string(ow.Operation)+"/"+ow.Subresource)
		}
		if f.Shared {
			others = append(others, "shared")
		}
		s.Fields[managedfields.PathString(f.Node.Path())] = others
	}
	return s
}

func TestAnalyzeDrift(t *testing.T) {
	r, err := Analyze(read(t, "deployment.yaml"), Config{Drift: &DriftConfig{ExpectedManager: "team-a", IncludeStatus: true, IncludeScale: true}})
	if err != nil {
		t.Fatal(err)
	}
	got := summarizeDrift(r.Objects[0].Drift)
	if got.Expected != "team-a" || got.Inferred {
		t.Errorf("expected = %q inferred %v", got.Expected, got.Inferred)
	}
	// Spot checks: the /scale write, a /status field, a field team-a shares.
	for path, want := range map[string][]string{
		".spec.replicas":        {"kubectl/Update/scale"},
		".status.replicas":      {"kube-controller-manager/Update/status"},
		`.metadata.labels.team`: {"team-b/Apply/"},
		`.spec.template.spec.containers[name="nginx"].image`: {"kubectl-create/Update/", "shared"},
	} {
		if diff := cmp.Diff(want, got.Fields[path]); diff != "" {
			t.Errorf("drift of %s (-want +got):\n%s", path, diff)
		}
	}
	if _, ok := got.Fields[".metadata.labels.owner"]; ok {
		t.Errorf("a field only team-a owns is drift")
	}
	// A map or list item owned as a whole is its leaves, as everywhere
	// in owners: kubectl-create owns .metadata.labels and the nginx
	// container themselves, which are no drifted fields.
	for _, path := range []string{".metadata.labels", `.spec.template.spec.containers[name="nginx"]`} {
		if owners, ok := got.Fields[path]; ok {
			t.Errorf("%s, which has leaves, is listed as a drifted field: %v", path, owners)
		}
	}
	for _, f := range r.Objects[0].Drift.Fields {
		if len(f.Node.Children) > 0 {
			t.Errorf("%s has children but is listed as a drifted field", managedfields.PathString(f.Node.Path()))
		}
	}
	if r.DriftFields != len(got.Fields) || r.DriftFields == 0 {
		t.Errorf("DriftFields = %d, fields %d", r.DriftFields, len(got.Fields))
	}
}

// TestAnalyzeDriftLeavesOutStatusAndScale: by default the fields only a
// /status or /scale writer owns besides the expected manager are counted
// apart, not listed as drift (the deployment controller's .status and an
// autoscaler's .spec.replicas are no drift).
func TestAnalyzeDriftLeavesOutStatusAndScale(t *testing.T) {
	r, err := Analyze(read(t, "deployment.yaml"), Config{Drift: &DriftConfig{ExpectedManager: "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	got := summarizeDrift(r.Objects[0].Drift)
	for path := range got.Fields {
		if strings.HasPrefix(path, ".status") || path == ".spec.replicas" {
			t.Errorf("%s is listed as drift: %v", path, got.Fields[path])
		}
	}
	all, err := Analyze(read(t, "deployment.yaml"), Config{Drift: &DriftConfig{ExpectedManager: "team-a", IncludeStatus: true, IncludeScale: true}})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Objects[0].Drift
	if d.StatusFields == 0 || d.ScaleFields != 1 || r.DriftFields+d.StatusFields+d.ScaleFields != all.DriftFields {
		t.Errorf("%d fields drift, %d are left out as /status and %d as /scale (want 1, .spec.replicas); with both included %d drift",
			r.DriftFields, d.StatusFields, d.ScaleFields, all.DriftFields)
	}
	if all.Objects[0].Drift.StatusFields != 0 || all.Objects[0].Drift.ScaleFields != 0 {
		t.Errorf("IncludeStatus and IncludeScale still left out %d and %d fields", all.Objects[0].Drift.StatusFields, all.Objects[0].Drift.ScaleFields)
	}
}

func TestAnalyzeDriftInfersTheMainApplier(t *testing.T) {
	r, err := Analyze(read(t, "deployment.yaml"), Config{Drift: &DriftConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	d := r.Objects[0].Drift
	// team-a applies 16 fields (14 leaves), team-b 9.
	if d.Expected != "team-a" || !d.Inferred || d.ExpectedLeaves == 0 || d.ExpectedLeaves >= d.Leaves {
		t.Errorf("inferred %q (%v) with %d of %d leaves, want team-a", d.Expected, d.Inferred, d.ExpectedLeaves, d.Leaves)
	}
	noApply := read(t, "hazards.yaml") // argocd is its only Apply manager
	r, err = Analyze(noApply, Config{Drift: &DriftConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Objects[0].Drift.Expected != "argocd" {
		t.Errorf("hazards.yaml: inferred %q, want argocd", r.Objects[0].Drift.Expected)
	}
}

func TestAnalyzeDriftWithoutApplyOrOthers(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default", "managedFields": []any{
			map[string]any{"manager": "ci", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:k": map[string]any{}}}},
		}},
		"data": map[string]any{"k": "v"},
	}}
	objs := []objects.Object{{Object: u, Source: objects.Source{Item: -1}}}
	r, err := Analyze(objs, Config{Drift: &DriftConfig{ExpectedManager: "ci"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.DriftFields != 0 || r.Objects[0].Drift.ExpectedLeaves != 1 {
		t.Errorf("a ConfigMap only ci wrote: %d drift fields, %d expected leaves", r.DriftFields, r.Objects[0].Drift.ExpectedLeaves)
	}
	r, err = Analyze(objs, Config{Drift: &DriftConfig{}})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Objects[0].Drift; d.Expected != "" || r.DriftFields != 0 {
		t.Errorf("no Apply entry: inferred %q, %d drift fields; want none", d.Expected, r.DriftFields)
	}
}
