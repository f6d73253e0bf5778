package managedfields

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

func mustPath(t *testing.T, s string) fieldpath.Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func deployment() map[string]any {
	return map[string]any{"spec": map[string]any{
		"replicas": int64(1),
		"ports":    []any{map[string]any{"port": int64(80), "protocol": "TCP"}, map[string]any{"port": int64(443), "protocol": "TCP"}},
		"containers": []any{
			map[string]any{"name": "app", "image": "app:1"},
			map[string]any{"name": "80", "image": "eighty:1"},
		},
		"finalizers": []any{"a", "b"},
	}}
}

func TestGetPath(t *testing.T) {
	obj := deployment()
	for _, tc := range []struct {
		path string
		want any
		ok   bool
	}{
		{"spec.replicas", int64(1), true},
		{".spec.replicas", int64(1), true},
		{"spec.containers[1].image", "eighty:1", true},
		{"spec.containers[name=app].image", "app:1", true},
		{`spec.containers[name="app"].image`, "app:1", true},
		{"spec.containers[name=80].image", "eighty:1", true},
		{"spec.ports[port=443,protocol=TCP]", map[string]any{"port": int64(443), "protocol": "TCP"}, true},
		{"spec.ports[port=443.0].protocol", "TCP", true},
		{"spec.finalizers[=b]", "b", true},
		{"spec.containers[name=web].image", nil, false},
		{"spec.containers[2]", nil, false},
		{"spec.replicas.x", nil, false},
		{"spec.replicas[0]", nil, false},
		{"status", nil, false},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, ok := GetPath(obj, mustPath(t, tc.path))
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestSetPathCopiesOnWrite(t *testing.T) {
	shared := deployment()
	for _, p := range []string{"spec.containers[name=app].image", "spec.containers[0].name", "status.ready", "spec.ports[port=80].name"} {
		obj := map[string]any{"spec": shared["spec"]}
		if err := SetPath(obj, mustPath(t, p), "changed"); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got, _ := GetPath(obj, mustPath(t, p)); got != "changed" {
			t.Errorf("%s = %v after SetPath", p, got)
		}
	}
	obj := map[string]any{"spec": shared["spec"]}
	if err := SetPath(obj, mustPath(t, "spec.finalizers[=a]"), "a2"); err != nil {
		t.Fatal(err)
	}
	if got, _ := GetPath(obj, mustPath(t, "spec.finalizers")); !cmp.Equal(got, []any{"a2", "b"}) {
		t.Errorf("finalizers = %v after replacing the set item a", got)
	}
	if d := cmp.Diff(deployment(), shared); d != "" {
		t.Errorf("SetPath wrote into shared values (-want +got):\n%s", d)
	}
}

func TestSetPathErrors(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"spec.containers[name=web].image", "spec.containers[name=web]: no list item with name=web"},
		{"spec.containers[5].image", "spec.containers[5]: no list item 5"},
		{"spec.replicas.x", "spec.replicas is not an object"},
		{"spec.volumes[0].name", "spec.volumes: no list"},
	} {
		err := SetPath(deployment(), mustPath(t, tc.path), "x")
		if err == nil || err.Error() != tc.want {
			t.Errorf("SetPath(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}

func TestShortPathStringReadsBack(t *testing.T) {
	for _, tc := range []struct {
		path fieldpath.Path
		want string
	}{
		{fieldpath.MakePathOrDie("data", "count"), "data.count"},
		{fieldpath.MakePathOrDie("spec", "containers", fieldpath.KeyByFields("name", "app"), "image"), "spec.containers[name=app].image"},
		{fieldpath.MakePathOrDie("spec", "containers", 1, "image"), "spec.containers[1].image"},
		{fieldpath.MakePathOrDie("ports", fieldpath.KeyByFields("port", int64(80), "protocol", "TCP")), "ports[port=80,protocol=TCP]"},
		{fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("name", "80")), `x[name="80"]`},
		{fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("name", "a,b")), `x[name="a,b"]`},
		{fieldpath.MakePathOrDie("x", fieldpath.KeyByFields("on", true)), `x[on=true]`},
		{fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name"), `metadata.labels["app.kubernetes.io/name"]`},
		{fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface("example.com/x")), `metadata.finalizers[=example.com/x]`},
		{fieldpath.MakePathOrDie("a.b", "c"), `["a.b"].c`},
	} {
		got := ShortPathString(tc.path)
		if got != tc.want {
			t.Errorf("ShortPathString(%s) = %s, want %s", tc.path, got, tc.want)
		}
		back, err := ParsePath(got)
		if err != nil || !back.Equals(tc.path) {
			t.Errorf("ParsePath(%s) = %s, %v, want %s", got, back, err, tc.path)
		}
	}
}

// FuzzShortPathString: every path ParsePath accepts prints in the short
// form to something it reads back as the same path.
func FuzzShortPathString(f *testing.F) {
	for _, s := range []string{"data.count", `.a[name="x"].b`, `.p[containerPort=80,protocol="TCP"]`, `.f[="v"]`, `[3]`, `.l["a.b"]`, `.x\.y`, `.a[k=1e5]`, `.a[k=" x"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePath(s)
		if err != nil {
			return
		}
		for _, pe := range p {
			if pe.Key != nil {
				for _, k := range *pe.Key {
					if strings.ContainsAny(k.Name, "=,[]\"' ") || strings.TrimSpace(k.Name) != k.Name {
						return
					}
				}
			}
		}
		short := ShortPathString(p)
		back, err := ParsePath(short)
		if err != nil {
			t.Fatalf("ParsePath(%q) = %s, whose short form %q does not parse: %v", s, p, short, err)
		}
		if !back.Equals(p) {
			t.Fatalf("ParsePath(%q) = %s, whose short form %q reads back as %s", s, p, short, back)
		}
	})
}
