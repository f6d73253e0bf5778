package positions

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  finalizers:
  - example.com/a
  - example.com/b
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: sidecar
        image: envoy
      - name: web
        image: nginx
        args: [--a, --b]
        ports:
        - containerPort: 80
          protocol: TCP
        - containerPort: 80
          protocol: UDP
`

// where renders a Location for comparison: line:column, then "~ancestor"
// when the path was not all found.
func where(l Location) string {
	s := fmt.Sprintf("%d:%d", l.Line, l.Column)
	if !l.Exact {
		s += " ~" + l.Path.String()
	}
	return s
}

// locate parses input as file name and locates path in its object obj.
func locate(t *testing.T, name, input string, obj int, path string) Location {
	t.Helper()
	f, err := Parse(name, []byte(input))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if obj >= len(f.Objects) {
		t.Fatalf("Parse: %d objects, want more than %d", len(f.Objects), obj)
	}
	p, err := managedfields.ParsePath(path)
	if err != nil {
		t.Fatalf("ParsePath(%q): %v", path, err)
	}
	return f.Objects[obj].Locate(p)
}

func TestLocate(t *testing.T) {
	tests := []struct {
		name  string
		input string
		obj   int
		path  string
		want  string
	}{
		{"field", deployment, 0, ".spec.replicas", "9:3"},
		{"top-level field", deployment, 0, ".kind", "2:1"},
		{"keyed list item points at its - name line", deployment, 0, `.spec.template.spec.containers[name="web"]`, "15:9"},
		{"field of a keyed item", deployment, 0, `.spec.template.spec.containers[name="web"].image`, "16:9"},
		{"item keyed by two fields", deployment, 0, `.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="UDP"]`, "21:11"},
		{"set item by value", deployment, 0, `.metadata.finalizers[="example.com/b"]`, "7:5"},
		{"index into a flow list", deployment, 0, `.spec.template.spec.containers[name="web"].args[1]`, "17:21"},
		{"missing field: nearest ancestor", deployment, 0, `.spec.template.spec.containers[name="web"].resources.limits`, `15:9 ~.spec.template.spec.containers[name="web"]`},
		{"missing key: nearest ancestor", deployment, 0, `.spec.template.spec.containers[name="db"].image`, "12:7 ~.spec.template.spec.containers"},
		{"missing set item", deployment, 0, `.metadata.finalizers[="example.com/c"]`, "5:3 ~.metadata.finalizers"},
		{"index out of range", deployment, 0, `.spec.template.spec.containers[name="web"].args[2]`, `17:9 ~.spec.template.spec.containers[name="web"].args`},
		{"a field below a scalar", deployment, 0, `.spec.replicas.x`, "9:3 ~.spec.replicas"},
		{"nothing found: the object's first line", deployment, 0, `.status.replicas`, "1:1 ~"},
		{"multi-document: the second object", multiDoc, 1, ".data.b", "11:3"},
		{"multi-document: the first object", multiDoc, 0, ".metadata.name", "5:3"},
		{"JSON", jsonDoc, 0, ".spec.replicas", "5:12"},
		{"JSON keyed item", jsonDoc, 0, `.spec.template.spec.containers[name="web"].image`, "6:53"},
		{"flow style", flowDoc, 0, ".spec.selector.matchLabels.app", "4:46"},
		{"flow style list item", flowDoc, 0, `.spec.template.spec.containers[name="web"]`, "5:48"},
		{"anchor: the field where it is written", aliasDoc, 0, ".metadata.labels.app", "6:5"},
		{"anchor: a flow field where it is written", aliasDoc, 0, ".metadata.annotations.x.image", "8:27"},
		{"alias: the field at the alias's use site", aliasDoc, 0, ".spec.selector.matchLabels.app", "11:18"},
		{"alias: the key that holds the alias", aliasDoc, 0, ".spec.selector.matchLabels", "11:5"},
		{"item keyed through its merged fields", aliasDoc, 0, `.spec.template.spec.containers[name="web"]`, "15:9"},
		{"merge key: the alias it comes through", aliasDoc, 0, `.spec.template.spec.containers[name="web"].imagePullPolicy`, "15:13"},
		{"merge key: an explicit key after it wins", aliasDoc, 0, `.spec.template.spec.containers[name="web"].name`, "16:9"},
		{"alias as a list item", aliasDoc, 0, `.spec.template.spec.containers[name="side"]`, "18:9"},
		{"field of an alias list item: the alias", aliasDoc, 0, `.spec.template.spec.containers[name="side"].image`, "18:9"},
		{"duplicate key: the last one wins", "kind: A\napiVersion: v1\nkind: B\n", 0, ".kind", "3:1"},
		{"merge key before a key: merged value replaces it", "kind: A\napiVersion: v1\nx: 1\n<<: {x: 2}\n", 0, ".x", "4:6"},
		{"YAML 1.1 key", "kind: A\napiVersion: v1\ndata:\n  yes: 1\n", 0, ".data.true", "4:3"},
		{"key that is a document marker alone", "kind: A\napiVersion: v1\ndata:\n  ---: 1\n  ...: 2\n", 0, `.data["---"]`, "4:3"},
		{"key that is a document end alone", "kind: A\napiVersion: v1\ndata:\n  ---: 1\n  ...: 2\n", 0, `.data["..."]`, "5:3"},
		{"number key", "kind: A\napiVersion: v1\ndata:\n  0x10: 1\n", 0, ".data.16", "4:3"},
		{"key that is a number in the path", "kind: A\napiVersion: v1\nspec:\n  ports:\n  - {port: 443}\n  - {port: 80.0}\n", 0, ".spec.ports[port=80]", "6:5"},
		{"lone carriage return breaks no line", "kind: A\napiVersion: v1\ndata: {a: \"x\"}\r  \nb: 1\n", 0, ".b", "4:1"},
		{"NEL inside a line", "kind: A\napiVersion: v1\ndata:\n  a: x\u0085  b: y\n", 0, ".data.b", "4:10"},
		{"a List's item", listDoc, 1, ".metadata.name", "9:5"},
		{"characters, not bytes", "kind: A\napiVersion: v1\nx: {é: 1, ü: 2}\n", 0, ".x.ü", "3:11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := where(locate(t, "deploy.yaml", tt.input, tt.obj, tt.path))
			if got != tt.want {
				t.Errorf("Locate(%s) = %s, want %s", tt.path, got, tt.want)
			}
		})
	}
}

const multiDoc = `# leading comment
---
apiVersion: v1
metadata:
  name: one
kind: ConfigMap
--- # second
kind: ConfigMap
apiVersion: v1
data:
  b: "2"
---
`

const jsonDoc = `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {"name": "web"},
  "spec": {"replicas": 2, "template": {"spec": {"containers": [
    {"name": "side", "image": "a"}, {"name": "web", "image": "b"}]}}}
}
`

const flowDoc = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {replicas: 2, selector: {matchLabels: {app: web}},
  template: {spec: {containers: [{name: side}, {name: web, image: nginx}]}}}
`

const aliasDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: &labels
    app: web
  annotations:
    x: &side {name: side, image: envoy, imagePullPolicy: Always}
spec:
  selector:
    matchLabels: *labels
  template:
    spec:
      containers:
      - <<: *side
        name: web
        image: nginx
      - *side
`

const listDoc = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
- apiVersion: v1
  metadata:
    name: b
  kind: ConfigMap
`

func TestStartAndSources(t *testing.T) {
	input := "# Source: shop/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n" + "---\n" + listDoc
	f, err := Parse("out.yaml", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	type obj struct {
		Start          string
		Document, Item int
		Template       string
	}
	var got []obj
	for _, o := range f.Objects {
		tmpl := ""
		if o.Template != nil {
			tmpl = o.Template.Tool + ":" + o.Template.File
		}
		got = append(got, obj{fmt.Sprintf("%d:%d", o.Start.Line, o.Start.Column), o.Document, o.Item, tmpl})
	}
	want := []obj{
		{"2:1", 2, -1, "helm:shop/templates/svc.yaml"},
		{"9:3", 6, 0, ""},
		{"12:3", 6, 1, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if o := f.Object(6, 1); o != f.Objects[2] {
		t.Errorf("Object(6, 1) = %v, want the List's second item", o)
	}
	if o := f.Object(6, -1); o != nil {
		t.Errorf("Object(6, -1) = %v, want nil: the List is no object", o)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"bad indentation", "kind: A\napiVersion: v1\n---\nkind: B\n  x: 1\n", "deploy.yaml:5: invalid YAML: mapping values are not allowed in this context"},
		{"unknown alias", "kind: A\n---\n\n# c\nx: *nope\n", "deploy.yaml:5: invalid YAML: unknown anchor 'nope' referenced"},
		{"a List that holds itself", "&l {kind: List, items: [*l]}\n", "deploy.yaml:1: invalid YAML: its aliases expand"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("deploy.yaml", []byte(tt.input))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Parse error = %v, want it to begin %q", err, tt.want)
			}
		})
	}
}

func TestTemplates(t *testing.T) {
	const kustomized = `apiVersion: v1
kind: ConfigMap
metadata:
  name: generated
  annotations:
    config.kubernetes.io/origin: |
      configuredIn: overlays/prod/kustomization.yaml
      configuredBy:
        apiVersion: builtin
        kind: ConfigMapGenerator
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    config.kubernetes.io/origin: |
      path: deploy.yaml
      repo: https://github.com/example/base
      ref: v1.2.0
spec:
  replicas: 1
`
	const helm = `---
# Source: shop/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
---
# Source: shop/charts/db/templates/svc.yaml
apiVersion: v1
kind: Service
metadata: {name: db}
---
apiVersion: v1
kind: Service
metadata: {name: plain}
`
	tests := []struct {
		name, input string
		want        []*Template
	}{
		{"kustomize origin", kustomized, []*Template{
			{Tool: "kustomize", File: "overlays/prod/kustomization.yaml"},
			{Tool: "kustomize", File: "deploy.yaml", Repo: "https://github.com/example/base", Ref: "v1.2.0"},
		}},
		{"helm template", helm, []*Template{
			{Tool: "helm", File: "shop/templates/deploy.yaml"},
			{Tool: "helm", File: "shop/charts/db/templates/svc.yaml"},
			nil,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("-", []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			var got []*Template
			for _, o := range f.Objects {
				got = append(got, o.Template)
				if loc := o.Locate(nil); loc.Template != o.Template || !loc.Exact || loc.Position != o.Start {
					t.Errorf("Locate(nil) = %+v, want the object's Start and Template", loc)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("templates (-want +got):\n%s", diff)
			}
		})
	}
}

// A "---" line with content after it is no separator: sigs.k8s.io/yaml
// reads the first YAML document of what is left and never the rest, so
// Parse does not fail on the rest either.
func TestFirstDocumentOnly(t *testing.T) {
	for _, input := range []string{
		"kind: A\napiVersion: v1\n--- 0:\n",
		"kind: A\napiVersion: v1\n...\n: : bad\n",
		"--- {kind: A, apiVersion: v1}\n--- x: :\n",
	} {
		f, err := Parse("f.yaml", []byte(input))
		if err != nil || len(f.Objects) != 1 {
			t.Errorf("Parse(%q) = %v, %v; want one object", input, f, err)
		}
	}
}

// A document of comments only is skipped unparsed, as pkg/objects skips
// it, whatever bytes the comments hold.
func TestCommentOnlyDocument(t *testing.T) {
	f, err := Parse("f.yaml", []byte("# \x00\n---\nkind: A\napiVersion: v1\n"))
	if err != nil || len(f.Objects) != 1 || f.Objects[0].Start.Line != 3 {
		t.Errorf("Parse = %v, %v; want one object on line 3", f, err)
	}
}
