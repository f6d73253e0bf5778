package follow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

var deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func fakeDeploy(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": "shop", "resourceVersion": rv}}}
}

// script is what the fake API server answers to each watch, in order.
type script []func(w *watch.FakeWatcher) error

// TestStreamResumesAndRelists drives stream through a dropped watch (resume
// from the last RV seen), an ERROR 410 event (relist, SYNCED with the gap),
// a refused watch (retry) and a 410 answered to the watch request itself.
func TestStreamResumesAndRelists(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployGVR: "DeploymentList"})
	var (
		// mu guards lists and watches.
		mu      sync.Mutex
		lists   int
		watches []string
	)
	client.PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		lists++
		l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}
		l.SetResourceVersion(fmt.Sprint(lists * 100))
		l.Items = []unstructured.Unstructured{*fakeDeploy("web", fmt.Sprint(lists*100-1))}
		return true, l, nil
	})
	steps := script{
		func(w *watch.FakeWatcher) error { // rv 100: two events, then the connection drops
			w.Modify(fakeDeploy("web", "101"))
			w.Action(watch.Bookmark, fakeDeploy("", "105"))
			w.Stop()
			return nil
		},
		func(*watch.FakeWatcher) error { return fmt.Errorf("connection refused") }, // rv 105
		func(w *watch.FakeWatcher) error { // rv 105: history gone
			w.Error(&apierrors.NewResourceExpired("too old resource version: 105 (150)").ErrStatus)
			return nil
		},
		func(*watch.FakeWatcher) error {
			return apierrors.NewResourceExpired("too old resource version: 200 (250)")
		}, // rv 200 after the relist
		func(w *watch.FakeWatcher) error { // rv 300: one event, then stays open
			w.Modify(fakeDeploy("web", "301"))
			return nil
		},
	}
	client.PrependWatchReactor("deployments", func(a clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		n := len(watches)
		watches = append(watches, a.(clienttesting.WatchActionImpl).WatchRestrictions.ResourceVersion)
		mu.Unlock()
		w := watch.NewFakeWithChanSize(10, false)
		if n >= len(steps) {
			return true, w, nil
		}
		if err := steps[n](w); err != nil {
			return true, nil, err
		}
		return true, w, nil
	})

	cfg := NewConfig()
	cfg.Targets = []Target{{Resource: deployGVR, Namespace: "shop"}}
	cfg.MinBackoff, cfg.MaxBackoff = time.Millisecond, 2*time.Millisecond
	cfg.Now = func() time.Time { return t0 }
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Event, 100)
	done := make(chan error, 1)
	go func() { done <- Stream(ctx, NewDynamicSource(client), cfg, t.Logf, out) }()

	var got []string
	for len(got) < 9 {
		select {
		case ev := <-out:
			s := string(ev.Type)
			if ev.Object != nil {
				s += " " + ev.Object.GetResourceVersion()
			}
			if ev.Type == Synced || ev.Type == Bookmark {
				s += " rv=" + ev.ResourceVersion
			}
			if ev.Reason != "" {
				s += " " + string(ev.Reason)
			}
			if ev.GapFrom != "" {
				s += " gap-from=" + ev.GapFrom + " (" + ev.GapError + ")"
			}
			got = append(got, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("stuck after %v", got)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []string{
		"LIST 99 initial", "SYNCED rv=100 initial",
		"MODIFIED 101", "BOOKMARK rv=105",
		"LIST 199 relist", "SYNCED rv=200 relist gap-from=105 (too old resource version: 105 (150))",
		"LIST 299 relist", "SYNCED rv=300 relist gap-from=200 (too old resource version: 200 (250))",
		"MODIFIED 301",
	}
	got = got[:len(want)]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"100", "105", "105", "200", "300"}, watches[:5]); diff != "" {
		t.Errorf("watches resumed from the wrong RVs (-want +got):\n%s", diff)
	}
}

func TestStreamEndsOnFirstContactFailure(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{deployGVR: "DeploymentList"})
	client.PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", fmt.Errorf("no"))
	})
	cfg := NewConfig()
	cfg.Targets = []Target{{Resource: deployGVR, Namespace: "shop"}}
	err := Stream(context.Background(), NewDynamicSource(client), cfg, t.Logf, make(chan Event, 10))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want the Forbidden error, got %v", err)
	}
}

// pagedSource answers lists in pages of two items, noting how many events
// the stream had sent when each later page was asked for; its first watch
// answers 410 Gone (a relist), later ones stay open.
type pagedSource struct {
	out chan Event
	// mu guards sentAtPage and watches.
	mu         sync.Mutex
	sentAtPage []int
	watches    int
}

func (p *pagedSource) List(_ context.Context, _ Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	page := 0
	if opts.Continue != "" {
		fmt.Sscan(opts.Continue, &page)
		p.mu.Lock()
		p.sentAtPage = append(p.sentAtPage, len(p.out))
		p.mu.Unlock()
	}
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}
	l.SetResourceVersion("100")
	for i := range 2 {
		l.Items = append(l.Items, *fakeDeploy(fmt.Sprintf("web-%d", 2*page+i), fmt.Sprint(10+2*page+i)))
	}
	if page < 2 {
		l.SetContinue(fmt.Sprint(page + 1))
	}
	return l, nil
}

func (p *pagedSource) Watch(context.Context, Target, metav1.ListOptions) (watch.Interface, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watches++
	if p.watches == 1 {
		return nil, apierrors.NewResourceExpired("too old resource version: 100 (150)")
	}
	return watch.NewFake(), nil
}

// TestStreamSendsInitialListPageByPage checks that the items of an initial
// list are sent as each page arrives, so that a large list is never held
// whole, while a relist is sent only once complete (a relist that fails is
// retried, and must not send an item twice).
func TestStreamSendsInitialListPageByPage(t *testing.T) {
	out := make(chan Event, 100)
	src := &pagedSource{out: out}
	cfg := NewConfig()
	cfg.Targets = []Target{{Resource: deployGVR, Namespace: "shop"}}
	cfg.MinBackoff, cfg.MaxBackoff = time.Millisecond, 2*time.Millisecond
	cfg.Now = func() time.Time { return t0 }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Stream(ctx, src, cfg, t.Logf, out) }()
	// Read nothing until the lists are sent, so that len(out) counts what
	// was sent.
	for deadline := time.Now().Add(10 * time.Second); len(out) < 14; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stuck after %d events", len(out))
		}
	}
	cancel()
	var got []string
	for len(out) > 0 {
		ev := <-out
		s := string(ev.Type) + " " + string(ev.Reason)
		if ev.Object != nil {
			s += " " + ev.Object.GetName()
		}
		got = append(got, s)
	}
	if err := <-done; err != nil {
		t.Fatalf("stream: %v", err)
	}
	var want []string
	for _, reason := range []string{"initial", "relist"} {
		for i := range 6 {
			want = append(want, fmt.Sprintf("LIST %s web-%d", reason, i))
		}
		want = append(want, "SYNCED "+reason)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	// Nothing was read from out until 14 events were sent: the initial
	// list's pages 2 and 3 were asked for after 2 and 4 items were sent,
	// the relist's after the 7 events of the initial list only.
	if diff := cmp.Diff([]int{2, 4, 7, 7}, src.sentAtPage); diff != "" {
		t.Errorf("events sent when each later page was asked for (-want +got):\n%s", diff)
	}
}

// TestStreamRequireNames: with RequireNames, a target whose initial list
// (three pages here) lacks a named object ends the stream with a
// NotFoundError before any of its events is sent; when every name is
// there, the named items and SYNCED are sent as usual.
func TestStreamRequireNames(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  []string
		err   string
	}{
		{"one missing", []string{"web-1", "web-9"}, nil, `deployments.apps "web-9" not found in namespace shop`},
		{"all there, across pages", []string{"web-1", "web-4"}, []string{"LIST initial web-1", "LIST initial web-4", "SYNCED initial"}, ""},
		{"one missing in another target", []string{"web-1"}, nil, `deployments.apps "web-9" not found in namespace later`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := make(chan Event, 100)
			cfg := NewConfig()
			cfg.Targets = []Target{{Resource: deployGVR, Namespace: "shop", Names: tt.names}}
			var src Source = &pagedSource{out: out}
			if tt.name == "one missing in another target" {
				// The other target's list answers after the first
				// target's has found its name.
				cfg.Targets = append(cfg.Targets, Target{Resource: deployGVR, Namespace: "later", Names: []string{"web-9"}})
				src = slowSource{Source: src, slow: "later", after: 200 * time.Millisecond}
			}
			cfg.RequireNames, cfg.ChunkSize = true, 2
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Stream(ctx, src, cfg, t.Logf, out) }()
			var got []string
			for len(got) < len(tt.want) {
				ev := <-out
				s := string(ev.Type) + " " + string(ev.Reason)
				if ev.Object != nil {
					s += " " + ev.Object.GetName()
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if tt.err == "" {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("stream: %v", err)
				}
				return
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("the stream goes on, want a NotFoundError %q", tt.err)
			}
			if nf := (*NotFoundError)(nil); !errors.As(err, &nf) || err.Error() != tt.err {
				t.Errorf("stream = %v, want a NotFoundError %q", err, tt.err)
			}
			if len(out) > 0 {
				t.Errorf("%d events sent before the error", len(out))
			}
		})
	}
}

// slowSource answers the lists of the namespace slow after a pause.
type slowSource struct {
	Source
	slow  string
	after time.Duration
}

func (s slowSource) List(ctx context.Context, t Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if t.Namespace == s.slow {
		time.Sleep(s.after)
	}
	return s.Source.List(ctx, t, opts)
}
