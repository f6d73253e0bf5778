package managedfields

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

func loadTestdata(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(m)
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

func mustParse(t testing.TB, s string) fieldpath.Path {
	t.Helper()
	p, err := ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func managers(os []Owner) []string {
	out := []string{}
	for _, o := range os {
		id := o.Manager + "/" + string(o.Operation)
		if o.Subresource != "" {
			id += "/" + o.Subresource
		}
		out = append(out, id)
	}
	return out
}

// TestOwnersOfRealDeployment checks attribution on a Deployment dumped from
// the real control plane after kubectl create, two server-side appliers,
// client-side apply, kubectl scale and the deployment controller.
func TestOwnersOfRealDeployment(t *testing.T) {
	own, err := Build(loadTestdata(t, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{".spec.replicas", []string{"kubectl/Update/scale"}},
		{".spec.template.spec.containers[name=nginx]", []string{"team-a/Apply", "team-b/Apply", "kubectl-create/Update"}},
		{".spec.template.spec.containers[name=nginx].image", []string{"team-a/Apply", "kubectl-create/Update"}},
		{".spec.template.spec.containers[name=nginx].args", []string{"kubectl-client-side-apply/Update"}},
		{".spec.template.spec.containers[name=nginx].env[name=MODE].value", []string{"team-a/Apply", "team-b/Apply"}},
		{".spec.template.spec.containers[name=nginx].ports[containerPort=8080,protocol=UDP]", []string{"team-a/Apply"}},
		{".spec.template.spec.containers[name=nginx].ports[containerPort=80,protocol=TCP].containerPort", []string{"kubectl-create/Update"}},
		{`.metadata.finalizers[="example.com/guard"]`, []string{"team-a/Apply"}},
		{`.metadata.annotations["deployment.kubernetes.io/revision"]`, []string{"kube-controller-manager/Update/status"}},
		{".metadata.annotations", []string{"kube-controller-manager/Update/status"}},
		{".status.conditions[type=Available].status", []string{"kube-controller-manager/Update/status"}},
		// Not owned by anyone: ownership is not inherited from parents.
		{".spec", []string{}},
		{".spec.template.spec.containers[name=other]", []string{}},
	} {
		if diff := cmp.Diff(tc.want, managers(own.Owners(mustParse(t, tc.path)))); diff != "" {
			t.Errorf("Owners(%s) (-want +got):\n%s", tc.path, diff)
		}
	}
	if got := managers(own.OwnersWithin(mustParse(t, ".spec.template.spec.containers[name=nginx].env"))); !cmp.Equal(got, []string{"team-a/Apply", "team-b/Apply"}) {
		t.Errorf("OwnersWithin(env) = %v", got)
	}
	// Every owned node is in the object, at the right place.
	for _, n := range own.Fields() {
		if !n.Present {
			t.Errorf("%s: not found in the object", n.Path())
		}
	}
	ports := own.Node(mustParse(t, ".spec.template.spec.containers[name=nginx].ports"))
	var order []string
	for _, c := range ports.Children {
		order = append(order, c.Element.String())
	}
	if diff := cmp.Diff([]string{`[containerPort=80,protocol="TCP"]`, `[containerPort=8080,protocol="TCP"]`, `[containerPort=8080,protocol="UDP"]`}, order); diff != "" {
		t.Errorf("ports in object order (-want +got):\n%s", diff)
	}
	for i, c := range ports.Children {
		if c.ItemIndex != i {
			t.Errorf("%s: ItemIndex %d, want %d", c.Path(), c.ItemIndex, i)
		}
	}
}

func entry(t testing.TB, i int, manager, op, fields string) Entry {
	t.Helper()
	e, err := DecodeEntry(i, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationType(op), APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAttachMatchesItems(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{
		"ports": []any{
			map[string]any{"containerPort": int64(53), "protocol": "UDP"},
			map[string]any{"containerPort": int64(53), "protocol": "TCP"},
		},
		"set":   []any{"b", "a", int64(3)},
		"steps": []any{map[string]any{"run": "x"}, map[string]any{"run": "y"}},
		"float": []any{map[string]any{"k": 1.0}},
	}}
	own := NewOwnership([]Entry{entry(t, 0, "m", "Update", `{"f:spec":{
		"f:ports":{"k:{\"containerPort\":53,\"protocol\":\"TCP\"}":{".":{}},"k:{\"containerPort\":53,\"protocol\":\"SCTP\"}":{".":{}}},
		"f:set":{"v:\"a\"":{},"v:3":{},"v:\"zz\"":{}},
		"f:steps":{"i:1":{"f:run":{}},"i:5":{}},
		"f:float":{"k:{\"k\":1}":{".":{}}}}}`)})
	own.Attach(obj)
	for _, tc := range []struct {
		path    string
		present bool
		index   int
	}{
		{`.spec.ports[containerPort=53,protocol="TCP"]`, true, 1},
		{`.spec.ports[containerPort=53,protocol="SCTP"]`, false, -1},
		{`.spec.set[="a"]`, true, 1},
		{`.spec.set[=3]`, true, 2},
		{`.spec.set[="zz"]`, false, -1},
		{`.spec.steps[1]`, true, 1},
		{`.spec.steps[1].run`, true, -1},
		{`.spec.steps[5]`, false, -1},
		{`.spec.float[k=1]`, true, 0},
	} {
		n := own.Node(mustParse(t, tc.path))
		if n == nil {
			t.Errorf("%s: no node", tc.path)
			continue
		}
		if n.Present != tc.present || n.ItemIndex != tc.index {
			t.Errorf("%s: present=%v index=%d, want %v %d", tc.path, n.Present, n.ItemIndex, tc.present, tc.index)
		}
	}
}

func TestHazards(t *testing.T) {
	own, err := Build(loadTestdata(t, "hazards.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type h struct {
		Type     HazardType
		Managers []string
		Fields   []string
	}
	var got []h
	for _, hz := range own.Hazards() {
		got = append(got, h{hz.Type, hz.Managers(), hz.FieldStrings()})
		if hz.Message == "" {
			t.Errorf("%s: no message", hz.Type)
		}
	}
	want := []h{
		{HazardClientSideApplyMigration, []string{"kubectl-client-side-apply", "argocd"}, []string{".spec.size"}},
		{HazardStaleFields, []string{"kubectl-client-side-apply"}, []string{".spec.gone.deep"}},
		{HazardStaleFields, []string{"ancient-changes"}, []string{".spec.steps[2].run"}},
		{HazardAncientChanges, []string{"ancient-changes"}, []string{}},
		{HazardGenericManager, []string{"Go-http-client"}, []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}

	// Apply and Update co-owning a field that is not client-side apply's.
	own = NewOwnership([]Entry{
		entry(t, 0, "helm", "Update", `{"f:spec":{"f:replicas":{},"f:paused":{}}}`),
		entry(t, 1, "flux", "Apply", `{"f:spec":{"f:replicas":{}}}`),
		entry(t, 2, "", "Update", `{"f:spec":{"f:x":{}}}`),
		entry(t, 3, "Go-http-client/2.0", "Update", `{"f:spec":{"f:y":{}}}`),
	})
	got = nil
	for _, hz := range own.Hazards() {
		got = append(got, h{hz.Type, hz.Managers(), hz.FieldStrings()})
	}
	want = []h{
		{HazardApplyUpdateShared, []string{"helm", "flux"}, []string{".spec.replicas"}},
		{HazardGenericManager, []string{""}, []string{}},
		{HazardGenericManager, []string{"Go-http-client/2.0"}, []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hazards without an object (-want +got):\n%s", diff)
	}
}

func TestFilter(t *testing.T) {
	own, err := Build(loadTestdata(t, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	paths := func(o *Ownership) []string {
		var out []string
		for _, n := range o.Fields() {
			out = append(out, n.Path().String())
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"field leaf", Filter{Field: mustParse(t, ".spec.replicas")}, []string{".spec.replicas"}},
		{"partial key", Filter{Field: mustParse(t, ".spec.template.spec.containers[name=nginx].ports[containerPort=8080,protocol=UDP]")}, []string{
			`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="UDP"]`,
			`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="UDP"].containerPort`,
			`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="UDP"].name`,
			`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="UDP"].protocol`,
		}},
		{"manager", Filter{Manager: "team-b"}, []string{
			".metadata.labels.team",
			`.spec.template.spec.containers[name="nginx"]`,
			`.spec.template.spec.containers[name="nginx"].env[name="MODE"]`,
			`.spec.template.spec.containers[name="nginx"].env[name="MODE"].name`,
			`.spec.template.spec.containers[name="nginx"].env[name="MODE"].value`,
			`.spec.template.spec.containers[name="nginx"].env[name="LEVEL"]`,
			`.spec.template.spec.containers[name="nginx"].env[name="LEVEL"].name`,
			`.spec.template.spec.containers[name="nginx"].env[name="LEVEL"].value`,
			`.spec.template.spec.containers[name="nginx"].name`,
		}},
		{"shared under env", Filter{Shared: true, Field: mustParse(t, ".spec.template.spec.containers[name=nginx].env")}, []string{
			`.spec.template.spec.containers[name="nginx"].env[name="MODE"]`,
			`.spec.template.spec.containers[name="nginx"].env[name="MODE"].name`,
			`.spec.template.spec.containers[name="nginx"].env[name="MODE"].value`,
		}},
		{"nothing", Filter{Manager: "nobody"}, nil},
		{"dotted name as the server prints it", Filter{Field: mustParse(t, ".metadata.annotations.deployment.kubernetes.io/revision")}, []string{".metadata.annotations.deployment.kubernetes.io/revision"}},
		{"dotted name in brackets", Filter{Field: mustParse(t, `.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`)}, []string{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, paths(own.Filtered(tc.filter))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	hs := FilterHazards(own.Hazards(), Filter{Manager: "team-b"}, own.Filtered(Filter{Manager: "team-b"}))
	if len(hs) != 1 || hs[0].Managers()[0] != "team-b" {
		t.Errorf("hazards of team-b: %+v", hs)
	}
}

func TestEntriesErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		mf   any
		want string
	}{
		{"none", nil, "--show-managed-fields"},
		{"not a list", "x", "metadata.managedFields"},
		{"not an object", []any{"x"}, "managedFields[0]"},
		{"bad operation", []any{map[string]any{"manager": "m", "operation": "Patch"}}, `managedFields[0] (manager "m"): operation "Patch"`},
		{"bad fieldsType", []any{map[string]any{"manager": "m", "operation": "Update", "fieldsType": "FieldsV2", "fieldsV1": map[string]any{}}}, `fieldsType "FieldsV2"`},
		{"unknown key", []any{map[string]any{"manager": "ok", "operation": "Update", "fieldsV1": map[string]any{}}, map[string]any{"manager": "m", "operation": "Update", "fieldsV1": map[string]any{"f:spec": map[string]any{"q:x": map[string]any{}}}}}, `managedFields[1] (manager "m"): fieldsV1: under f:spec: invalid key "q:x"`},
		{"bad key json", []any{map[string]any{"manager": "m", "operation": "Update", "fieldsV1": map[string]any{"k:{bad": map[string]any{}}}}, `invalid key "k:{bad"`},
		{"leaf not object", []any{map[string]any{"manager": "m", "operation": "Update", "fieldsV1": map[string]any{"f:a": "x"}}}, `under f:a: want a JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{}}}
			if tc.mf != nil {
				u.Object["metadata"].(map[string]any)["managedFields"] = tc.mf
			}
			_, err := Entries(u)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Entries = %v, want an error mentioning %q", err, tc.want)
			}
			if _, berr := Build(u); berr == nil || berr.Error() != err.Error() {
				t.Fatalf("Build = %v, want the error of Entries, %v", berr, err)
			}
			if tc.name == "none" && !errors.Is(err, ErrNoManagedFields) {
				t.Errorf("want ErrNoManagedFields, got %v", err)
			}
		})
	}
}

// FuzzFieldsV1 feeds arbitrary FieldsV1 to the decoder and the ownership
// model: errors are fine, panics are not, and what decodes must attach to
// any object and analyze without trouble.
func FuzzFieldsV1(f *testing.F) {
	for _, s := range []string{
		`{"f:spec":{"f:replicas":{}}}`,
		`{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{}}}}}`,
		`{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{}}}}`,
		`{"f:metadata":{"f:finalizers":{"v:\"a\"":{},"v:1":{},"v:null":{},"v:[1]":{},"v:{\"a\":1}":{}}}}`,
		`{"f:l":{"i:0":{"f:x":{}},"i:-1":{}}}`,
		`{"q:x":{}}`, `{"f:a":1}`, `[]`, `{"k:{":{}}`, `{}{}`, `{".":{}}`,
	} {
		f.Add([]byte(s), `{"spec":{"replicas":1,"containers":[{"name":"nginx"}]},"ports":[{"containerPort":80,"protocol":"TCP"}],"l":[{"x":1}],"metadata":{"finalizers":["a",1,null]}}`)
	}
	f.Fuzz(func(t *testing.T, fields []byte, content string) {
		e, err := DecodeEntry(0, metav1.ManagedFieldsEntry{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: fields}})
		if err != nil {
			var ee *EntryError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v is not an *EntryError", err)
			}
			return
		}
		// The unstructured path (Entries, which checks and rewrites the
		// decoded map) must read the same set as DecodeEntry.
		var fm map[string]any
		// (encoding/json replaces invalid UTF-8, which jsoniter keeps.)
		if utf8.Valid(fields) && json.Unmarshal(fields, &fm) == nil && fm != nil {
			u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"managedFields": []any{
				map[string]any{"manager": "m", "operation": "Apply", "fieldsV1": fm}}}}}
			es, err := Entries(u)
			if err != nil {
				t.Fatalf("DecodeEntry accepted %s, Entries refused it: %v", fields, err)
			}
			if !es[0].Fields().Equals(e.Fields()) {
				t.Fatalf("Entries read %s, DecodeEntry %s", es[0].Fields(), e.Fields())
			}
			// Build reads the map straight into the tree.
			checkBuildMatches(t, u)
		}
		own := NewOwnership([]Entry{e, entry(t, 1, "u", "Update", `{"f:spec":{"f:replicas":{}}}`)})
		var obj map[string]any
		if json.Unmarshal([]byte(content), &obj) == nil {
			own.Attach(obj)
		}
		for _, n := range own.Fields() {
			if got := own.Owners(n.Path()); len(got) == 0 {
				t.Fatalf("%s is owned but Owners finds nobody", n.Path())
			}
		}
		_ = own.Hazards()
		_ = own.Filtered(Filter{Shared: true})
	})
}

// checkBuildMatches checks that Build, which reads FieldsV1 maps straight
// into the tree, gives what NewOwnership gives from the decoded entries:
// the same owned nodes with the same owners and presence, the same field
// counts and, decoded on demand, the same sets.
func checkBuildMatches(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	es, err := Entries(u)
	got, berr := Build(u)
	if err != nil || berr != nil {
		if err == nil || berr == nil || err.Error() != berr.Error() {
			t.Fatalf("Entries: %v; Build: %v", err, berr)
		}
		return
	}
	want := NewOwnership(es)
	want.Attach(u.Object)
	wf, gf := want.Fields(), got.Fields()
	if len(wf) != len(gf) {
		t.Fatalf("Build owns %d nodes, NewOwnership %d", len(gf), len(wf))
	}
	for i := range wf {
		w, g := wf[i], gf[i]
		if !w.Path().Equals(g.Path()) || !SameOwners(w.Owners, g.Owners) || w.Present != g.Present || w.ItemIndex != g.ItemIndex {
			t.Fatalf("node %d: Build has %s %v present=%v, NewOwnership %s %v present=%v", i, g.Path(), managers(g.Owners), g.Present, w.Path(), managers(w.Owners), w.Present)
		}
	}
	for i, e := range got.Entries() {
		if e.FieldCount() != es[i].Fields().Size() {
			t.Fatalf("entry %d: Build counts %d fields, the set has %d", i, e.FieldCount(), es[i].Fields().Size())
		}
		if !e.Fields().Equals(es[i].Fields()) {
			t.Fatalf("entry %d: decoded on demand %s, want %s", i, e.Fields(), es[i].Fields())
		}
		if e.ID() != es[i].ID() || !e.Time.Equal(es[i].Time) {
			t.Fatalf("entry %d: Build read %s at %v, Entries %s at %v", i, e.ID(), e.Time, es[i].ID(), es[i].Time)
		}
	}
}

func TestBuildMatchesNewOwnership(t *testing.T) {
	for _, name := range testdataObjects(t) {
		t.Run(name, func(t *testing.T) {
			checkBuildMatches(t, loadTestdata(t, name))
		})
	}
	// Keys written differently that are the same element are one node, as
	// they are for fieldpath: key order, and ints written as floats.
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"managedFields": []any{
			map[string]any{"manager": "a", "operation": "Apply", "fieldsV1": map[string]any{"f:ports": map[string]any{`k:{"containerPort":80,"protocol":"TCP"}`: map[string]any{".": map[string]any{}, "f:name": map[string]any{}}}}},
			map[string]any{"manager": "b", "operation": "Update", "apiVersion": "v1", "fieldsV1": map[string]any{"f:ports": map[string]any{`k:{"protocol":"TCP","containerPort":80.0}`: map[string]any{"f:name": map[string]any{}}}}},
			map[string]any{"manager": "c", "operation": "Update", "apiVersion": "v1", "fieldsV1": map[string]any{"f:ports": map[string]any{`k:{"protocol":"TCP","containerPort":80}`: map[string]any{".": map[string]any{"f:x": map[string]any{}}}}}},
		}},
		"ports": []any{map[string]any{"containerPort": int64(80), "protocol": "TCP", "name": "http"}},
	}}
	checkBuildMatches(t, u)
	own, err := Build(u)
	if err != nil {
		t.Fatal(err)
	}
	if n := own.Root().Child(fieldpath.PathElement{FieldName: ptr("ports")}); n == nil || len(n.Children) != 1 {
		t.Fatalf("three spellings of one port should be one node: %+v", n)
	}
}

func ptr[T any](v T) *T { return &v }

// testdataObjects lists the YAML objects in testdata.
func testdataObjects(t *testing.T) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(matches) == 0 {
		t.Fatalf("no testdata objects: %v", err)
	}
	var out []string
	for _, m := range matches {
		out = append(out, filepath.Base(m))
	}
	return out
}

func TestEachFieldMatchesFields(t *testing.T) {
	for _, name := range testdataObjects(t) {
		own, err := Build(loadTestdata(t, name))
		if err != nil {
			t.Fatal(err)
		}
		want := own.Fields()
		i := 0
		own.EachField(true, func(n *Node, path string, elems []string) {
			if i >= len(want) || n != want[i] {
				t.Fatalf("%s: field %d is not the one Fields returns", name, i)
			}
			if path != n.Path().String() || PathString(n.Path()) != path || !slices.Equal(elems, PathElements(n.Path())) {
				t.Fatalf("%s: %s: EachField wrote %q %q, want %q %q", name, n.Path(), path, elems, n.Path().String(), PathElements(n.Path()))
			}
			i++
		})
		if i != len(want) {
			t.Fatalf("%s: EachField visited %d fields, Fields returns %d", name, i, len(want))
		}
	}
}
