package churn

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

// TestRunHoldsLittleOfTheFirstList holds what a run keeps alive while it
// takes in a type's first list: the tracked state and a bounded queue of
// decoded objects (follow.QueueLen), not the list. At each page request,
// the live heap above the one before the run is at most maxPerObject per
// object listed; a queue of thousands of objects, or a list held whole,
// is more.
func TestRunHoldsLittleOfTheFirstList(t *testing.T) {
	const n, page, maxPerObject = 6000, 500, 400
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	// The API server's objects, made before the heap is measured.
	items := make([]metav1.PartialObjectMetadata, n)
	for i := range items {
		items[i] = metav1.PartialObjectMetadata{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%06d", i)),
				ResourceVersion: strconv.Itoa(10 + i), ManagedFields: []metav1.ManagedFieldsEntry{{
					Manager: "bench", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Time: &metav1.Time{Time: t0},
					FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}}`)}}}},
		}
	}
	client := metadatafake.NewSimpleMetadataClient(scheme)
	var (
		// mu guards peak and pages.
		mu          sync.Mutex
		peak, pages int
	)
	base := int(heap())
	// The fake drops the continue token: the pages are served in order.
	client.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		live := int(heap()) - base
		mu.Lock()
		from := pages * page
		peak, pages = max(peak, live), pages+1
		mu.Unlock()
		if from >= n {
			return true, nil, fmt.Errorf("page %d requested after the last", pages)
		}
		l := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: "99999"}}
		for i := from; i < min(from+page, n); i++ {
			l.Items = append(l.Items, runtime.RawExtension{Object: items[i].DeepCopy()})
		}
		if from+page < n {
			l.Continue = strconv.Itoa(from + page)
		}
		return true, l, nil
	})
	cfg := NewConfig()
	cfg.Namespace = "ns"
	cfg.Stream.ChunkSize = page
	// The run ends once the list is taken in, or after 30 seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg.LiveEvery = 10 * time.Millisecond
	cfg.Live = func(r *Report) {
		if r.ObjectsWatched >= n {
			cancel()
		}
	}
	rep, err := Run(ctx, Clients{Metadata: client}, []apitypes.Type{cmType}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if rep.ObjectsWatched != n || pages != n/page {
		t.Fatalf("the run took in %d objects in %d pages, want %d in %d", rep.ObjectsWatched, pages, n, n/page)
	}
	if perObject := peak / n; perObject > maxPerObject {
		t.Errorf("while the first list was taken in, the run held %d bytes more than before it (%d per object listed), want at most %d per object", peak, perObject, maxPerObject)
	}
	t.Logf("at most %d bytes alive above the heap before the run (%d per object listed)", peak, peak/n)
}
