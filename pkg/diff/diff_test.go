package diff

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := utiljson.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad test object %s: %v", s, err)
	}
	return m
}

func strs(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

func TestObjects(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		opts     Options
		want     []string
	}{
		{name: "no change", old: `{"spec":{"replicas":3}}`, new: `{"spec":{"replicas":3}}`, want: []string{}},
		{name: "scalar change", old: `{"spec":{"replicas":3}}`, new: `{"spec":{"replicas":5}}`, want: []string{".spec.replicas 3->5"}},
		{name: "int and float equal", old: `{"spec":{"x":1}}`, new: `{"spec":{"x":1.0}}`, want: []string{}},
		{name: "added and removed labels", old: `{"metadata":{"labels":{"a":"1"}}}`, new: `{"metadata":{"labels":{"b":"two words"}}}`,
			want: []string{`.metadata.labels.a -1`, `.metadata.labels.b +"two words"`}},
		{name: "small added map expanded", old: `{"metadata":{}}`, new: `{"metadata":{"labels":{"tier":"web"}}}`, want: []string{".metadata.labels.tier +web"}},
		{name: "small removed map expanded", old: `{"metadata":{"labels":{"tier":"web"}}}`, new: `{"metadata":{}}`, want: []string{".metadata.labels.tier -web"}},
		{name: "nested small added map expanded", old: `{"spec":{}}`, new: `{"spec":{"strategy":{"type":"Recreate","x":{"a":1}}}}`, want: []string{".spec.strategy.type +Recreate", ".spec.strategy.x.a +1"}},
		{name: "added map with a list summarized", old: `{"spec":{}}`, new: `{"spec":{"strategy":{"type":"Recreate","x":[1]}}}`, want: []string{".spec.strategy +{2 fields}"}},
		{name: "big added map summarized", old: `{"spec":{}}`, new: `{"spec":{"m":{"a":1,"b":2,"c":3,"d":4,"e":5}}}`, want: []string{".spec.m +{5 fields}"}},
		{name: "containers keyed by name", old: `{"spec":{"containers":[{"name":"a","image":"nginx:1.25"},{"name":"b","image":"busybox"}]}}`,
			new:  `{"spec":{"containers":[{"name":"b","image":"busybox"},{"name":"a","image":"nginx:1.26"},{"name":"c","image":"x"}]}}`,
			want: []string{`.spec.containers[name="a"].image nginx:1.25->nginx:1.26`, `.spec.containers[name="c"] +{2 fields}`}},
		{name: "conditions keyed by type", old: `{"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Available","status":"True"}]}}`,
			new:  `{"status":{"conditions":[{"type":"Available","status":"True"},{"type":"Ready","status":"True"}]}}`,
			want: []string{`.status.conditions[type="Ready"].status False->True`}},
		{name: "duplicate names fall back to index", old: `{"l":[{"name":"a","v":1},{"name":"a","v":2}]}`, new: `{"l":[{"name":"a","v":1},{"name":"a","v":3}]}`,
			want: []string{".l[1].v 2->3"}},
		{name: "scalar list by index", old: `{"args":["a","b"]}`, new: `{"args":["a","c","d"]}`, want: []string{".args[1] b->c", ".args[2] +d"}},
		{name: "type change", old: `{"x":"1"}`, new: `{"x":{"a":1}}`, want: []string{`.x 1->{1 field}`}},
		{name: "null and bool", old: `{"x":null,"y":true}`, new: `{"x":"v","y":false}`, want: []string{".x null->v", ".y true->false"}},
		{name: "ignored fields", old: `{"metadata":{"resourceVersion":"1","managedFields":[1],"name":"a"}}`, new: `{"metadata":{"resourceVersion":"2","managedFields":[2],"name":"b"}}`,
			opts: Options{Ignore: [][]string{{"metadata", "resourceVersion"}, {"metadata", "managedFields"}}}, want: []string{".metadata.name a->b"}},
		{name: "long strings cut", old: `{"data":{"k":"short"}}`, new: `{"data":{"k":"0123456789012345678901234567890123456789012345"}}`,
			want: []string{".data.k short->0123456789012345678901234567890123456789...(46B)"}},
		{name: "arrow in value is quoted", old: `{"a":"x"}`, new: `{"a":"1->2"}`, want: []string{`.a x->"1->2"`}},
		{name: "from nothing", old: ``, new: `{"a":1}`, want: []string{".a +1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old map[string]any
			if tt.old != "" {
				old = obj(t, tt.old)
			}
			got := strs(New(tt.opts).Objects(old, obj(t, tt.new)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestChangeJSON(t *testing.T) {
	cs := Objects(obj(t, `{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"n","image":"a"}]}}}}`),
		obj(t, `{"spec":{"replicas":5,"paused":true,"template":{"spec":{"containers":[{"name":"n","image":"b"}]}}}}`))
	b, err := json.Marshal(cs)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"path":".spec.paused","op":"add","new":true},{"path":".spec.replicas","op":"change","old":3,"new":5},{"path":".spec.template.spec.containers[name=\"n\"].image","op":"change","old":"a","new":"b"}]`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHasPrefix(t *testing.T) {
	cs := Objects(obj(t, `{"status":{"conditions":[{"type":"Ready","status":"False"}]}}`), obj(t, `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`))
	if len(cs) != 1 || !HasPrefix(cs[0].Path, "status") || HasPrefix(cs[0].Path, "spec") || HasPrefix(cs[0].Path, "status", "conditions", "x", "y", "z") {
		t.Errorf("HasPrefix is wrong for %v", strs(cs))
	}
}

func FuzzObjects(f *testing.F) {
	f.Add(`{"spec":{"replicas":3}}`, `{"spec":{"replicas":5}}`)
	f.Add(`{"l":[{"name":"a"},{"name":"b"}]}`, `{"l":[{"name":"b"},{"type":"x"}]}`)
	f.Add(`{"a":[1,2,3]}`, `{"a":{"b":null}}`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var old, new map[string]any
		if utiljson.Unmarshal([]byte(a), &old) != nil || utiljson.Unmarshal([]byte(b), &new) != nil {
			return
		}
		if cs := Objects(old, old); len(cs) != 0 {
			t.Fatalf("an object differs from itself: %v", strs(cs))
		}
		forward, backward := Objects(old, new), Objects(new, old)
		if len(forward) != len(backward) {
			t.Fatalf("forward %v and backward %v differ in length", strs(forward), strs(backward))
		}
		for _, c := range forward {
			_ = c.String()
			if _, err := json.Marshal(c); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func ExampleObjects() {
	old := map[string]any{"spec": map[string]any{"replicas": int64(3), "containers": []any{
		map[string]any{"name": "nginx", "image": "nginx:1.25"},
	}}}
	cur := map[string]any{"metadata": map[string]any{"labels": map[string]any{"tier": "web"}}, "spec": map[string]any{"replicas": int64(5), "containers": []any{
		map[string]any{"name": "nginx", "image": "nginx:1.26"},
	}}}
	for _, c := range Objects(old, cur) {
		fmt.Println(c)
	}
	// Output:
	// .metadata.labels.tier +web
	// .spec.containers[name="nginx"].image nginx:1.25->nginx:1.26
	// .spec.replicas 3->5
}
