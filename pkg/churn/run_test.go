package churn

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Run lists and watches through the metadata client, delivers live
// reports while it runs, and returns the report when ctx is done.
func TestRunLiveAndFinalReport(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	p := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "u1", ResourceVersion: "7"},
	}
	client := metadatafake.NewSimpleMetadataClient(scheme, p)
	cfg := NewConfig()
	cfg.Namespace = "ns"
	cfg.LiveEvery = 20 * time.Millisecond
	var (
		mu    sync.Mutex
		lives int
	)
	cfg.Live = func(r *Report) {
		mu.Lock()
		defer mu.Unlock()
		lives++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, Clients{Metadata: client}, []apitypes.Type{cmType}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ObjectsWatched != 1 || rep.TypesWatched != 1 {
		t.Errorf("report: %d objects of %d types, want 1 of 1", rep.ObjectsWatched, rep.TypesWatched)
	}
	mu.Lock()
	defer mu.Unlock()
	if lives == 0 {
		t.Error("no live report while running")
	}
}

// TestConsumeTakesWhatTheStreamsQueued: the writes queued when the
// streams return (the end of --for) were seen in time and are counted;
// before the fix, consume returned on done and dropped them at random.
func TestConsumeTakesWhatTheStreamsQueued(t *testing.T) {
	tr := NewTracker(NewConfig(), []apitypes.Type{cmType}, t0)
	listed(tr, cmType, meta(cmType, "hot", 200, 0, mf{"kubectl-create", "", 0, createFields}))
	events := make(chan follow.Event, 64)
	for i := range 40 {
		at := time.Duration(i) * 100 * time.Millisecond
		events <- follow.Event{Type: follow.Modified, Time: t0.Add(at), Resource: follow.ResourceKey(cmType.Resource),
			Object: meta(cmType, "hot", 201+i, 0, mf{"kubectl-create", "", 0, createFields}, mf{"looper", "", int(at / time.Second), stampFields})}
	}
	done := make(chan error, 1)
	done <- nil
	if err := tr.consume(context.Background(), nil, events, done, follow.NewListMemory(0)); err != nil {
		t.Fatal(err)
	}
	if r := tr.Report(t0.Add(10 * time.Second)); r.Writes != 40 {
		t.Errorf("%d writes counted, the streams queued 40", r.Writes)
	}
}
