package lag

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func i64(n int64) *int64 { return &n }

func TestDecodeObjectKeepsFoundFlags(t *testing.T) {
	tests := []struct {
		name string
		json string
		want Object
	}{
		{
			name: "generation and observedGeneration",
			json: `{"metadata":{"name":"web","namespace":"ns","uid":"u1","generation":7,"creationTimestamp":"2026-01-02T03:04:05Z"},"status":{"observedGeneration":6}}`,
			want: Object{Name: "web", Namespace: "ns", UID: "u1", Generation: i64(7), ObservedGeneration: i64(6), Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		},
		{
			name: "observedGeneration 0 is an observation",
			json: `{"metadata":{"name":"a","generation":1},"status":{"observedGeneration":0}}`,
			want: Object{Name: "a", Generation: i64(1), ObservedGeneration: i64(0)},
		},
		{
			name: "absent observedGeneration",
			json: `{"metadata":{"name":"a","generation":1},"status":{"phase":"Pending"}}`,
			want: Object{Name: "a", Generation: i64(1)},
		},
		{
			name: "no generation",
			json: `{"metadata":{"name":"a"}}`,
			want: Object{Name: "a"},
		},
		{
			name: "observedGeneration of the wrong type reads as absent",
			json: `{"metadata":{"name":"a","generation":2},"status":{"observedGeneration":"2"}}`,
			want: Object{Name: "a", Generation: i64(2)},
		},
		{
			name: "a fraction reads as absent",
			json: `{"metadata":{"name":"a","generation":2},"status":{"observedGeneration":1.5}}`,
			want: Object{Name: "a", Generation: i64(2)},
		},
		{
			name: "status that is not an object",
			json: `{"metadata":{"name":"a","generation":2},"status":"ok"}`,
			want: Object{Name: "a", Generation: i64(2)},
		},
		{
			name: "conditions with and without observedGeneration",
			json: `{"metadata":{"name":"a","generation":3},"status":{"conditions":[{"type":"Ready","status":"True","observedGeneration":2},{"type":"Synced","status":"False"},"junk",{"type":5,"observedGeneration":3}]}}`,
			want: Object{Name: "a", Generation: i64(3), Conditions: []Condition{{Type: "Ready", Status: "True", ObservedGeneration: 2}, {Type: "", ObservedGeneration: 3}}},
		},
		{
			name: "conditions that are not a list",
			json: `{"metadata":{"name":"a","generation":3},"status":{"observedGeneration":3,"conditions":{"Ready":true}}}`,
			want: Object{Name: "a", Generation: i64(3), ObservedGeneration: i64(3)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeObject([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(Object{})); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeObjectRejectsBrokenMetadata(t *testing.T) {
	if _, err := DecodeObject([]byte(`{"metadata":{"name":5}}`)); err == nil {
		t.Fatal("want an error for a non-string name")
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		obj  Object
		want Classification
	}{
		{"no generation", Object{}, Classification{State: NoGeneration}},
		{"never observed", Object{Generation: i64(1)}, Classification{State: NeverObserved}},
		{"current", Object{Generation: i64(4), ObservedGeneration: i64(4)}, Classification{State: Current}},
		{"status behind", Object{Generation: i64(7), ObservedGeneration: i64(5)}, Classification{State: Lagging, Lag: 2}},
		{"observed ahead is not lag", Object{Generation: i64(3), ObservedGeneration: i64(9)}, Classification{State: Current}},
		{
			"condition behind while status is current",
			Object{Generation: i64(7), ObservedGeneration: i64(7), Conditions: []Condition{{Type: "Available", ObservedGeneration: 5}, {Type: "Progressing", ObservedGeneration: 7}}},
			Classification{State: Lagging, Lag: 2, LaggingConditions: []Condition{{Type: "Available", ObservedGeneration: 5}}},
		},
		{
			"only conditions report",
			Object{Generation: i64(2), Conditions: []Condition{{Type: "Ready", ObservedGeneration: 2}}},
			Classification{State: Current},
		},
		{
			"the largest gap wins",
			Object{Generation: i64(10), ObservedGeneration: i64(9), Conditions: []Condition{{Type: "Ready", ObservedGeneration: 4}}},
			Classification{State: Lagging, Lag: 6, LaggingConditions: []Condition{{Type: "Ready", ObservedGeneration: 4}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Classify(tt.obj)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestWriters(t *testing.T) {
	tests := []struct {
		name string
		mf   string
		want Writers
	}{
		{
			name: "newest spec write and the status subresource's manager",
			mf: `[
			 {"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}},"f:spec":{"f:replicas":{}}}},
			 {"manager":"kubectl","operation":"Apply","time":"2026-01-01T00:05:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}}}},
			 {"manager":"labeler","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T00:09:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:x":{}}}}},
			 {"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","subresource":"status","time":"2026-01-01T00:06:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:observedGeneration":{},"f:replicas":{}}}}
			]`,
			want: Writers{SpecTime: time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC), SpecManager: "kubectl", Observer: "kube-controller-manager", StatusTime: time.Date(2026, 1, 1, 0, 6, 0, 0, time.UTC)},
		},
		{
			name: "the owner of observedGeneration is preferred",
			mf: `[
			 {"manager":"status-helper","operation":"Update","apiVersion":"v1","subresource":"status","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}}},
			 {"manager":"my-operator","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:observedGeneration":{}}}}
			]`,
			want: Writers{Observer: "my-operator", StatusTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		},
		{
			name: "a scale write has no time",
			mf: `[
			 {"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","subresource":"scale","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}},
			 {"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:selector":{}}}}
			]`,
			want: Writers{SpecTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), SpecManager: "kubectl-create", SpecUntimed: true, UntimedManager: "kubectl"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := DecodeObject([]byte(`{"metadata":{"name":"a","managedFields":` + tt.mf + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			got, err := o.Writers()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	if _, err := (Object{}).Writers(); err == nil {
		t.Error("an object without managedFields should say so")
	}
}

// unstructuredView reads the same fields through unstructured.Nested*, the
// reference the stream decoder must agree with.
func unstructuredView(u *unstructured.Unstructured) (gen, observed *int64) {
	if g, found, err := unstructured.NestedInt64(u.Object, "metadata", "generation"); found && err == nil {
		gen = &g
	}
	if o, found, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); found && err == nil {
		observed = &o
	}
	return gen, observed
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"name":"web","generation":7},"status":{"observedGeneration":6,"conditions":[{"type":"Ready","observedGeneration":5}]}}`,
		`{"metadata":{"name":"a","generation":1},"status":{"observedGeneration":"1"}}`,
		`{"metadata":{"name":"a","generation":1e3},"status":{"observedGeneration":-1}}`,
		`{"metadata":{"name":"a","generation":9223372036854775808},"status":null}`,
		`{"metadata":{"name":"a","managedFields":[{"manager":"m","operation":"Update","fieldsV1":{"f:spec":{}}}]}}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := DecodeObject(data)
		if err != nil {
			return
		}
		_ = Classify(o)
		_, _ = o.Writers()
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return
		}
		var st any
		_ = json.Unmarshal(data, &st)
		gen, observed := unstructuredView(u)
		if !sameInt(gen, o.Generation) || !sameInt(observed, o.ObservedGeneration) {
			// The unstructured decoder reads 1.0 as a float and big
			// numbers differently; only plain integers must agree.
			if strings.ContainsAny(string(data), ".eE") {
				return
			}
			t.Errorf("generation %v/%v observedGeneration %v/%v (unstructured/stream) for %s", ptrStr(gen), ptrStr(o.Generation), ptrStr(observed), ptrStr(o.ObservedGeneration), data)
		}
	})
}

func sameInt(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func ptrStr(p *int64) string {
	if p == nil {
		return "absent"
	}
	b, _ := json.Marshal(*p)
	return string(b)
}
