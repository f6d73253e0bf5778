package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// testTimeline records one ConfigMap through a list, two writes and its
// deletion, and one cluster-scoped Namespace, then relists c unchanged.
func testTimeline(t *testing.T) *Timeline {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewRecordingWriter(&buf, NewRecordingHeader(time.Unix(0, 0), []string{"v1/configmaps"}, true))
	if err != nil {
		t.Fatal(err)
	}
	cm := func(rv string, v any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": v}}}
		u.SetName("c")
		u.SetNamespace("ns")
		u.SetResourceVersion(rv)
		return u
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop", "resourceVersion": "15"}}}
	for _, ev := range []follow.Event{
		{Type: follow.List, Resource: "v1/configmaps", Reason: follow.SyncInitial, Object: cm("10", "a")},
		{Type: follow.Modified, Resource: "v1/configmaps", Object: cm("12", "b")},
		{Type: follow.Added, Resource: "v1/namespaces", Object: ns},
		{Type: follow.Modified, Resource: "v1/configmaps", Object: cm("20", "c")},
		{Type: follow.List, Resource: "v1/configmaps", Reason: follow.SyncRelist, Object: cm("20", "c")},
		{Type: follow.Deleted, Resource: "v1/configmaps", Object: cm("25", "c")},
	} {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := ReadRecording(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return NewTimeline(rec)
}

func TestTimelineList(t *testing.T) {
	want := HistoryList{Objects: []HistorySummary{
		{Ref: "configmaps/ns/c", ResourceVersions: []string{"10", "12", "20", "25"}, Deleted: true},
		{Ref: "namespaces/shop", ResourceVersions: []string{"15"}},
	}}
	if d := cmp.Diff(want, testTimeline(t).List()); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
	empty := NewTimeline(&Recording{})
	if b, _ := json.Marshal(empty.List()); string(b) != `{"objects":[]}` {
		t.Errorf("an empty list marshals as %s", b)
	}
}

func TestHistoryAtAndDiff(t *testing.T) {
	tl := testTimeline(t)
	h, err := tl.Find("configmap/c", "ns")
	if err != nil {
		t.Fatal(err)
	}
	at := func(rv string) string {
		v, err := h.At(rv)
		switch {
		case errors.Is(err, ErrNoSuchVersion):
			return "none"
		case err != nil:
			return "error"
		case v.Type == follow.Deleted:
			return "deleted"
		}
		return v.Object.Object["data"].(map[string]any)["k"].(string)
	}
	got := []string{at("9"), at("10"), at("11"), at("12"), at("19"), at("24"), at("25"), at(""), at("x")}
	if d := cmp.Diff([]string{"none", "a", "a", "b", "b", "c", "deleted", "deleted", "error"}, got); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
	d, err := h.Diff("10", "20")
	if err != nil || d.Ref != "configmaps/ns/c" || d.From != "10" || d.To != "20" || len(d.Changes) != 1 || d.Changes[0].String() != ".data.k a->c" {
		t.Errorf("diff 10..20: %+v %v", d, err)
	}
	if d, err := h.Diff("12", "12"); err != nil || d.Changes == nil || len(d.Changes) != 0 {
		t.Errorf("diff 12..12 must be an empty, non-nil list: %#v %v", d.Changes, err)
	}
}

func TestTimelineFind(t *testing.T) {
	tl := testTimeline(t)
	tests := []struct {
		ref, ns, want string
	}{
		{"configmaps/ns/c", "", "configmaps/ns/c"},
		{"configmap/c", "ns", "configmaps/ns/c"},
		{"ConfigMaps/c", "", "configmaps/ns/c"},
		{"configmaps.v1/c", "ns", "configmaps/ns/c"},
		{"namespace/shop", "", "namespaces/shop"},
		// Short names and kinds, as kubectl reads them.
		{"cm/c", "ns", "configmaps/ns/c"},
		{"ConfigMap/ns/c", "", "configmaps/ns/c"},
		{"ns/shop", "", "namespaces/shop"},
		{"configmaps.apps/c", "ns", "error"},
		{"configmaps/other/c", "", "error"},
		{"secrets/ns/c", "", "error"},
		{"c", "", "error"},
	}
	for _, tt := range tests {
		got := "error"
		if h, err := tl.Find(tt.ref, tt.ns); err == nil {
			got = h.Ref
		}
		if got != tt.want {
			t.Errorf("Find(%q, %q) = %s, want %s", tt.ref, tt.ns, got, tt.want)
		}
	}
}
