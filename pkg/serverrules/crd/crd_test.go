package crd

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// toolCRD has defaults (nested, in array items, nullable), pruning
// (unknown fields, a subtree that keeps them, an embedded resource),
// enum/pattern/minimum/maximum, CEL rules (one a transition rule) and a
// status subresource.
const toolCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tools.example.com}
spec:
  group: example.com
  names: {kind: Tool, plural: tools}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.size <= self.max"
              message: size must not exceed max
            - rule: "!has(oldSelf.mode) || self.mode == oldSelf.mode"
              message: mode is immutable
            properties:
              size: {type: integer, default: 1, minimum: 0, maximum: 10}
              max: {type: integer, default: 5}
              mode: {type: string, enum: [fast, slow]}
              name: {type: string, pattern: '^[a-z]+$'}
              note: {type: string, nullable: true, default: none}
              limits:
                type: object
                default: {}
                properties:
                  cpu: {type: string, default: "1"}
              items:
                type: array
                items:
                  type: object
                  properties:
                    name: {type: string}
                    weight: {type: integer, default: 10}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec: {type: object, properties: {x: {type: string}}}
          status:
            type: object
            properties:
              phase: {type: string}
`

var toolGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Tool"}

func toolKind(t *testing.T) *Kind {
	t.Helper()
	set, err := Parse([]byte(toolCRD))
	if err != nil {
		t.Fatal(err)
	}
	k := set.Kind(toolGVK)
	if k == nil {
		t.Fatal("no kind Tool v1")
	}
	return k
}

func tool(t *testing.T, spec string) *unstructured.Unstructured {
	t.Helper()
	return fromYAML(t, "apiVersion: example.com/v1\nkind: Tool\nmetadata: {name: t1, namespace: ns, resourceVersion: \"5\"}\n"+spec)
}

// fromYAML decodes y as the server decodes JSON: integers are int64.
func fromYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDecode: what the server's codec does to a request body.
func TestDecode(t *testing.T) {
	defaults := "size: 1, max: 5, note: none, limits: {cpu: \"1\"}"
	tests := []struct {
		name, in, want string
	}{
		{"defaults filled in", "spec: {}", "spec: {" + defaults + "}"},
		{"a null is defaulted", "spec: {size: null}", "spec: {" + defaults + "}"},
		{"a nullable null stays", "spec: {note: null}", "spec: {size: 1, max: 5, note: null, limits: {cpu: \"1\"}}"},
		{"defaults in array items", "spec: {items: [{name: a}, {name: b, weight: 3}]}",
			"spec: {" + defaults + ", items: [{name: a, weight: 10}, {name: b, weight: 3}]}"},
		{"unknown fields pruned", "spec: {color: red, limits: {mem: 1Gi}}\nspare: 1", "spec: {" + defaults + "}"},
		{"preserve-unknown-fields keeps them", "spec: {extra: {a: {b: c}}}", "spec: {" + defaults + ", extra: {a: {b: c}}}"},
		{"an embedded resource keeps its metadata, loses unknown fields", "spec: {template: {apiVersion: v1, kind: X, metadata: {name: e, junk: 1}, spec: {x: a, y: b}}}",
			"spec: {" + defaults + ", template: {apiVersion: v1, kind: X, metadata: {name: e}, spec: {x: a}}}"},
		{"empty metadata maps dropped", "metadata: {name: t1, namespace: ns, resourceVersion: \"5\", labels: {}}\nspec: {}", "spec: {" + defaults + "}"},
		{"status pruned and kept", "status: {phase: Ready, why: x}", "status: {phase: Ready}"},
	}
	k := toolKind(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseTool(t, tt.in)
			k.Decode(got.Object)
			want := tool(t, tt.want)
			if diff := cmp.Diff(want.Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidate: the strategies' errors, in the server's words.
func TestValidate(t *testing.T) {
	tests := []struct {
		name, old, obj, sub string
		want                []string
	}{
		{"valid", "", "spec: {size: 2}", "", nil},
		{"wrong type", "", "spec: {size: big}", "", []string{`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`,
			"some validation rules were not checked because the object was invalid"}},
		{"above maximum", "", "spec: {size: 11, max: 20}", "", []string{"spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10"}},
		{"below minimum", "", "spec: {size: -1}", "", []string{"spec.size: Invalid value: -1: spec.size in body should be greater than or equal to 0"}},
		{"not in enum", "", "spec: {mode: medium}", "", []string{`spec.mode: Unsupported value: "medium": supported values: "fast", "slow"`, "some validation rules were not checked"}},
		{"pattern", "", "spec: {name: A1}", "", []string{`spec.name: Invalid value: "A1": spec.name in body should match '^[a-z]+$'`}},
		{"CEL rule", "", "spec: {size: 6}", "", []string{`spec: Invalid value: size must not exceed max`}},
		{"transition rule", "spec: {mode: fast}", "spec: {mode: slow}", "", []string{`spec: Invalid value: mode is immutable`}},
		{"transition rule kept", "spec: {mode: fast}", "spec: {mode: fast, size: 3}", "", nil},
		{"ratcheting: an unchanged invalid value stays", "spec: {name: A1}", "spec: {name: A1, size: 3}", "", nil},
		{"a bad name", "", "metadata: {name: T_1, namespace: ns}\nspec: {}", "", []string{`metadata.name: Invalid value: "T_1"`}},
		{"status: only status is validated", "spec: {size: 2}", "spec: {size: 2}\nstatus: {phase: 3}", "status", []string{`status.phase: Invalid value: "integer": phase in body must be of type string: "integer"`, "some validation rules were not checked"}},
	}
	k := toolKind(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parseTool(t, tt.obj)
			k.Decode(obj.Object)
			var old *unstructured.Unstructured
			if tt.old != "" {
				old = parseTool(t, tt.old)
				k.Decode(old.Object)
			}
			errs := k.Validate(obj, old, tt.sub)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d: %v", len(errs), len(tt.want), errs)
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d: %q, want %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}

func parseTool(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	if strings.HasPrefix(y, "metadata:") {
		return fromYAML(t, "apiVersion: example.com/v1\nkind: Tool\n"+y)
	}
	return tool(t, y)
}

// TestParse: which CRDs give kinds, which are errors, and which versions
// cannot be known offline.
func TestParse(t *testing.T) {
	webhook := strings.Replace(toolCRD, "  versions:\n", `  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "https://conv.example.com"}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`, 1)
	tests := []struct {
		name, in string
		kinds    int
		err      string
		unknown  map[string]string
	}{
		{"a CRD", toolCRD, 1, "", nil},
		{"an OpenAPI document", `{"openapi": "3.0.0", "components": {"schemas": {}}}`, 0, "", nil},
		{"v1beta1", strings.Replace(toolCRD, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1), 0, `apiVersion "apiextensions.k8s.io/v1beta1"`, nil},
		{"not structural", strings.Replace(toolCRD, "              size: {type: integer, default: 1, minimum: 0, maximum: 10}\n", "              size: {default: 1}\n", 1), 0, "not structural", nil},
		{"no storage version", strings.Replace(toolCRD, "storage: true", "storage: false", 1), 0, "no version has storage: true", nil},
		{"conversion webhook", webhook, 2, "", map[string]string{"v1beta1": "example.com/v1beta1 is stored as example.com/v1 through a conversion webhook", "v1": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if set.Len() != tt.kinds {
				t.Errorf("%d kinds, want %d", set.Len(), tt.kinds)
			}
			for v, want := range tt.unknown {
				k := set.Kind(schema.GroupVersionKind{Group: "example.com", Version: v, Kind: "Tool"})
				if got := k.CannotKnow(); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
					t.Errorf("%s: cannot know %q, want %q", v, got, want)
				}
			}
		})
	}
}

// FuzzParse: Parse never panics, and a set it returns decodes and
// validates an object of each of its kinds without panicking.
func FuzzParse(f *testing.F) {
	f.Add([]byte(toolCRD))
	f.Add([]byte(`{"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1"}`))
	f.Add([]byte("kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\nspec: {group: g, names: {kind: K, plural: ks}, versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := Parse(data)
		if err != nil {
			return
		}
		for gvk, k := range set.kinds {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"a": int64(1)}}}
			u.SetGroupVersionKind(gvk)
			u.SetName("n")
			k.Decode(u.Object)
			_ = k.Validate(u, nil, "")
			_ = k.Validate(u, u.DeepCopy(), "")
		}
	})
}

// BenchmarkParse parses a CRD with two CEL rules into its kinds: what
// predict --offline --schema pays once per run (the rules are compiled
// here, as the server's strategy compiles them).
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse([]byte(toolCRD)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnknownFields: the fields the server's decoder names for
// fieldValidation=Strict, in its order (ObjectMeta's, then the pruned ones
// sorted, then an embedded resource's metadata), and obj untouched.
func TestUnknownFields(t *testing.T) {
	k := toolKind(t)
	obj := parseTool(t, "metadata: {name: t1, namespace: ns, resourceVersion: \"5\", labelz: {a: b}}\nspec: {zeta: 1, color: red, limits: {mem: 1Gi}, extra: {kept: 1}, template: {apiVersion: v1, kind: X, metadata: {name: e, junk: 1}, spec: {x: a, w: b}}}\nspare: 1")
	before := obj.DeepCopy()
	got := k.UnknownFields(obj.Object)
	want := []string{"metadata.labelz", "spare", "spec.color", "spec.limits.mem", "spec.template.spec.w", "spec.zeta", "spec.template.metadata.junk"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
		t.Errorf("obj changed (-before +after):\n%s", diff)
	}
	if got := k.UnknownFields(tool(t, "spec: {size: 2}").Object); len(got) != 0 {
		t.Errorf("a known object: %v", got)
	}
}

// TestWithSchemas: the kinds of every document join those the rules had,
// in a set of their own (the receiver's is left as it was), and an error
// says which document.
func TestWithSchemas(t *testing.T) {
	first, err := WithSchema([]byte(toolCRD))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.NewReplacer("tools.example.com", "gears.example.com", "kind: Tool, plural: tools", "kind: Gear, plural: gears").Replace(toolCRD)
	gearGVK := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gear"}
	got, err := first.WithSchemas([]byte(other))
	if err != nil {
		t.Fatal(err)
	}
	if r := got.(Rules); r.CRDs.Kind(toolGVK) == nil || r.CRDs.Kind(gearGVK) == nil {
		t.Errorf("kinds %d, want Tool and Gear", r.CRDs.Len())
	}
	if first.CRDs.Kind(gearGVK) != nil {
		t.Error("the receiver's set gained Gear")
	}
	_, err = first.WithSchemas([]byte(other), []byte("apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n"))
	var se *SchemaError
	if !errors.As(err, &se) || se.Document() != 1 {
		t.Errorf("err = %v, want a *SchemaError of document 1", err)
	}
}
