package ownersprint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// now is the fixed time ages are measured from in the golden files.
var now = time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC)

const inputs = "../../managedfields/testdata"

func load(t testing.TB, filter managedfields.Filter, files ...string) []owners.Object {
	t.Helper()
	var paths []string
	for _, f := range files {
		paths = append(paths, filepath.Join(inputs, f))
	}
	objs, err := objects.Read(context.Background(), paths, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Golden files must not depend on where the repository is.
	for i := range objs {
		objs[i].Source.File = filepath.Base(objs[i].Source.File)
	}
	r, err := owners.Analyze(objs, owners.Config{Filter: filter})
	if err != nil {
		t.Fatal(err)
	}
	return r.Objects
}

// analyze runs the owners engine on one object read from the cluster,
// without a filter.
func analyze(tb testing.TB, u *unstructured.Unstructured) []owners.Object {
	tb.Helper()
	r, err := owners.Analyze([]objects.Object{{Object: u, Source: objects.Source{Item: -1}}}, owners.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return r.Objects
}

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Assert(t, name+".golden", got)
}

func render(t *testing.T, view string, format output.Format, objs []owners.Object, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	p := &output.Printer{Format: format, Out: &buf}
	var err error
	switch view {
	case "tree":
		err = Tree(&buf, objs, opts)
	case "blame":
		err = Blame(&buf, objs, opts)
	case "table":
		err = Table(p, objs, opts)
	case "summary":
		err = Summary(p, objs, opts)
	case "json":
		err = p.PrintObject(NewReport(objs, nil))
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestViewsGolden(t *testing.T) {
	mustPath := func(s string) fieldpath.Path {
		p, err := managedfields.ParsePath(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		files  []string
		filter managedfields.Filter
		opts   Options
		views  []string
	}{
		{name: "deployment", files: []string{"deployment.yaml"}, views: []string{"tree", "blame", "table", "summary", "json"}},
		{name: "deployment-wide", files: []string{"deployment.yaml"}, views: []string{"table", "summary"}},
		{name: "hazards", files: []string{"hazards.yaml"}, views: []string{"tree", "blame", "table", "summary", "json"}},
		{name: "secret", files: []string{"secret.yaml"}, views: []string{"tree", "blame", "table"}},
		{name: "secret-shown", files: []string{"secret.yaml"}, opts: Options{ShowSecrets: true}, views: []string{"blame"}},
		{name: "two-objects", files: []string{"deployment.yaml", "hazards.yaml"}, views: []string{"tree", "blame", "table", "summary"}},
		{name: "manager-team-b", files: []string{"deployment.yaml"}, filter: managedfields.Filter{Manager: "team-b"}, views: []string{"tree", "table", "summary"}},
		{name: "shared", files: []string{"deployment.yaml"}, filter: managedfields.Filter{Shared: true}, views: []string{"tree", "table"}},
		{name: "field-ports", files: []string{"deployment.yaml"}, filter: managedfields.Filter{Field: mustPath(".spec.template.spec.containers[name=nginx].ports[containerPort=8080]")}, views: []string{"tree", "table", "json"}},
		{name: "field-color", files: []string{"hazards.yaml"}, filter: managedfields.Filter{Field: mustPath("spec.color")}, views: []string{"tree"}},
		{name: "time-full", files: []string{"deployment.yaml"}, opts: Options{Time: TimeFull}, views: []string{"tree", "blame", "table", "summary"}},
		{name: "time-none", files: []string{"deployment.yaml"}, opts: Options{Time: TimeNone}, views: []string{"tree", "blame", "table", "summary"}},
		{name: "time-none-wide", files: []string{"deployment.yaml"}, opts: Options{Time: TimeNone}, views: []string{"table", "summary"}},
	} {
		for _, view := range tc.views {
			t.Run(tc.name+"/"+view, func(t *testing.T) {
				objs := load(t, tc.filter, tc.files...)
				opts := tc.opts
				opts.Now = now
				format := output.Table
				if strings.HasSuffix(tc.name, "-wide") {
					format = output.Wide
				}
				got := render(t, view, format, objs, opts)
				ext := view
				if view == "blame" {
					ext = "blame.yaml"
					var docs []any
					for _, d := range strings.Split(string(got), "\n---\n") {
						var v any
						if err := yaml.Unmarshal([]byte(d), &v); err != nil {
							t.Fatalf("the blame view is not valid YAML: %v\n%s", err, got)
						}
						docs = append(docs, v)
					}
					if len(docs) != len(objs) {
						t.Errorf("blame: %d documents for %d objects", len(docs), len(objs))
					}
				}
				goldenFile(t, tc.name+"."+ext, got)
			})
		}
	}
}

func TestSecretValuesNeverShown(t *testing.T) {
	objs := load(t, managedfields.Filter{}, "secret.yaml")
	secretValues := []string{"czNjcjN0LXZhbHVl", "s3cr3t-value"}
	for _, view := range []string{"tree", "blame", "table", "summary", "json"} {
		got := render(t, view, output.Table, objs, Options{Now: now})
		for _, v := range secretValues {
			if bytes.Contains(got, []byte(v)) {
				t.Errorf("view %s shows the secret value %q", view, v)
			}
		}
	}
	got := render(t, "blame", output.Table, objs, Options{Now: now, ShowSecrets: true})
	if !bytes.Contains(got, []byte(secretValues[0])) {
		t.Errorf("--show-secrets should show the value:\n%s", got)
	}
}

// TestBlameRoundTrips checks that the blame view of an object reads back as
// the object itself (without managedFields).
func TestBlameRoundTrips(t *testing.T) {
	for _, f := range []string{"deployment.yaml", "hazards.yaml"} {
		objs := load(t, managedfields.Filter{}, f)
		got := render(t, "blame", output.Table, objs, Options{Now: now})
		checkRoundTrip(t, objs[0].Object.Object, got)
	}
}

// checkRoundTrip checks that the blame view reads back as kubectl's YAML
// of the object (without managedFields) does: the owner comments change no
// value. (kubectl's YAML itself loses a few characters, such as a raw NEL.)
func checkRoundTrip(t testing.TB, obj map[string]any, blame []byte) {
	t.Helper()
	kubectl, err := yaml.Marshal(withoutManagedFields(obj))
	if err != nil {
		t.Skip("not representable as JSON")
	}
	wantJSON, err := yaml.YAMLToJSON(kubectl)
	if err != nil {
		t.Fatalf("kubectl's YAML does not read back: %v", err)
	}
	var wantV, gotV any
	if err := json.Unmarshal(wantJSON, &wantV); err != nil {
		t.Fatal(err)
	}
	gotJSON, err := yaml.YAMLToJSON(blame)
	if err != nil {
		t.Fatalf("the blame view is not valid YAML: %v\n%s", err, blame)
	}
	if err := json.Unmarshal(gotJSON, &gotV); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Fatalf("the blame view does not read back as the object (-want +got):\n%s\n%s", diff, blame)
	}
}

// FuzzBlame renders arbitrary objects with arbitrary FieldsV1: it must never
// panic, and the output must read back as the object.
func FuzzBlame(f *testing.F) {
	f.Add(`{"spec":{"a":"x: y","b":["- z","#c"],"c":{"d":null,"e":1.5,"f":true}},"status":{"s":"yes"}}`, `{"f:spec":{"f:a":{},"f:b":{},"f:c":{"f:d":{}}}}`)
	f.Add(`{"spec":{"l":[{"name":"a","v":1},{"name":"b"}],"set":["x","y"],"idx":[[1,2],{}]}}`, `{"f:spec":{"f:l":{"k:{\"name\":\"a\"}":{".":{},"f:v":{}}},"f:set":{"v:\"y\"":{}},"f:idx":{"i:0":{}}}}`)
	f.Add(`{"data":{"k":"line1\nline2\u0085\u2028\u001b[31m"," lead":"trail ","":"","'q'":"\"dq\""}}`, `{"f:data":{"f:k":{},"f: lead":{}}}`)
	f.Add(`{"spec":{"n":-0.0,"big":1e300,"i":-9223372036854775808,"on":"on","null":"~","num":"0x1F","t":"2026-01-01"}}`, `{"f:spec":{"f:n":{}}}`)
	f.Fuzz(func(t *testing.T, content, fields string) {
		var obj map[string]any
		if err := json.Unmarshal([]byte(content), &obj); err != nil || obj == nil {
			return
		}
		obj = normalizeJSON(obj).(map[string]any)
		obj["apiVersion"], obj["kind"] = "v1", "Thing"
		obj["metadata"] = map[string]any{"name": "x", "managedFields": []any{map[string]any{
			"manager": "m\n# not a comment", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
			"fieldsV1": json.RawMessage(fields)}}}
		raw, err := json.Marshal(obj)
		if err != nil {
			return
		}
		decoded, err := objects.Decode("fuzz.json", raw)
		if err != nil || len(decoded) != 1 {
			return
		}
		r, err := owners.Analyze(decoded, owners.Config{})
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Blame(&buf, r.Objects, Options{Now: now}); err != nil {
			t.Fatal(err)
		}
		checkRoundTrip(t, decoded[0].Object.Object, buf.Bytes())
		checkKubectlLines(t, decoded[0].Object.Object, buf.Bytes())
		buf.Reset()
		if err := Tree(&buf, r.Objects, Options{Now: now}); err != nil {
			t.Fatal(err)
		}
	})
}

func normalizeJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeJSON(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalizeJSON(e)
		}
	}
	return v
}

// TestTreeColor checks that color only adds escape codes: yellow around the
// owners of shared fields, red around fields the object no longer has.
func TestTreeColor(t *testing.T) {
	objs := load(t, managedfields.Filter{}, "hazards.yaml")
	plain := render(t, "tree", output.Table, objs, Options{Now: now})
	colored := render(t, "tree", output.Table, objs, Options{Now: now, Color: true})
	stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAll(colored, nil)
	if diff := cmp.Diff(string(plain), string(stripped)); diff != "" {
		t.Fatalf("colored tree without its escape codes differs from the plain one (-plain +colored):\n%s", diff)
	}
	var red, yellow bool
	for _, line := range strings.Split(string(colored), "\n") {
		switch {
		case strings.Contains(line, "(not in the object)"):
			red = true
			if !strings.Contains(line, "\x1b[31m") || !strings.HasSuffix(line, "(not in the object)\x1b[0m") {
				t.Errorf("a field not in the object is not red: %q", line)
			}
		case strings.HasPrefix(strings.TrimSpace(line), "color "):
			yellow = true
			if !strings.Contains(line, "\x1b[33mkubectl-client-side-apply") || !strings.HasSuffix(line, "\x1b[0m") {
				t.Errorf("a shared field is not yellow: %q", line)
			}
		}
	}
	if !red || !yellow {
		t.Fatalf("the fixture lost its shared field or its missing field:\n%s", colored)
	}
}

// TestTimeFormatsDoNotDependOnNow renders every view with --time full and
// none at two different nows: the output must not change.
func TestTimeFormatsDoNotDependOnNow(t *testing.T) {
	objs := load(t, managedfields.Filter{}, "deployment.yaml", "hazards.yaml")
	for _, f := range []TimeFormat{TimeFull, TimeNone} {
		for _, view := range []string{"tree", "blame", "table", "summary"} {
			a := render(t, view, output.Wide, objs, Options{Now: now, Time: f})
			b := render(t, view, output.Wide, objs, Options{Now: now.Add(1000 * time.Hour), Time: f})
			if !bytes.Equal(a, b) {
				t.Errorf("--time %s --view %s changes with the clock:\n%s\n---\n%s", f, view, a, b)
			}
		}
	}
	rel := render(t, "table", output.Table, objs, Options{Now: now})
	later := render(t, "table", output.Table, objs, Options{Now: now.Add(1000 * time.Hour)})
	if bytes.Equal(rel, later) {
		t.Errorf("relative ages do not move with the clock:\n%s", rel)
	}
}

// TestFutureTimesShowAsClockSkew measures ages from a now before the
// entries were written, as on a machine whose clock is behind the server's.
func TestFutureTimesShowAsClockSkew(t *testing.T) {
	objs := load(t, managedfields.Filter{}, "hazards.yaml")
	before := time.Date(2026, 11, 21, 10, 55, 0, 0, time.UTC) // argocd wrote at 11:00
	for _, view := range []string{"tree", "blame", "table", "summary"} {
		got := string(render(t, view, output.Table, objs, Options{Now: before}))
		if !strings.Contains(got, "in 5m (clock skew)") || !strings.Contains(got, "in 35m (clock skew)") {
			t.Errorf("--view %s does not show times ahead of now as clock skew:\n%s", view, got)
		}
		if strings.Contains(got, " 0s") || strings.Contains(got, ", 0s)") {
			t.Errorf("--view %s shows a future time as 0s:\n%s", view, got)
		}
	}
}

// TestTableRowPerOwner checks that a field with several owners gets one
// row per owner, each marked MULTI, and a field with one owner one row.
func TestTableRowPerOwner(t *testing.T) {
	objs := load(t, managedfields.Filter{}, "deployment.yaml")
	got := string(render(t, "table", output.Table, objs, Options{Now: now, Time: TimeNone}))
	var image, replicas []string
	for _, line := range strings.Split(got, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case `.spec.template.spec.containers[name="nginx"].image`:
			image = append(image, strings.Join(f[1:], " "))
		case ".spec.replicas":
			replicas = append(replicas, strings.Join(f[1:], " "))
		}
		if strings.Contains(line, ",") && !strings.Contains(line, "=") {
			t.Errorf("a row still holds a comma list: %q", line)
		}
	}
	want := []string{"team-a Apply - apps/v1 MULTI", "kubectl-create Update - apps/v1 MULTI"}
	if diff := cmp.Diff(want, image); diff != "" {
		t.Errorf("rows of the shared image (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"kubectl Update scale apps/v1 -"}, replicas); diff != "" {
		t.Errorf("rows of .spec.replicas (-want +got):\n%s", diff)
	}
}

// TestDottedFieldNamesAreUnambiguous checks that the tree and the table
// write a field name holding dots as ["name"], which --field reads back.
func TestDottedFieldNamesAreUnambiguous(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"example.com/a.b":"x"},
		"managedFields":[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{"f:example.com/a.b":{}}}}},
		{"manager":"n","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}}}]},"data":{"k":"v"}}`)); err != nil {
		t.Fatal(err)
	}
	objs := analyze(t, u)
	const want = `metadata.annotations["example.com/a.b"]`
	tree := string(render(t, "tree", output.Table, objs, Options{Now: now}))
	if !strings.Contains(tree, "  "+want+"   m (Apply)") {
		t.Errorf("tree does not bracket the dotted name:\n%s", tree)
	}
	table := string(render(t, "table", output.Table, objs, Options{Now: now}))
	if !strings.Contains(table, "\n."+want+" ") {
		t.Errorf("table does not bracket the dotted name:\n%s", table)
	}
	p, err := managedfields.ParsePath("." + want)
	if err != nil || len(p) != 3 || *p[2].FieldName != "example.com/a.b" {
		t.Errorf("the shown path does not read back as the field: %v %v", p, err)
	}
}

// TestObjectWithoutNameHasNoDoubleSpace checks the header of an object
// that has no name.
func TestObjectWithoutNameHasNoDoubleSpace(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{
		"managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}}}]},"data":{"k":"v"}}`)); err != nil {
		t.Fatal(err)
	}
	objs := analyze(t, u)
	for _, view := range []string{"tree", "blame"} {
		got := string(render(t, view, output.Table, objs, Options{Now: now}))
		if strings.Contains(got, "ConfigMap  ") || !strings.Contains(got, "ConfigMap") {
			t.Errorf("--view %s header of a nameless object:\n%s", view, got)
		}
	}
}

// TestDriftGolden renders the drift from team-a of the golden Deployment:
// the table (with the /scale and /status writers named, --include-status)
// and the report; and the drift from the inferred main applier, the /status
// writers left out (the default).
func TestDriftGolden(t *testing.T) {
	paths := []string{filepath.Join(inputs, "deployment.yaml")}
	objs, err := objects.Read(context.Background(), paths, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs[0].Source.File = "deployment.yaml"
	for _, tc := range []struct {
		name, expected string
		includeStatus  bool
	}{{"drift-team-a", "team-a", true}, {"drift-inferred", "", false}} {
		r, err := owners.Analyze(objs, owners.Config{Drift: &owners.DriftConfig{ExpectedManager: tc.expected, IncludeStatus: tc.includeStatus}})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Drift(&output.Printer{Format: output.Table, Out: &buf}, r.Objects, Options{Now: now}); err != nil {
			t.Fatal(err)
		}
		goldenFile(t, tc.name+".table", buf.Bytes())
		rep := NewReport(r.Objects, nil)
		checkSameJSON(t, tc.name, rep)
		js, err := json.MarshalIndent(rep.Items[0].Drift, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		goldenFile(t, tc.name+".json", append(js, '\n'))
	}
}

// checkKubectlLines checks that the blame view of one object is
// sigs.k8s.io/yaml's marshal of it (what kubectl get -o yaml prints), line
// by line: each of its lines is there, in order, with at most an owner note
// after it; the other lines are comments.
func checkKubectlLines(t testing.TB, obj map[string]any, blame []byte) {
	t.Helper()
	want, err := yaml.Marshal(withoutManagedFields(obj))
	if err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	next := 0
	for _, line := range strings.Split(strings.TrimSuffix(string(blame), "\n"), "\n") {
		if next < len(wantLines) {
			w := wantLines[next]
			if rest, ok := strings.CutPrefix(line, w); ok && (rest == "" || strings.HasPrefix(strings.TrimLeft(rest, " "), "# ") && strings.HasPrefix(rest, "  ")) {
				next++
				continue
			}
		}
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "# ") {
			t.Fatalf("blame line %q is neither kubectl's next line %q nor a comment\nblame:\n%s\nkubectl:\n%s", line, wantLines[min(next, len(wantLines)-1)], blame, want)
		}
	}
	if next != len(wantLines) {
		t.Fatalf("blame lacks kubectl's line %q\nblame:\n%s\nkubectl:\n%s", wantLines[next], blame, want)
	}
}

// trickyObject holds the scalars YAML writers disagree on: strings that
// read as numbers, booleans, null or timestamps, leading indicators,
// ": " and " #", multi-line and long (wrapped) strings, dotted keys.
func trickyObject(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	values := []any{"500m", "--port=8080", "-g", "daemon off;", "123", "1.5", "1e3", "0x1F", "0o17", "1_000", "+1", ".5", "true", "True", "yes", "no", "on", "off", "y", "n", "null", "~", "", " lead", "trail ", "a: b", "a:b", "x #y", "x#y", "#c", "@at", "`tick", "%pct", "!bang", "&amp", "*star", "|pipe", ">gt", "[x]", "{x}", "'q'", `"dq"`, "?q", "? q", "- dash", "-", "2026-01-01", "2026-11-21T15:13:01Z", "12:30", "1:20:30", "é名", "tab\there", "line1\nline2", "line1\nline2\n", "  indented\nblock\n", "\u2028sep", "ctrl\x1b[31m",
		strings.Repeat("long words that wrap ", 8), strings.Repeat("x", 200), int64(3), int64(-9223372036854775808), 1.0, 1.5, 1e300, -0.0, true, nil, map[string]any{}, []any{}}
	data := map[string]any{}
	list := []any{}
	fields := map[string]any{}
	for i, v := range values {
		k := fmt.Sprintf("k%02d", i)
		data[k] = v
		fields["f:"+k] = map[string]any{}
		list = append(list, v)
	}
	data["app.kubernetes.io/name"] = "x"
	data["y"] = "key that reads as a boolean"
	data["item-9"], data["item-10"] = "natural", "order"
	obj := map[string]any{"apiVersion": "v1", "kind": "Thing",
		"metadata": map[string]any{"name": "tricky", "managedFields": []any{map[string]any{
			"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:spec": fields, "f:list": map[string]any{"i:3": map[string]any{}, "i:55": map[string]any{}}},
		}}},
		"spec": data, "list": list}
	js, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestBlameIsKubectlYAML compares the blame view with sigs.k8s.io/yaml's
// marshal of the same objects, line by line.
func TestBlameIsKubectlYAML(t *testing.T) {
	for _, f := range []string{"deployment.yaml", "hazards.yaml", "secret.yaml"} {
		objs := load(t, managedfields.Filter{}, f)
		got := render(t, "blame", output.Table, objs, Options{Now: now, ShowSecrets: true})
		checkKubectlLines(t, objs[0].Object.Object, got)
	}
	for name, u := range map[string]*unstructured.Unstructured{"tricky": trickyObject(t), "big": bigObject(t, 50, 4)} {
		objs := analyze(t, u)
		got := render(t, "blame", output.Table, objs, Options{Now: now})
		checkKubectlLines(t, u.Object, got)
		checkRoundTrip(t, u.Object, got)
		if name == "tricky" {
			goldenFile(t, "tricky.blame.yaml", got)
		}
	}
}
