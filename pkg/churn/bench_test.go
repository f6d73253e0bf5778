package churn

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// smallCM is a ConfigMap as kubectl create and a later kubectl apply leave
// it: two managedFields entries.
func smallCM(i, rv int) *unstructured.Unstructured {
	return meta(cmType, fmt.Sprintf("cm-%06d", i), rv, 0,
		mf{"kubectl-create", "", 0, `{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`},
		mf{"kubectl-client-side-apply", "", 5, `{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}}}}`})
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTrackerRetained reports the bytes the tracker retains per
// watched object (bytes/object), the figure docs/bench/churn.md quotes.
func BenchmarkTrackerRetained(b *testing.B) {
	const n = 50000
	for range b.N {
		before := heap()
		objs := make([]*unstructured.Unstructured, n)
		for i := range objs {
			objs[i] = smallCM(i, 10+i)
		}
		tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
		listed(tr, cmType, objs...)
		objs = nil
		after := heap()
		b.ReportMetric(float64(after-before)/n, "bytes/object")
		runtime.KeepAlive(tr)
	}
}

// BenchmarkTrackerWrite measures one MODIFIED event through the tracker
// (attribution, classification, counting); the decoding of the watch
// stream is not included.
func BenchmarkTrackerWrite(b *testing.B) {
	tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
	const n = 1000
	var objs []*unstructured.Unstructured
	for i := range n {
		objs = append(objs, smallCM(i, 10+i))
	}
	listed(tr, cmType, objs...)
	evs := make([]*unstructured.Unstructured, b.N)
	for i := range evs {
		evs[i] = smallCM(i%n, 10000+i)
	}
	b.ResetTimer()
	for i := range b.N {
		modified(tr, cmType, time.Duration(i)*time.Millisecond, evs[i])
	}
}

// BenchmarkMetadataEvent measures one watch event from its JSON bytes to
// the tracker: decoding the PartialObjectMetadata (encoding/json, as a
// stand-in for client-go's decoder), the Source's conversion, and the
// tracker's write. It is the figure behind "metadata events a second on
// one core".
func BenchmarkMetadataEvent(b *testing.B) {
	tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
	const n = 1000
	var objs []*unstructured.Unstructured
	for i := range n {
		objs = append(objs, smallCM(i, 10+i))
	}
	listed(tr, cmType, objs...)
	raw := make([][]byte, n)
	for i := range raw {
		tm := metav1.NewTime(t0)
		p := metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Namespace: "ns", UID: types.UID("uid-" + fmt.Sprintf("cm-%06d", i)), ResourceVersion: "0",
				ManagedFields: []metav1.ManagedFieldsEntry{
					{Manager: "kubectl-create", Operation: "Update", APIVersion: "v1", Time: &tm, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)}},
					{Manager: "looper", Operation: "Update", APIVersion: "v1", Time: &tm, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(stampFields)}},
				}},
		}
		var err error
		if raw[i], err = json.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		var p metav1.PartialObjectMetadata
		if err := json.Unmarshal(raw[i%n], &p); err != nil {
			b.Fatal(err)
		}
		p.ResourceVersion = strconv.Itoa(10000 + i)
		modified(tr, cmType, time.Duration(i)*time.Millisecond, &unstructured.Unstructured{Object: follow.MetadataObject(&p)})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
