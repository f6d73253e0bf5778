package managedfields

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want fieldpath.Path
	}{
		{".spec.replicas", fieldpath.MakePathOrDie("spec", "replicas")},
		{"spec.replicas", fieldpath.MakePathOrDie("spec", "replicas")},
		{".spec.template.spec.containers[name=nginx].image", fieldpath.MakePathOrDie("spec", "template", "spec", "containers", fieldpath.KeyByFields("name", "nginx"), "image")},
		{`.spec.template.spec.containers[name="nginx"].image`, fieldpath.MakePathOrDie("spec", "template", "spec", "containers", fieldpath.KeyByFields("name", "nginx"), "image")},
		{`.spec.containers[name='nginx']`, fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "nginx"))},
		{`.ports[protocol="TCP",containerPort=80]`, fieldpath.MakePathOrDie("ports", fieldpath.KeyByFields("containerPort", int64(80), "protocol", "TCP"))},
		{`.ports[containerPort=80, protocol=TCP]`, fieldpath.MakePathOrDie("ports", fieldpath.KeyByFields("containerPort", int64(80), "protocol", "TCP"))},
		{`.metadata.finalizers[="example.com/guard"]`, fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface("example.com/guard"))},
		{`.metadata.finalizers[=example.com/guard]`, fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface("example.com/guard"))},
		{`.spec.args[0]`, fieldpath.MakePathOrDie("spec", "args", 0)},
		{`.spec.steps[12].run`, fieldpath.MakePathOrDie("spec", "steps", 12, "run")},
		{`.metadata.labels["app.kubernetes.io/name"]`, fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name")},
		{`.metadata.labels.app\.kubernetes\.io/name`, fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name")},
		{`.x[name="80"]`, fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("name", "80"))},
		{`.x[v=1.5]`, fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("v", 1.5))},
		{`.x[on=true]`, fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("on", true))},
		{`.x[=null]`, fieldpath.MakePathOrDie("x", value.NewValueInterface(nil))},
		{`.x[name="a\"b"]`, fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("name", `a"b`))},
		{`[0]`, fieldpath.MakePathOrDie(0)},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParsePath(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(tc.want) {
				t.Errorf("ParsePath(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestParsePathErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"  ", "empty"},
		{".spec.", "empty field name at offset 6"},
		{".spec..replicas", "empty field name at offset 6"},
		{".spec[", "unclosed [ at offset 5"},
		{".spec[name=nginx", "unclosed [ at offset 5"},
		{".spec[name]", "want [key=value]"},
		{".spec[=]", "empty value"},
		{".spec[name=a,name=b]", `key "name" given twice`},
		{`.spec["x]`, "unterminated string"},
		{`.spec[name="\q"]`, "bad quoted string"},
		{".spec]x", "unexpected ]"},
		{".spec[0]x", "unexpected 'x'"},
		{".spec[=a,b]", "unclosed ["},
		{".spec[99999999999999999999]", "index"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParsePath(tc.in)
			if err == nil {
				t.Fatalf("ParsePath(%q) succeeded", tc.in)
			}
			if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParsePath(%q) = %v, want an ErrInvalidPath mentioning %q", tc.in, err, tc.want)
			}
		})
	}
}

// TestParsePathReadsServerPaths checks that what the API server prints in
// conflict messages (fieldpath.Path.String) parses back to the same path.
func TestParsePathReadsServerPaths(t *testing.T) {
	for _, p := range []fieldpath.Path{
		fieldpath.MakePathOrDie("spec", "template", "spec", "containers", fieldpath.KeyByFields("name", "nginx"), "ports", fieldpath.KeyByFields("containerPort", int64(8080), "protocol", "TCP"), "name"),
		fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface("example.com/a")),
		fieldpath.MakePathOrDie("spec", "steps", 3, "run"),
		fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("weird", "a,b]c=\"d\"")),
	} {
		got, err := ParsePath(p.String())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !got.Equals(p) {
			t.Errorf("ParsePath(%s) = %s", p, got)
		}
	}
}

func TestPathElementsRoundTrip(t *testing.T) {
	p := fieldpath.MakePathOrDie("metadata", "annotations", "deployment.kubernetes.io/revision")
	elems := PathElements(p)
	if diff := cmp.Diff([]string{"f:metadata", "f:annotations", "f:deployment.kubernetes.io/revision"}, elems); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	back, err := PathFromElements(elems)
	if err != nil || !back.Equals(p) {
		t.Errorf("PathFromElements = %s, %v", back, err)
	}
	if _, err := PathFromElements([]string{"q:x"}); !errors.Is(err, ErrInvalidPath) {
		t.Errorf("want ErrInvalidPath, got %v", err)
	}
}

// FuzzParsePath: no input panics, and every path it accepts prints (as the
// API server would) to something it reads back as the same path, unless a
// field name holds characters the server's format cannot express.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{".spec.replicas", `.a[name="x"].b`, `.p[containerPort=80,protocol="TCP"]`, `.f[="v"]`, `[3]`, `.l["a.b"]`, `.x\.y`, `.a[k=1e5]`, `.a[k=-0]`, `.a[=[1]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("error %v does not wrap ErrInvalidPath", err)
			}
			return
		}
		for _, pe := range p {
			if pe.FieldName != nil && strings.ContainsAny(*pe.FieldName, ".[]\\") {
				return
			}
			if pe.Key != nil {
				for _, k := range *pe.Key {
					if strings.ContainsAny(k.Name, "=,[]\"' ") || strings.TrimSpace(k.Name) != k.Name {
						return
					}
				}
			}
		}
		back, err := ParsePath(p.String())
		if err != nil {
			t.Fatalf("ParsePath(%q) = %s, which does not parse: %v", s, p, err)
		}
		if !back.Equals(p) {
			t.Fatalf("ParsePath(%q) = %s, which reads back as %s", s, p, back)
		}
	})
}

func TestAppendDisplayPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		path fieldpath.Path
		want string
	}{
		{"plain fields", fieldpath.MakePathOrDie("spec", "replicas"), ".spec.replicas"},
		{"dotted name", fieldpath.MakePathOrDie("metadata", "annotations", "deployment.kubernetes.io/revision"), `.metadata.annotations["deployment.kubernetes.io/revision"]`},
		{"blank and bracket names", fieldpath.MakePathOrDie("data", " ", "a[0]", `b\c`), `.data[" "]["a[0]"]["b\\c"]`},
		{"keyed item", fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "app"), "image"), `.spec.containers[name="app"].image`},
		{"index and set item", fieldpath.MakePathOrDie("args", 2, "f", value.NewValueInterface("x")), `.args[2].f[="x"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendDisplayPath(nil, tc.path))
			if got != tc.want {
				t.Fatalf("AppendDisplayPath = %s, want %s", got, tc.want)
			}
			back, err := ParsePath(got)
			if err != nil || !back.Equals(tc.path) {
				t.Errorf("ParsePath(%s) = %s, %v: want the same path back", got, back, err)
			}
		})
	}
}
