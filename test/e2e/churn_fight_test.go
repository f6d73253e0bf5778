//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestChurnFightersAreNoSelfLoops: two real writers take a ConfigMap's key
// from each other (writes without a generation, faster than --loop-rate
// each); churn reports their fight and lists neither as a self-loop, while
// a writer re-stamping its own annotation is one (#28: both sides of a
// fight were also listed as self-loops). The managers and the write counts
// come from the writers.
func TestChurnFightersAreNoSelfLoops(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cs := cluster.Clientset(t, "e2e-setup")
	for _, name := range []string{"rope", "hot"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pullers := []string{"puller-a", "puller-b"}
	var (
		// mu guards wrote.
		mu    sync.Mutex
		wrote = map[string]int{}
	)
	wctx, stop := context.WithCancel(ctx)
	var waits []func()
	defer func() {
		stop()
		for _, w := range waits {
			w()
		}
	}()
	waits = append(waits, every(wctx, t, 250*time.Millisecond, func(i int) error {
		manager := pullers[i%2]
		p := mergePatch(map[string]any{"data": map[string]any{"k": fmt.Sprintf("%s-%d", manager, i)}})
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(wctx, "rope", types.MergePatchType, p, metav1.PatchOptions{FieldManager: manager})
		if err == nil {
			mu.Lock()
			wrote[manager]++
			mu.Unlock()
		}
		return err
	}))
	waits = append(waits, every(wctx, t, 250*time.Millisecond, func(int) error {
		p := mergePatch(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"stamp": time.Now().UTC().Format(time.RFC3339Nano)}}})
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(wctx, "hot", types.MergePatchType, p, metav1.PatchOptions{FieldManager: "looper"})
		return err
	}))
	start := time.Now()
	r := cluster.RV(t, "churn", "configmaps", "-n", ns, "--for", "15s", "-o", "json")
	elapsed := time.Since(start)
	if r.Code != 0 {
		t.Fatalf("churn: %s", r)
	}
	rep := parseChurn(t, r.Stdout)
	mu.Lock()
	for _, m := range pullers {
		// Each puller alone writes faster than the default --loop-rate (20 a
		// minute): only the rule makes them no loop.
		if perMinute := float64(wrote[m]) / elapsed.Minutes(); perMinute <= 20 {
			t.Fatalf("%s wrote %d times in %s (%.0f a minute): too slow to test the rule", m, wrote[m], elapsed, perMinute)
		}
	}
	t.Logf("the pullers wrote %v; loops %+v; fights %+v", wrote, rep.Loops, rep.Fights)
	mu.Unlock()

	fought := false
	for _, f := range rep.Fights {
		if f.Object == "configmaps/rope" && f.Field == ".data.k" && slices.Equal(f.Managers, pullers) {
			fought = true
		}
	}
	if !fought {
		t.Errorf("want the fight over rope's .data.k between %v, got %+v", pullers, rep.Fights)
	}
	looped := false
	for _, l := range rep.Loops {
		if l.Name == "rope" || slices.Contains(pullers, l.Manager) {
			t.Errorf("a side of the fight is listed as a self-loop: %+v", l)
		}
		looped = looped || l.Name == "hot" && l.Manager == "looper"
	}
	if !looped {
		t.Errorf("want the looper's self-loop on hot, got %+v", rep.Loops)
	}
}
