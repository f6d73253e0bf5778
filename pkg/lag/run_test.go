package lag

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRunModes: Run scans, hands the report to Scanned, then waits until
// nothing lags (ErrStillLagging when the timeout passes first) or watches,
// handing OnChange the items that changed since its last call.
func TestRunModes(t *testing.T) {
	lagging := obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(1), specWrite: t0, observer: "kcm"})
	caughtUp := obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(2), specWrite: t0, observer: "kcm"})
	t.Run("once", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {lagging}}}
		cfg := testConfig()
		scanned := 0
		cfg.Scanned = func(*Report) error { scanned++; return nil }
		rep, err := Run(context.Background(), cfg, c, []Target{deployments})
		if err != nil || rep.Findings() != 1 || scanned != 1 {
			t.Fatalf("Run = %v, %d findings, Scanned called %d times; want 1 finding, Scanned once", err, rep.Findings(), scanned)
		}
		if c.watchers != nil {
			t.Error("Once watched")
		}
	})
	t.Run("interrupted scan", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {lagging}}}
		cfg := testConfig()
		cfg.Mode = Watching
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := Run(ctx, cfg, c, []Target{deployments}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled: the watch had not begun", err)
		}
	})
	t.Run("wait times out", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {lagging}}}
		cfg := testConfig()
		cfg.Mode, cfg.Timeout = UntilCaughtUp, time.Millisecond
		rep, err := Run(context.Background(), cfg, c, []Target{deployments})
		if !errors.Is(err, ErrStillLagging) || rep == nil || rep.Findings() != 1 {
			t.Fatalf("Run = %v with %+v, want ErrStillLagging and the report", err, rep)
		}
	})
	t.Run("watch reports changes", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {lagging}}}
		cfg := testConfig()
		cfg.Mode = Watching
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var changed [][]string
		cfg.OnChange = func(_ *Report, items []Item) error {
			var names []string
			for _, it := range items {
				names = append(names, it.Name+" "+string(it.State))
			}
			changed = append(changed, names)
			cancel()
			return nil
		}
		go func() {
			c.watcher(deployments.Name()).Modify(toUnstructured(t, caughtUp))
		}()
		// The end of ctx is the watch's normal end, as its timeout is.
		if rep, err := Run(ctx, cfg, c, []Target{deployments}); err != nil || rep == nil || rep.Findings() != 0 {
			t.Fatalf("Run = %v with %+v, want the report, caught up, and no error", err, rep)
		}
		if diff := cmp.Diff([][]string{{"b " + string(Current)}}, changed); diff != "" {
			t.Errorf("changes (-want +got)\n%s", diff)
		}
	})
}
