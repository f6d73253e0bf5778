package managedfields

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// clientGoConverter is the converter BuiltinTypeConverter stands in for:
// client-go's, which parses its whole schema.
var clientGoConverter = applyconfigurations.NewTypeConverter(scheme.Scheme)

func clientGoSchema(t *testing.T) *smdschema.Schema {
	t.Helper()
	tv, err := clientGoConverter.ObjectToTyped(NewEmpty(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}))
	if err != nil {
		t.Fatal(err)
	}
	return tv.Schema()
}

// TestBuiltinSchemaMatchesClientGo holds the generated schema equal to the
// one client-go ships; after a client-go bump, run go generate.
func TestBuiltinSchemaMatchesClientGo(t *testing.T) {
	want := clientGoSchema(t)
	if len(want.Types) != len(builtinTypes) {
		t.Errorf("client-go has %d types, the generated schema %d: run go generate ./pkg/managedfields", len(want.Types), len(builtinTypes))
	}
	for _, w := range want.Types {
		got, ok := builtinDef(w.Name)
		if !ok {
			t.Errorf("type %s is missing: run go generate ./pkg/managedfields", w.Name)
			continue
		}
		if d := cmp.Diff(w, got, cmpopts.IgnoreUnexported(smdschema.Map{})); d != "" {
			t.Errorf("type %s differs from client-go's (-want +got):\n%s", w.Name, d)
		}
	}
}

func TestBuiltinClosure(t *testing.T) {
	tests := []struct {
		name      string
		wantTypes []string
		wantCount int
	}{
		{name: "io.k8s.api.core.v1.ConfigMap", wantTypes: []string{"io.k8s.api.core.v1.ConfigMap", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"}},
		{name: "io.k8s.api.apps.v1.Deployment", wantTypes: []string{"io.k8s.api.core.v1.PodSpec", "io.k8s.apimachinery.pkg.util.intstr.IntOrString", "__untyped_atomic_"}},
		{name: "no.such.Type", wantCount: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, d := range builtinClosure(tt.name) {
				got[d.Name] = true
			}
			for _, w := range tt.wantTypes {
				if !got[w] {
					t.Errorf("closure of %s lacks %s", tt.name, w)
				}
			}
			if tt.wantTypes == nil && len(got) != tt.wantCount {
				t.Errorf("closure of %s has %d types, want %d", tt.name, len(got), tt.wantCount)
			}
		})
	}
}

// TestBuiltinConverterMatchesClientGo runs the field manager with both
// converters over random objects of every built-in kind: a create by one
// manager, then an apply of another random object, forced and not. Both
// must give the same objects, managedFields, conflicts and errors.
func TestBuiltinConverterMatchesClientGo(t *testing.T) {
	full := clientGoSchema(t)
	kinds := builtinKinds()
	if len(kinds) < 200 {
		t.Fatalf("only %d built-in kinds found", len(kinds))
	}
	schemaKinds, typedKinds, conflicted := 0, 0, 0
	for i, gvk := range kinds {
		name, err := scheme.Scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		r := rand.New(rand.NewPCG(uint64(i), 20261124))
		var objs [2]*unstructured.Unstructured
		for j := range objs {
			objs[j] = randomObject(r, full, gvk, name)
		}
		want := fieldManagerRun(clientGoConverter, gvk, objs)
		got := fieldManagerRun(BuiltinTypeConverter(), gvk, objs)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: the generated schema gives other results than client-go's (-want +got):\n%s", gvk, d)
		}
		if len(want[1]) > 10 && want[1][:10] == "!conflicts" {
			conflicted++
		}
		if _, inSchema := builtinDef(name); inSchema {
			schemaKinds++
			if want[0][0] != '!' {
				typedKinds++
			} else {
				t.Logf("%s: %s", gvk, want[0])
			}
		}
	}
	// Kinds without a schema type (lists, options) fail alike; the rest
	// must have been typed, or the comparison proves little.
	t.Logf("%d kinds typed, %d applies conflicted", typedKinds, conflicted)
	if conflicted == 0 {
		t.Error("no apply conflicted: the objects do not exercise conflict detection")
	}
	if typedKinds < schemaKinds*9/10 {
		t.Errorf("only %d of the %d kinds in the schema could be created with client-go's schema", typedKinds, schemaKinds)
	}
}

func builtinKinds() []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version != runtime.APIVersionInternal {
			out = append(out, gvk)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// fieldManagerRun returns, as text, the results (or "!" and the error) of
// a create of objs[0], then a non-forced and a forced apply of objs[1].
func fieldManagerRun(tc TypeConverter, gvk schema.GroupVersionKind, objs [2]*unstructured.Unstructured) [3]string {
	var out [3]string
	fm, err := NewFieldManager(tc, gvk)
	if err != nil {
		out[0] = "!" + err.Error()
		return out
	}
	created, err := fm.Update(NewEmpty(gvk), objs[0], "creator", "")
	out[0] = result(created, err)
	if err != nil {
		return out
	}
	for i, force := range []bool{false, true} {
		applied, err := fm.Apply(created, objs[1], "applier", force)
		out[1+i] = result(applied, err)
	}
	return out
}

func result(u *unstructured.Unstructured, err error) string {
	if err != nil {
		if cs, ok := Conflicts(err); ok {
			return fmt.Sprintf("!conflicts %v", cs)
		}
		return "!" + err.Error()
	}
	mfs := u.GetManagedFields()
	for i := range mfs {
		mfs[i].Time = nil // the wall clock, not the schema's
	}
	u.SetManagedFields(mfs)
	return fmt.Sprint(u.Object)
}

// randomObject makes an object of the kind from the schema: random fields
// at every level, lists with unique keys, and the metadata left to name and
// labels (random managedFields would only be rejected).
func randomObject(r *rand.Rand, s *smdschema.Schema, gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	g := objectGen{r: r, s: s}
	v, _ := g.value(smdschema.TypeRef{NamedType: &name}, 0).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	u := &unstructured.Unstructured{Object: v}
	u.SetGroupVersionKind(gvk)
	if _, ok := v["metadata"]; ok || hasField(s, name, "metadata") {
		u.Object["metadata"] = map[string]any{"name": "x", "labels": map[string]any{"a": "b"}}
	}
	return u
}

func hasField(s *smdschema.Schema, typeName, field string) bool {
	a, ok := s.Resolve(smdschema.TypeRef{NamedType: &typeName})
	if !ok || a.Map == nil {
		return false
	}
	_, ok = a.Map.FindField(field)
	return ok
}

type objectGen struct {
	r *rand.Rand
	s *smdschema.Schema
}

const maxDepth = 7

func (g objectGen) value(ref smdschema.TypeRef, depth int) any {
	a, ok := g.s.Resolve(ref)
	if !ok {
		return nil
	}
	switch {
	case a.Map != nil && depth < maxDepth && (a.Scalar == nil || g.r.IntN(2) == 0):
		return g.mapValue(a.Map, depth)
	case a.List != nil && depth < maxDepth && (a.Scalar == nil || g.r.IntN(2) == 0):
		return g.listValue(a.List, depth)
	case a.Scalar != nil:
		return g.scalar(*a.Scalar)
	}
	return nil
}

func (g objectGen) mapValue(m *smdschema.Map, depth int) map[string]any {
	out := map[string]any{}
	for _, f := range m.Fields {
		if g.r.IntN(3) == 0 {
			continue
		}
		if v := g.value(f.Type, depth+1); v != nil {
			out[f.Name] = v
		}
	}
	if len(m.Fields) == 0 && !isEmptyRef(m.ElementType) {
		for i := range g.r.IntN(3) {
			if v := g.value(m.ElementType, depth+1); v != nil {
				out[fmt.Sprintf("k%d", i)] = v
			}
		}
	}
	return out
}

func isEmptyRef(r smdschema.TypeRef) bool {
	return r.NamedType == nil && r.Inlined.Scalar == nil && r.Inlined.List == nil && r.Inlined.Map == nil
}

// listValue makes up to two items; the items of an associative list get
// distinct keys (or distinct values, for a set).
func (g objectGen) listValue(l *smdschema.List, depth int) []any {
	var out []any
	for i := range g.r.IntN(3) {
		v := g.value(l.ElementType, depth+1)
		if v == nil {
			continue
		}
		if l.ElementRelationship == smdschema.Associative {
			m, isMap := v.(map[string]any)
			switch {
			case isMap && len(l.Keys) > 0:
				for _, k := range l.Keys {
					m[k] = g.key(l.ElementType, k, i)
				}
			case !isMap:
				v = fmt.Sprintf("item%d", i)
			}
		}
		out = append(out, v)
	}
	return out
}

// key gives item i's value of key field k: a distinct string or number.
func (g objectGen) key(elem smdschema.TypeRef, k string, i int) any {
	a, _ := g.s.Resolve(elem)
	if a.Map != nil {
		if f, ok := a.Map.FindField(k); ok {
			if fa, ok := g.s.Resolve(f.Type); ok && fa.Scalar != nil && *fa.Scalar == smdschema.Numeric {
				return int64(i + 1)
			}
		}
	}
	return fmt.Sprintf("key%d", i)
}

func (g objectGen) scalar(s smdschema.Scalar) any {
	switch s {
	case smdschema.Numeric:
		return int64(g.r.IntN(5))
	case smdschema.Boolean:
		return g.r.IntN(2) == 0
	}
	return fmt.Sprintf("v%d", g.r.IntN(3))
}

// BenchmarkBuiltinFirstUse is what a run pays to type its first Deployment:
// building the types a Deployment reaches.
func BenchmarkBuiltinFirstUse(b *testing.B) {
	obj := NewEmpty(deployGVK)
	for b.Loop() {
		c := &builtinConverter{parsers: map[string]*typed.Parser{}}
		if _, err := c.ObjectToTyped(obj); err != nil {
			b.Fatal(err)
		}
	}
}
