package managedfields

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/internal/testobj"
)

var deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

// mustObj decodes a one-object YAML fixture.
var mustObj = testobj.FromYAML

const deployYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1
`

func ownersOf(t *testing.T, obj *unstructured.Unstructured) map[string][]string {
	t.Helper()
	es, err := Entries(obj)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range es {
		e.Fields().Leaves().Iterate(func(p fieldpath.Path) {
			out[p.String()] = append(out[p.String()], e.Manager)
		})
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

func TestFieldManagerUpdateThenApplyConflicts(t *testing.T) {
	fm, err := NewFieldManager(BuiltinTypeConverter(), deployGVK)
	if err != nil {
		t.Fatal(err)
	}
	created, err := fm.Update(NewEmpty(deployGVK), mustObj(t, deployYAML), "kubectl-create", "")
	if err != nil {
		t.Fatal(err)
	}
	created.SetUID("u1")
	owners := ownersOf(t, created)
	if diff := cmp.Diff([]string{"kubectl-create"}, owners[".spec.replicas"]); diff != "" {
		t.Errorf("owners of .spec.replicas (-want +got):\n%s", diff)
	}

	applied := mustObj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1
`)
	_, err = fm.Apply(created, applied, "ci", false)
	got, ok := Conflicts(err)
	if !ok {
		t.Fatalf("Apply: want an apply conflict, got %v", err)
	}
	want := []Conflict{{Field: ".spec.replicas", Manager: "kubectl-create", Operation: "Update", APIVersion: "apps/v1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}

	forced, err := fm.Apply(created, applied, "ci", true)
	if err != nil {
		t.Fatalf("forced Apply: %v", err)
	}
	owners = ownersOf(t, forced)
	if diff := cmp.Diff([]string{"ci"}, owners[".spec.replicas"]); diff != "" {
		t.Errorf("owners of .spec.replicas after force (-want +got):\n%s", diff)
	}
	// The same image: ci becomes a co-owner.
	img := `.spec.template.spec.containers[name="nginx"].image`
	if diff := cmp.Diff([]string{"ci", "kubectl-create"}, owners[img]); diff != "" {
		t.Errorf("owners of image after force (-want +got):\n%s", diff)
	}
	if r, _, _ := unstructured.NestedInt64(forced.Object, "spec", "replicas"); r != 3 {
		t.Errorf("replicas = %d, want 3", r)
	}
}

func TestFieldManagerUpdateTakesFields(t *testing.T) {
	fm, err := NewFieldManager(BuiltinTypeConverter(), deployGVK)
	if err != nil {
		t.Fatal(err)
	}
	created, err := fm.Update(NewEmpty(deployGVK), mustObj(t, deployYAML), "kubectl-create", "")
	if err != nil {
		t.Fatal(err)
	}
	created.SetUID("u1")
	next := created.DeepCopy()
	next.SetManagedFields(nil)
	if err := unstructured.SetNestedField(next.Object, int64(5), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	out, err := fm.Update(created, next, "hpa", "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hpa"}, ownersOf(t, out)[".spec.replicas"]); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
}

func TestParseSchemaCRD(t *testing.T) {
	crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  properties:
                    name: {type: string}
                    port: {type: integer}
`
	tc, err := ParseSchema([]byte(crd))
	if err != nil {
		t.Fatal(err)
	}
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if diff := cmp.Diff([]schema.GroupVersionKind{gvk}, tc.Kinds()); diff != "" {
		t.Fatalf("kinds (-want +got):\n%s", diff)
	}
	if cr, ok := tc.CustomResource(gvk); !ok || cr != (CustomResource{Resource: "widgets", Namespaced: true}) {
		t.Errorf("CustomResource(%s) = %+v, %v; want widgets, namespaced, no status", gvk, cr, ok)
	}
	clusterTC, err := ParseSchema([]byte(strings.Replace(crd, "scope: Namespaced", "scope: Cluster", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if cr, _ := clusterTC.CustomResource(gvk); cr.Namespaced {
		t.Errorf("a CRD of scope Cluster: CustomResource(%s) says namespaced", gvk)
	}
	fm, err := NewFieldManager(tc, gvk)
	if err != nil {
		t.Fatal(err)
	}
	obj := mustObj(t, `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, labels: {a: b}}
spec:
  size: 1
  ports: [{name: http, port: 80}]
`)
	out, err := fm.Apply(NewEmpty(gvk), obj, "me", false)
	if err != nil {
		t.Fatal(err)
	}
	owners := ownersOf(t, out)
	for _, p := range []string{".spec.size", `.spec.ports[name="http"].port`, ".metadata.labels.a"} {
		if diff := cmp.Diff([]string{"me"}, owners[p]); diff != "" {
			t.Errorf("owners of %s (-want +got):\n%s", p, diff)
		}
	}
}

func TestParseSchemaRejectsOther(t *testing.T) {
	for _, in := range []string{`{}`, `kind: ConfigMap`, `[`} {
		if _, err := ParseSchema([]byte(in)); err == nil {
			t.Errorf("ParseSchema(%q): want an error", in)
		}
	}
}

func TestParseConflictMessage(t *testing.T) {
	tests := []struct {
		name, msg string
		want      Conflict
		wantErr   bool
	}{
		{name: "update owner", msg: `conflict with "kubectl-create" using apps/v1`,
			want: Conflict{Manager: "kubectl-create", Operation: "Update", APIVersion: "apps/v1"}},
		{name: "update owner with time", msg: `conflict with "ctl" using v1 at 2026-11-21T15:00:00Z`,
			want: Conflict{Manager: "ctl", Operation: "Update", APIVersion: "v1"}},
		{name: "apply owner", msg: `conflict with "kubectl"`,
			want: Conflict{Manager: "kubectl", Operation: "Apply"}},
		{name: "subresource", msg: `conflict with "k" with subresource "status" using v1`,
			want: Conflict{Manager: "k", Operation: "Update", APIVersion: "v1", Subresource: "status"}},
		{name: "escaped quote", msg: `conflict with "a\"b"`, want: Conflict{Manager: `a"b`, Operation: "Apply"}},
		{name: "no prefix", msg: `nope`, wantErr: true},
		{name: "unquoted", msg: `conflict with kubectl`, wantErr: true},
		{name: "trailing junk", msg: `conflict with "k" junk`, wantErr: true},
		{name: "empty version", msg: `conflict with "k" using `, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConflictMessage(tt.msg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseConflictMessage(f *testing.F) {
	for _, s := range []string{`conflict with "kubectl-create" using apps/v1`, `conflict with "k" with subresource "status"`, `conflict with "a\"b" using v1 at x`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		c, err := ParseConflictMessage(msg)
		if err != nil {
			return
		}
		// What parses re-renders to a message that parses the same.
		again, err := ParseConflictMessage("conflict with " + c.Owner())
		if err != nil {
			t.Fatalf("re-parse of %q: %v", c.Owner(), err)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Errorf("round trip (-first +second):\n%s", diff)
		}
	})
}

// TestFieldManagerConvertsBetweenCRDVersions: an object whose
// managedFields are in another version of its CRD is converted as the
// server converts it (strategy None: only apiVersion changes), so an
// apply conflicts with the other version's owner; with a conversion
// webhook the field manager cannot know, and says so.
func TestFieldManagerConvertsBetweenCRDVersions(t *testing.T) {
	crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: dials.example.com}
spec:
  group: example.com
  names: {kind: Dial, plural: dials}
  scope: Namespaced
  conversion: {strategy: None}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}}
  - {name: v1beta1, served: true, storage: false, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}}
`
	v1 := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Dial"}
	beta := v1
	beta.Version = "v1beta1"
	live := func(t *testing.T, tc TypeConverter) *unstructured.Unstructured {
		t.Helper()
		fm, err := NewFieldManager(tc, beta)
		if err != nil {
			t.Fatal(err)
		}
		out, err := fm.Apply(NewEmpty(beta), mustObj(t, "apiVersion: example.com/v1beta1\nkind: Dial\nmetadata: {name: d}\nspec: {size: 1}\n"), "legacy", false)
		if err != nil {
			t.Fatal(err)
		}
		out.SetAPIVersion("example.com/v1")
		return out
	}
	patch := "apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: d}\nspec: {size: 2}\n"
	for _, tc := range []struct {
		strategy string
		want     func(error) bool
	}{
		{"None", func(err error) bool { c, ok := Conflicts(err); return ok && len(c) == 1 && c[0].Manager == "legacy" }},
		{"Webhook", func(err error) bool {
			var ce *ConversionError
			return errors.As(err, &ce) && ce.Version == "example.com/v1beta1"
		}},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			sc, err := ParseSchema([]byte(strings.Replace(crd, "strategy: None", "strategy: "+tc.strategy, 1)))
			if err != nil {
				t.Fatal(err)
			}
			fm, err := NewFieldManager(sc, v1)
			if err != nil {
				t.Fatal(err)
			}
			_, err = fm.Apply(live(t, sc), mustObj(t, patch), "writer", false)
			if !tc.want(err) {
				t.Errorf("apply over an object managed at v1beta1: %v", err)
			}
		})
	}
}
