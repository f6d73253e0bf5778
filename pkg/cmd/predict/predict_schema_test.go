package predict

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
)

// schemaCRD is a CustomResourceDefinition of kind in group
// schema.example.com.
func schemaCRD(kind string) string {
	plural := strings.ToLower(kind) + "s"
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ` + plural + `.schema.example.com}
spec:
  group: schema.example.com
  names: {kind: ` + kind + `, plural: ` + plural + `}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer, default: 1}}}
`
}

// indent puts every line of s under a List's items.
func indent(s string) string {
	return "- " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}

const schemaOpenAPI = `openapi: 3.0.0
components:
  schemas:
    com.example.v1.Thing:
      type: object
      x-kubernetes-group-version-kind: [{group: example.com, version: v1, kind: Thing}]
      properties:
        apiVersion: {type: string}
        kind: {type: string}
        spec: {type: object, properties: {n: {type: integer}}}
`

// TestReadSchemaEveryCRD: --schema takes every CRD of every path (YAML
// streams, Lists, directories, stdin) and OpenAPI documents beside them;
// each CRD's kind is typed and, in crd.Rules, defaulted and
// validated. Before, a file's CRDs after the first were ignored without a
// word, and their custom resources were unknown, "give the CRD with
// --schema".
func TestReadSchemaEveryCRD(t *testing.T) {
	dir := t.TempDir()
	write := cmdtest.FileWriter(t, dir)
	stream := write("stream.yaml", schemaCRD("Dial")+"---\n"+schemaCRD("Knob"))
	list := write("list.yaml", "apiVersion: v1\nkind: List\nitems:\n"+indent(schemaCRD("Lever"))+indent(schemaCRD("Switch")))
	write("bases/a.yaml", schemaCRD("Valve"))
	write("bases/b.json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"pumps.schema.example.com"},"spec":{"group":"schema.example.com","names":{"kind":"Pump","plural":"pumps"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`)
	openapi := write("openapi.yaml", schemaOpenAPI)
	o, _, _ := newPredictOptions(schemaCRD("Gauge"))
	o.Rules = crd.Rules{}
	o.SchemaFiles = []string{stream, list, filepath.Join(dir, "bases"), openapi, "-"}
	tc, rules, err := o.readSchema(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stc := tc.(*managedfields.SchemaTypeConverter)
	got := map[string]bool{}
	for _, gvk := range stc.Kinds() {
		got[gvk.Kind] = true
	}
	for _, kind := range []string{"Dial", "Knob", "Lever", "Switch", "Valve", "Pump", "Gauge", "Thing"} {
		if !got[kind] {
			t.Errorf("%s is not typed: the schema's kinds are %v", kind, stc.Kinds())
		}
		if kind == "Thing" {
			continue
		}
		gvk := schema.GroupVersionKind{Group: "schema.example.com", Version: "v1", Kind: kind}
		if rules.(crd.Rules).CRDs.Kind(gvk) == nil {
			t.Errorf("%s: the rules have no CRD for it", kind)
		}
		if _, ok := stc.CustomResource(gvk); !ok {
			t.Errorf("%s: no custom resource facts (resource, status)", kind)
		}
	}
}

// TestReadSchemaErrors: what --schema cannot take is a usage error (exit
// 2) that names the flag, the file and line, and what to do.
func TestReadSchemaErrors(t *testing.T) {
	dir := t.TempDir()
	write := cmdtest.FileWriter(t, dir)
	twice := write("twice.yaml", schemaCRD("Dial")+"---\n"+schemaCRD("Knob"))
	tests := []struct {
		name  string
		paths []string
		msg   string
	}{
		{"a kind defined twice", []string{twice, twice}, "--schema " + twice + ":1: schema.example.com/v1 Dial is defined twice"},
		{"not a CRD", []string{write("deploy.yaml", schemaCRD("Dial")+"---\n"+benchDeploy)}, "--schema " + dir + "/deploy.yaml:18: a Deployment, not a CustomResourceDefinition"},
		{"invalid YAML", []string{write("bad.yaml", "kind: [\n")}, "--schema " + dir + "/bad.yaml:"},
		{"no such file", []string{filepath.Join(dir, "nosuch.yaml")}, "--schema " + dir + "/nosuch.yaml: no such file or directory"},
		{"a CRD without storage", []string{write("nostorage.yaml", strings.Replace(schemaCRD("Dial"), "storage: true", "storage: false", 1))}, "no version has storage: true"},
		{"an escape in the kind", []string{write("esc.yaml", "apiVersion: v1\nkind: \"X\\e]0;t\\a\"\n")}, "a X^[]0;t^G, not a CustomResourceDefinition"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, _ := newPredictOptions("")
			o.Rules = crd.Rules{}
			o.SchemaFiles = tt.paths
			_, _, err := o.readSchema(t.Context())
			if err == nil || exitcode.Classify(err) != exitcode.CodeUsage || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("readSchema() = %v (exit %d), want a usage error with %q", err, exitcode.Classify(err), tt.msg)
			}
		})
	}
}

// FuzzReadSchema: whatever a --schema file holds, readSchema returns the
// schema or a usage error (exit 2), never a panic or another error.
func FuzzReadSchema(f *testing.F) {
	f.Add(schemaCRD("Dial") + "---\n" + schemaCRD("Knob"))
	f.Add("apiVersion: v1\nkind: List\nitems:\n" + indent(schemaCRD("Lever")))
	f.Add(schemaOpenAPI)
	f.Add(schemaCRD("Dial") + "---\n" + schemaCRD("Dial"))
	f.Add("kind: [\n")
	f.Fuzz(func(t *testing.T, content string) {
		p := filepath.Join(t.TempDir(), "schema.yaml")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		o, _, _ := newPredictOptions("")
		o.Rules = crd.Rules{}
		o.SchemaFiles = []string{p}
		tc, _, err := o.readSchema(t.Context())
		switch {
		case err != nil && exitcode.Classify(err) != exitcode.CodeUsage:
			t.Fatalf("readSchema() = %v: exit %d, want 2", err, exitcode.Classify(err))
		case err == nil && tc == nil:
			t.Fatal("readSchema() gave no schema and no error")
		}
	})
}

// BenchmarkReadSchema reads one --schema file of 50 and of 500 CRDs, as
// kubectl get crd -o yaml gives them, into the type converter and
// crd.Rules: the time per CRD stays the same.
func BenchmarkReadSchema(b *testing.B) {
	for _, n := range []int{50, 500} {
		b.Run(fmt.Sprintf("crds=%d", n), func(b *testing.B) {
			docs := make([]string, n)
			for i := range docs {
				docs[i] = schemaCRD(fmt.Sprintf("Kind%d", i))
			}
			p := filepath.Join(b.TempDir(), "crds.yaml")
			if err := os.WriteFile(p, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				o, _, _ := newPredictOptions("")
				o.Rules = crd.Rules{}
				o.SchemaFiles = []string{p}
				if _, _, err := o.readSchema(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
