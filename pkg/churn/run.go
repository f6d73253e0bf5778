package churn

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Clients are the API clients a run uses.
type Clients struct {
	// Metadata lists and watches object metadata.
	Metadata metadata.Interface
	// Dynamic fetches the full objects Config.Explain asks for; nil turns
	// explaining off.
	Dynamic dynamic.Interface
}

type fetchResult struct {
	k objKey
	u *unstructured.Unstructured
}

// Run watches the metadata of the given types (namespaced ones in
// cfg.Namespace, or all namespaces) until ctx is done, and returns the
// report. Each type is listed, then watched; a dropped watch resumes, and a
// 410 Gone relists and records a Gap (follow.Stream). A type that cannot
// be started (a 403, a broken aggregated API) is left out with a warning;
// Run fails only when no type can be started. A done ctx is how a run ends
// (Ctrl-C, --for), not an error.
func Run(ctx context.Context, c Clients, types []apitypes.Type, cfg Config) (*Report, error) {
	if cfg.Stream.Now == nil {
		cfg.Stream.Now = time.Now
	}
	t := NewTracker(cfg, types, cfg.Stream.Now())
	warnings := follow.NewWarnings(cfg.Warnf)
	streamCtx, stop := context.WithCancel(ctx)
	defer stop()
	events := make(chan follow.Event, follow.QueueLen)
	done := make(chan error, 1)
	go func() {
		done <- streamAll(streamCtx, follow.NewMetadataSource(c.Metadata), types, cfg, warnings.Warnf, events)
	}()
	lists := len(types)
	if cfg.Stream.Since != "" {
		lists = 0
	}
	err := t.consume(streamCtx, c.Dynamic, events, done, follow.NewListMemory(lists))
	stop()
	if err != nil {
		return nil, err
	}
	t.warnings = warnings.List()
	return t.Report(cfg.Stream.Now()), nil
}

// consume feeds the tracker until the streams end, picks the objects to
// explain every second and fetches them on their writes.
func (t *Tracker) consume(ctx context.Context, dyn dynamic.Interface, events <-chan follow.Event, done <-chan error, lists *follow.ListMemory) error {
	// At most one fetch per explained object is in flight, and at most
	// 3*Explain objects are explained: no fetch ever waits to deliver.
	fetched := make(chan fetchResult, 3*t.cfg.Explain+1)
	var wg sync.WaitGroup
	defer wg.Wait()
	clocks := follow.NewClocks(t.cfg.Live != nil, t.cfg.LiveEvery)
	defer clocks.Stop()
	for {
		select {
		case ev := <-events:
			t.Observe(ev)
			lists.Observe(ev)
			if dyn == nil || ev.Type != follow.Modified {
				continue
			}
			if k, ok := t.keyOf(ev); ok && t.wantsFetch(k) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					t.fetch(ctx, dyn, k, fetched)
				}()
			}
		case f := <-fetched:
			t.explained(f.k, f.u)
		case <-clocks.Tick:
			t.pickExplain()
		case <-clocks.Live:
			t.cfg.Live(t.report(t.cfg.Stream.Now(), t.cfg.LiveTop))
		case err := <-done:
			// The streams have returned: what they queued was seen in time.
			follow.Drain(events, t.Observe)
			return err
		}
	}
}

func (t *Tracker) keyOf(ev follow.Event) (objKey, bool) {
	ti, ok := t.typeIndex[ev.Resource]
	if !ok || ev.Object == nil {
		return objKey{}, false
	}
	return t.key(ti, ev.Object), true
}

// fetch gets the full object; it runs in its own goroutine and touches no
// tracker state.
func (t *Tracker) fetch(ctx context.Context, dyn dynamic.Interface, k objKey, out chan<- fetchResult) {
	ty := t.types[k.typ].t
	r := dyn.Resource(ty.Resource)
	var u *unstructured.Unstructured
	var err error
	if ty.Namespaced {
		u, err = r.Namespace(k.namespace).Get(ctx, k.name, metav1.GetOptions{})
	} else {
		u, err = r.Get(ctx, k.name, metav1.GetOptions{})
	}
	if err != nil {
		u = nil
	}
	select {
	case out <- fetchResult{k: k, u: u}:
	case <-ctx.Done():
	}
}

// streamAll runs one follow.Stream per type, so that a type that cannot be
// started is left out alone; it fails only when every type fails.
func streamAll(ctx context.Context, src follow.Source, types []apitypes.Type, cfg Config, warnf func(string, ...any), out chan<- follow.Event) error {
	var (
		wg sync.WaitGroup
		// mu guards failed and first.
		mu     sync.Mutex
		failed int
		first  error
	)
	for _, ty := range types {
		sc := cfg.Stream
		tgt := follow.Target{Resource: ty.Resource}
		if ty.Namespaced {
			tgt.Namespace = cfg.Namespace
		}
		sc.Targets = []follow.Target{tgt}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := follow.Stream(ctx, src, sc, warnf, out)
			if err == nil {
				return
			}
			warnf("leaving %s out: %v", ty.Name(), err)
			mu.Lock()
			defer mu.Unlock()
			failed++
			if first == nil {
				first = err
			}
		}()
	}
	wg.Wait()
	if len(types) > 0 && failed == len(types) {
		return first
	}
	return nil
}
