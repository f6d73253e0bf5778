package predict

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func TestPatchSeesManagedFields(t *testing.T) {
	tests := []struct {
		name  string
		pt    types.PatchType
		patch string
		want  bool
	}{
		{"json: spec only", types.JSONPatchType, `[{"op":"replace","path":"/spec/replicas","value":3}]`, false},
		{"json: labels and a resourceVersion test", types.JSONPatchType, `[{"op":"test","path":"/metadata/resourceVersion","value":"1"},{"op":"add","path":"/metadata/labels/x","value":"y"}]`, false},
		{"json: a field named like managedFields elsewhere", types.JSONPatchType, `[{"op":"add","path":"/spec/managedFields","value":1}]`, false},
		{"json: managedFields", types.JSONPatchType, `[{"op":"remove","path":"/metadata/managedFields"}]`, true},
		{"json: an entry of managedFields", types.JSONPatchType, `[{"op":"test","path":"/metadata/managedFields/0/manager","value":"a"}]`, true},
		{"json: all of metadata", types.JSONPatchType, `[{"op":"replace","path":"/metadata","value":{}}]`, true},
		{"json: the whole document", types.JSONPatchType, `[{"op":"test","path":"","value":{}}]`, true},
		{"json: copy from metadata", types.JSONPatchType, `[{"op":"copy","from":"/metadata","path":"/spec/x"}]`, true},
		{"json: the library ignores what precedes the first slash", types.JSONPatchType, `[{"op":"remove","path":"x/metadata/managedFields"}]`, true},
		{"json: path not a string", types.JSONPatchType, `[{"op":"remove","path":1}]`, true},
		{"json: an escaped path", types.JSONPatchType, `[{"op":"remove","path":"/metadata/managed\u0046ields"}]`, true},
		{"json: an escaped key elsewhere", types.JSONPatchType, `[{"op":"remove","path":"/metadata/labels/a~1b"}]`, false},
		{"json: without a path", types.JSONPatchType, `[{"op":"remove"}]`, false},
		{"strategic: containers", types.StrategicMergePatchType, `{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"delete"}]}}}}`, false},
		{"strategic: labels", types.StrategicMergePatchType, `{"metadata":{"labels":{"x":"y"}}}`, false},
		{"strategic: retainKeys in metadata", types.StrategicMergePatchType, `{"metadata":{"$retainKeys":["name"]}}`, true},
		{"strategic: replace at the top", types.StrategicMergePatchType, `{"$patch":"replace","metadata":{"name":"x"}}`, true},
		{"strategic: managedFields", types.StrategicMergePatchType, `{"metadata":{"managedFields":[]}}`, true},
		{"strategic: the last of duplicate keys counts", types.StrategicMergePatchType, `{"metadata":{},"metadata":null}`, true},
		{"merge patches are checked elsewhere", types.MergePatchType, `{}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ops jsonpatch.Patch
			if tt.pt == types.JSONPatchType {
				var err error
				if ops, err = jsonpatch.DecodePatch([]byte(tt.patch)); err != nil {
					t.Fatal(err)
				}
			}
			if got := patchSeesManagedFields(tt.pt, []byte(tt.patch), ops); got != tt.want {
				t.Errorf("patchSeesManagedFields(%s, %s) = %v, want %v", tt.pt, tt.patch, got, tt.want)
			}
		})
	}
}

func TestMergeBareDeclines(t *testing.T) {
	tests := []struct {
		name    string
		patch   string
		decline bool
	}{
		{"spec only", `{"spec":{"replicas":3}}`, false},
		{"resourceVersion lock", `{"metadata":{"resourceVersion":"7"}}`, false},
		{"a directive is only data", `{"metadata":{"$patch":"replace"}}`, false},
		{"managedFields", `{"metadata":{"managedFields":null}}`, true},
		{"metadata removed", `{"metadata":null}`, true},
		{"metadata replaced", `{"metadata":"x"}`, true},
		{"the last of duplicate keys counts", `{"metadata":{},"metadata":null}`, true},
		{"not an object", `[]`, true},
		{"null", `null`, true},
		{"kind removed", `{"kind":null}`, true},
	}
	ex, err := NewOffline(nil).Executor(deployGVK, "web", liveWeb(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ex.(*offlineExecutor).mergeBare([]byte(tt.patch)) == nil; got != tt.decline {
				t.Errorf("mergeBare(%s) declines: %v, want %v", tt.patch, got, tt.decline)
			}
		})
	}
}

// TestOfflinePatchWithoutManagedFields checks that patches predict the same
// whether they run on live without its managedFields or on all of it.
func TestOfflinePatchWithoutManagedFields(t *testing.T) {
	patches := []struct {
		pt    PatchType
		patch string
	}{
		{PatchJSON, `[{"op":"replace","path":"/spec/replicas","value":3}]`},
		{PatchJSON, `[{"op":"test","path":"/spec/replicas","value":2}]`},
		{PatchJSON, `[{"op":"remove","path":"/kind"}]`},
		{PatchJSON, `[{"op":"remove","path":"/metadata/managedFields"}]`},
		{PatchMerge, `{"spec":{"replicas":4}}`},
		{PatchMerge, `{"metadata":{"labels":{"x":"y"}},"spec":{"template":{"spec":{"containers":null}}}}`},
		{PatchMerge, `{"kind":null}`},
		{PatchMerge, `{"metadata":{"managedFields":[]}}`},
		{PatchStrategic, `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:9"}]}}}}`},
		{PatchStrategic, `{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}`},
		{PatchStrategic, `{"metadata":{"$retainKeys":["name"]}}`},
	}
	live := liveWeb(t)
	for _, p := range patches {
		t.Run(string(p.pt)+" "+p.patch, func(t *testing.T) {
			in := Input{Patch: []byte(p.patch), PatchType: p.pt}
			cfg := Config{FieldManager: "ci"}
			predictWith := func(bare bool) Result {
				ex, err := NewOffline(nil).Executor(deployGVK, "web", live)
				if err != nil {
					t.Fatal(err)
				}
				oe := ex.(*offlineExecutor)
				if oe.bareJS == nil {
					t.Fatal("live's managedFields do not ride along")
				}
				if !bare {
					oe.bareJS = nil
				}
				res, err := Predict(context.Background(), cfg, in, ex)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if diff := cmp.Diff(predictWith(false), predictWith(true)); diff != "" {
				t.Errorf("on all of live (-) and without managedFields (+):\n%s", diff)
			}
		})
	}
}

// TestMergeIntoMatchesLibrary checks the in-memory merge patch against the
// library the API server uses, quirks included.
func TestMergeIntoMatchesLibrary(t *testing.T) {
	docs := []string{
		`{"kind":"K","a":{"b":1,"c":[1,{"d":null}],"n":null},"l":[1,2],"s":"x","o":{}}`,
		`{"kind":"K","metadata":{"name":"x","labels":{"a":"b"},"creationTimestamp":null}}`,
	}
	patches := []string{
		`{}`,
		`{"a":null,"zz":null}`,
		`{"a":{"b":null,"e":{"f":null,"g":1}}}`,
		`{"a":{"c":{"x":null,"y":2}}}`,
		`{"a":[{"x":null},null,{"y":{"z":null}}]}`,
		`{"l":{"x":null,"y":1}}`,
		`{"s":{"x":null,"y":[{"z":null}]}}`,
		`{"n":{"x":null}}`,
		`{"a":{"n":{"x":null,"y":1}}}`,
		`{"o":"replaced","new":[null,{"k":null}]}`,
		`{"a":{"b":2.0,"big":12345678901234567890,"f":1.5,"e":1e3}}`,
		`{"a":{"b":1},"a":{"c":2}}`,
		`{"s":"\u00e9\ud83d\ude00<&>","u":"\u0000"}`,
		`{"metadata":{"labels":{"a":null,"c":"d"},"resourceVersion":"7"}}`,
		`{"kind":"Other"}`,
		`{"o":{"$patch":"replace"}}`,
	}
	for _, d := range docs {
		for _, p := range patches {
			lib, err := jsonpatch.MergePatch([]byte(d), []byte(p))
			if err != nil {
				t.Fatalf("library: %v", err)
			}
			var want, doc, patch map[string]any
			for _, x := range []struct {
				b []byte
				v *map[string]any
			}{{lib, &want}, {[]byte(d), &doc}, {[]byte(p), &patch}} {
				if err := utiljson.Unmarshal(x.b, x.v); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want, mergeInto(doc, patch)); diff != "" {
				t.Errorf("merge %s into %s (-library +mergeInto):\n%s", p, d, diff)
			}
		}
	}
}

// TestOfflineExecutorUnencodableLive checks that a live object JSON cannot
// encode fails as it always did, wherever the bad value is.
func TestOfflineExecutorUnencodableLive(t *testing.T) {
	for _, where := range [][]string{{"spec", "x"}, {"metadata", "managedFields"}} {
		t.Run(strings.Join(where, "."), func(t *testing.T) {
			live := liveWeb(t)
			if where[1] == "managedFields" {
				mf := live.Object["metadata"].(map[string]any)["managedFields"].([]any)
				mf[0].(map[string]any)["x"] = math.NaN()
			} else {
				live.Object["spec"].(map[string]any)["x"] = math.Inf(1)
			}
			_, want := live.MarshalJSON()
			_, err := NewOffline(nil).Executor(deployGVK, "web", live)
			if want == nil || err == nil || err.Error() != want.Error() {
				t.Errorf("Executor: %v, want %v", err, want)
			}
		})
	}
}

// TestPredictLeavesLiveAlone checks that a prediction does not change the
// live object, which the offline executor shares with Predict, nor the
// desired one, which requests share parts of.
func TestPredictLeavesLiveAlone(t *testing.T) {
	live := liveWeb(t)
	liveBefore := live.DeepCopy()
	desired := desiredWeb(t, "11", "nginx:2")
	unstructured.RemoveNestedField(desired.Object, "spec", "replicas")
	desiredBefore := desired.DeepCopy()
	ex, err := NewOffline(nil).Executor(deployGVK, "web", live)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Predict(context.Background(), Config{FieldManager: "ci"}, Input{Desired: desired}, ex); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(liveBefore, live); diff != "" {
		t.Errorf("live changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(desiredBefore, desired); diff != "" {
		t.Errorf("desired changed (-before +after):\n%s", diff)
	}
}
