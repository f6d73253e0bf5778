package predict

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestGenerateJSONPatch(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		rv       string
		want     string
	}{
		{name: "no change", from: `{"a":1}`, to: `{"a":1}`, want: `[]`},
		{name: "replace with rv lock", from: `{"a":1}`, to: `{"a":2}`, rv: "7",
			want: `[{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"replace","path":"/a","value":2}]`},
		{name: "add and remove keys", from: `{"a":1,"b/c":2}`, to: `{"a":1,"d":3}`,
			want: `[{"op":"remove","path":"/b~1c"},{"op":"add","path":"/d","value":3}]`},
		{name: "edit a list item by index after testing its name",
			from: `{"c":[{"name":"x","image":"1"},{"name":"y","image":"1"}]}`,
			to:   `{"c":[{"name":"x","image":"1"},{"name":"y","image":"2"}]}`,
			want: `[{"op":"test","path":"/c/1/name","value":"y"},{"op":"replace","path":"/c/1/image","value":"2"}]`},
		{name: "remove list items from the end",
			from: `{"l":["a","b","c"]}`, to: `{"l":["a"]}`,
			want: `[{"op":"test","path":"/l/2","value":"c"},{"op":"remove","path":"/l/2"},{"op":"test","path":"/l/1","value":"b"},{"op":"remove","path":"/l/1"}]`},
		{name: "append", from: `{"l":[]}`, to: `{"l":[1,2]}`,
			want: `[{"op":"add","path":"/l/-","value":1},{"op":"add","path":"/l/-","value":2}]`},
		{name: "null value kept", from: `{"a":1}`, to: `{"a":null}`, want: `[{"op":"replace","path":"/a","value":null}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var from, to map[string]any
			if err := json.Unmarshal([]byte(tt.from), &from); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.to), &to); err != nil {
				t.Fatal(err)
			}
			got, err := GenerateJSONPatch(from, to, tt.rv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzGenerateJSONPatch checks that the generated patch, applied with the
// API server's JSON patch library to from, gives to.
func FuzzGenerateJSONPatch(f *testing.F) {
	f.Add(`{"a":1,"l":[{"name":"x"},{"name":"y","v":1}]}`, `{"a":2,"l":[{"name":"y","v":2}]}`)
	f.Add(`{"m":{"k":"v"}}`, `{"m":{"k~/":"w"},"n":[1,[2]]}`)
	f.Add(`{}`, `{"x":null}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var from, to map[string]any
		if json.Unmarshal([]byte(a), &from) != nil || json.Unmarshal([]byte(b), &to) != nil || from == nil || to == nil {
			return
		}
		p, err := GenerateJSONPatch(from, to, "")
		if err != nil {
			t.Fatal(err)
		}
		patch, err := jsonpatch.DecodePatch(p)
		if err != nil {
			t.Fatalf("generated patch does not decode: %v\n%s", err, p)
		}
		fromJS, _ := json.Marshal(from)
		out, err := patch.Apply(fromJS)
		if err != nil {
			t.Fatalf("generated patch does not apply: %v\n%s", err, p)
		}
		var got any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		var want any
		toJS, _ := json.Marshal(to)
		_ = json.Unmarshal(toJS, &want)
		if !equality.Semantic.DeepEqual(want, got) {
			t.Errorf("patch %s\nturns %s into %s, want %s", p, fromJS, out, toJS)
		}
	})
}

func TestParseMethods(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []Method
		wantErr string
	}{
		{name: "apply is the non-forced apply alone", in: []string{"apply"}, want: []Method{Apply}},
		{name: "apply-force alone", in: []string{"apply-force"}, want: []Method{ApplyForce}},
		{name: "update is the PUT with a resourceVersion alone", in: []string{"update"}, want: []Method{Update}},
		{name: "merge-patch alone", in: []string{"merge-patch"}, want: []Method{MergePatch}},
		{name: "all-apply family", in: []string{"all-apply"}, want: []Method{Apply, ApplyForce}},
		{name: "all-update family", in: []string{"all-update"}, want: []Method{Update, UpdateNoRV}},
		{name: "all-merge-patch family", in: []string{"all-merge-patch"}, want: []Method{MergePatch, MergePatchRV}},
		{name: "all", in: []string{"all"}, want: AllMethods},
		{name: "nothing means all", in: nil, want: AllMethods},
		{name: "comma separated and repeated, report order", in: []string{"apply,update-no-rv", "merge"}, want: []Method{UpdateNoRV, MergePatch, Apply}},
		{name: "type spellings", in: []string{"json,strategic"}, want: []Method{JSONPatch, StrategicMergePatch}},
		// The simulator's spelling names the same method; its methods
		// predict does not report are unknown here.
		{name: "simulator spelling", in: []string{"update-unconditional"}, want: []Method{UpdateNoRV}},
		{name: "unknown", in: []string{"put"}, wantErr: `unknown method "put": use all, all-update, all-merge-patch, all-apply, kubectl, update,`},
		{name: "kubectl's verbs", in: []string{"kubectl"}, want: KubectlVerbs},
		{name: "a verb and a method, report order", in: []string{"replace,apply,client-apply"}, want: []Method{Apply, ClientApply, Replace}},
		{name: "not a predict method", in: []string{"update-status"}, wantErr: `unknown method "update-status"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMethods(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseMethods(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseMethods(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzValidatePatch(f *testing.F) {
	for _, s := range []string{`[{"op":"add","path":"/a","value":1}]`, `{"a":null}`, "a: b\n", `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, pt := range []PatchType{PatchJSON, PatchMerge, PatchStrategic, PatchApply} {
			_ = ValidatePatch(pt, []byte(s))
		}
	})
}
