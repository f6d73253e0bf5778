package churn

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

func full(rv string, stamp string, data string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "hot", "namespace": "ns", "resourceVersion": rv, "annotations": map[string]any{"stamp": stamp}},
		"data":     map[string]any{"k": data},
	}}
}

// The busiest object is explained: the fields that change between fetched
// versions, and whether only timestamps change.
func TestTrackerExplain(t *testing.T) {
	cfg := NewConfig()
	cfg.Explain = 1
	tr := NewTracker(cfg, []apitypes.Type{cmType}, t0)
	listed(tr, cmType, meta(cmType, "hot", 2, 0), meta(cmType, "quiet", 3, 0))
	for i := range 3 {
		modified(tr, cmType, time.Duration(i)*time.Second, meta(cmType, "hot", 4+i, 0, mf{"looper", "", i, stampFields}))
	}
	tr.pickExplain()
	k := objKey{typ: 0, namespace: "ns", name: "hot"}
	if !tr.wantsFetch(k) || tr.wantsFetch(k) {
		t.Fatal("want one fetch in flight for the busiest object")
	}
	if tr.wantsFetch(objKey{typ: 0, namespace: "ns", name: "quiet"}) {
		t.Fatal("a quiet object is not explained")
	}
	stamps := []string{"2026-11-24T12:00:00Z", "2026-11-24T12:00:01Z", "2026-11-24T12:00:02Z"}
	for i, s := range stamps {
		if i > 0 {
			tr.wantsFetch(k)
		}
		tr.explained(k, full(string(rune('a'+i)), s, "same"))
	}
	want := &Explanation{Samples: 2, Fields: []ChangedField{{Path: ".metadata.annotations.stamp", Samples: 2}}, TimestampOnly: true}
	if d := cmp.Diff(want, tr.explanation(k)); d != "" {
		t.Errorf("explanation (-want +got):\n%s", d)
	}
	tr.wantsFetch(k)
	tr.explained(k, full("z", "2026-11-24T12:00:03Z", "changed"))
	if e := tr.explanation(k); e.TimestampOnly || len(e.Fields) != 2 {
		t.Errorf("explanation %+v: data changed too", e)
	}
}
