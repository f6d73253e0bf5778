package owners

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestGeneratedStem(t *testing.T) {
	for _, tc := range []struct {
		name, stem string
		ok         bool
	}{
		{"web-7d9c8b6f5d-x2k9q", "web", true},
		{"sidecar-injector-5f6b7c8d9-abcde", "", false}, // vowels: not kubernetes' alphabet
		{"agent-x2k9q", "agent", true},
		{"job-zzzzz", "job", true},
		{"run-6f1c2a9e-1b2c-4d5e-8f90-1234567890ab", "run", true},
		{"deployer-3f9a1c7", "deployer", true},
		{"ci-build-1732455821", "ci-build", true},
		{"kube-controller-manager", "", false},
		{"kubectl-client-side-apply", "", false},
		{"argocd-controller", "", false},
		{"team-a", "", false},
		{"app-v2", "", false},
		{"release-2024", "", false},
		{"cafe-beef", "", false},
		{"x2k9q", "", false}, // the whole name: nothing to strip
		{"kubectl", "", false},
	} {
		stem, ok := GeneratedStem(tc.name)
		if stem != tc.stem || ok != tc.ok {
			t.Errorf("GeneratedStem(%q) = %q, %v; want %q, %v", tc.name, stem, ok, tc.stem, tc.ok)
		}
	}
}

// sizeObject builds a ConfigMap with the given managedFields entries
// (manager, operation) in namespace ns.
func sizeObject(t testing.TB, ns, name string, entries ...[2]string) *unstructured.Unstructured {
	var mfs []any
	for _, e := range entries {
		mfs = append(mfs, map[string]any{"manager": e[0], "operation": e[1], "apiVersion": "v1", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:data": map[string]any{"f:" + e[0]: map[string]any{}}}})
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"k": "v"}}}
	if len(mfs) > 0 {
		u.Object["metadata"].(map[string]any)["managedFields"] = mfs
	}
	return u
}

func visitAll(objs ...*unstructured.Unstructured) Visitor {
	return func(_ context.Context, fn func(*unstructured.Unstructured) error) error {
		for _, o := range objs {
			if err := fn(o); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestSize(t *testing.T) {
	var updates [][2]string
	for i := range 9 {
		updates = append(updates, [2]string{fmt.Sprintf("writer%c", 'a'+i), "Update"})
	}
	nearCap := sizeObject(t, "a", "near-cap", updates...)
	ancient := sizeObject(t, "a", "ancient", [2]string{"ancient-changes", "Update"}, [2]string{"x", "Update"})
	generated := sizeObject(t, "b", "generated", [2]string{"agent-x2k9q", "Apply"}, [2]string{"agent-b7c9d", "Apply"}, [2]string{"web-7d9c8b6f5d-x2k9q", "Apply"}, [2]string{"ci", "Apply"})
	bare := sizeObject(t, "b", "bare")
	secret := sizeObject(t, "b", "s", [2]string{"m", "Update"})
	secret.SetKind("Secret")
	deploy := sizeObject(t, "b", "d", [2]string{"m", "Update"})
	deploy.SetAPIVersion("apps/v1")
	deploy.SetKind("Deployment")

	cfg := NewSizeConfig()
	cfg.Top = 2
	rep, err := Size(context.Background(), cfg, visitAll(nearCap, ancient, generated, bare, secret, deploy))
	if err != nil {
		t.Fatal(err)
	}
	bytesOf := func(u *unstructured.Unstructured) (int, int) {
		whole, _ := json.Marshal(u.Object)
		mf, _ := json.Marshal(u.Object["metadata"].(map[string]any)["managedFields"])
		return len(whole), len(mf)
	}
	var wantObj, wantMF int64
	for _, u := range []*unstructured.Unstructured{nearCap, ancient, generated} {
		w, m := bytesOf(u)
		wantObj += int64(w)
		wantMF += int64(m)
	}
	var cm KindSize
	for _, k := range rep.Kinds {
		if k.Kind == "ConfigMap" {
			cm = k
		}
	}
	cm.stems = nil
	want := KindSize{Kind: "ConfigMap", Objects: 3, ObjectBytes: wantObj, ManagedFieldsBytes: wantMF, Entries: 15, MaxEntries: 9,
		NearCapObjects: 1, AncientObjects: 1, GeneratedApplyEntries: 3, GeneratedObjects: 1,
		GeneratedStems: []StemCount{{"agent", 2}, {"web", 1}}, NoManagedFields: 1}
	if diff := cmp.Diff(want, cm, cmp.AllowUnexported(KindSize{})); diff != "" {
		t.Errorf("ConfigMap aggregate (-want +got):\n%s", diff)
	}
	var kinds []string
	for _, k := range rep.Kinds {
		kinds = append(kinds, k.Kind)
	}
	if diff := cmp.Diff([]string{"ConfigMap", "Deployment.apps", "Secret"}, kinds); diff != "" {
		t.Errorf("kinds, heaviest first (-want +got):\n%s", diff)
	}
	if len(rep.Top) != 2 || rep.Top[0].Name != "near-cap" || rep.Top[1].Name != "generated" {
		t.Fatalf("top 2 = %+v, want near-cap then generated", rep.Top)
	}
	_, mf := bytesOf(nearCap)
	if top := rep.Top[0]; top.ManagedFieldsBytes != mf || !top.NearCap || top.UpdateEntries != 9 || top.Kind != "ConfigMap" {
		t.Errorf("top object = %+v, want %d managedFields bytes, near the cap", top, mf)
	}
	if diff := cmp.Diff([]string{"agent-x2k9q", "agent-b7c9d", "web-7d9c8b6f5d-x2k9q"}, rep.Top[1].GeneratedApply); diff != "" {
		t.Errorf("generated Apply managers (-want +got):\n%s", diff)
	}
}

// TestSizeKeepsTopNOnly feeds many objects and checks that the top list
// holds the heaviest, in order, whatever the order of the stream.
func TestSizeKeepsTopNOnly(t *testing.T) {
	var objs []*unstructured.Unstructured
	for i := range 200 {
		n := (i * 37) % 200 // a shuffled order
		var entries [][2]string
		for j := range n%7 + 1 {
			entries = append(entries, [2]string{fmt.Sprintf("m%d", j), "Update"})
		}
		objs = append(objs, sizeObject(t, "ns", fmt.Sprintf("o%03d", n), entries...))
	}
	cfg := NewSizeConfig()
	rep, err := Size(context.Background(), cfg, visitAll(objs...))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Top) != DefaultSizeTop || rep.Kinds[0].Objects != 200 {
		t.Fatalf("top %d objects of %d", len(rep.Top), rep.Kinds[0].Objects)
	}
	for i := 1; i < len(rep.Top); i++ {
		if lighter(rep.Top[i-1], rep.Top[i]) {
			t.Errorf("top[%d] %+v is lighter than top[%d] %+v", i-1, rep.Top[i-1], i, rep.Top[i])
		}
	}
	if rep.Top[0].Entries != 7 {
		t.Errorf("the heaviest object has %d entries, want 7", rep.Top[0].Entries)
	}
}

// FuzzGeneratedStem: never panics, and a stem is a proper prefix of the
// name followed by a separator.
func FuzzGeneratedStem(f *testing.F) {
	for _, s := range []string{"web-7d9c8b6f5d-x2k9q", "agent-b7c9d", "run-6f1c2a9e-1b2c-4d5e-8f90-1234567890ab", "kubectl", "-x2k9q", "a--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		stem, ok := GeneratedStem(name)
		if !ok {
			if stem != "" {
				t.Fatalf("GeneratedStem(%q) = %q, false", name, stem)
			}
			return
		}
		if stem == "" || len(stem) >= len(name) || name[:len(stem)] != stem || !strings.ContainsRune("-_.", rune(name[len(stem)])) {
			t.Fatalf("GeneratedStem(%q) = %q, not a prefix before a separator", name, stem)
		}
	})
}

// BenchmarkSize50k streams 50,000 Deployments (each as the real one in
// testdata, six managers) through Size, as owners deployments -A --view
// size does page by page: what the scan keeps is the per-kind totals and
// the top 10, whatever the number of objects.
func BenchmarkSize50k(b *testing.B) {
	base := read(b, "deployment.yaml")[0].Object
	visit := func(_ context.Context, fn func(*unstructured.Unstructured) error) error {
		u := base.DeepCopy()
		for i := range 50000 {
			u.SetName(fmt.Sprintf("app-%d", i))
			if err := fn(u); err != nil {
				return err
			}
		}
		return nil
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Size(context.Background(), NewSizeConfig(), visit)
		if err != nil || rep.Kinds[0].Objects != 50000 || len(rep.Top) != DefaultSizeTop {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

// FuzzJSONLen holds jsonLen equal to len(json.Marshal(v)) for decoded
// JSON, its numbers as unstructured objects hold them (int64 when whole).
func FuzzJSONLen(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5,"x<y>&\u2028",null,true,false,{}],"b":{"c":[]},"":"\u0000\ufffd"}`, `[1e21,1e-7,-0.0,123456789012]`, `"é名"`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var v any
		d := json.NewDecoder(strings.NewReader(in))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return
		}
		v = unstructuredNumbers(v)
		want, err := json.Marshal(v)
		if err != nil {
			return
		}
		var scratch []byte
		got, err := jsonLen(v, &scratch)
		if err != nil || got != len(want) {
			t.Fatalf("jsonLen(%s) = %d, %v; json.Marshal has %d bytes", want, got, err, len(want))
		}
	})
}

// unstructuredNumbers turns json.Numbers into int64 or float64, as
// unstructured decoding does.
func unstructuredNumbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = unstructuredNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = unstructuredNumbers(e)
		}
	}
	return v
}
