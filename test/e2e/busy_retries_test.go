//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// fastRounds and fastFor bound the fast writers' rounds.
const (
	fastRounds = 40
	fastFor    = 10 * time.Second
)

// fastRMW is one of two client-go RetryOnConflict writers of ConfigMap
// fast, a round every 100 to 250 ms (#50 D1): each retry re-reads and
// sends a new precondition, and comes sooner after its 409 than the
// writer's pace, but not always sooner than half of it once the get is
// slow. The other fast writer is the only one it can lose to.
func (s *busyScene) fastRMW(ctx context.Context, name, other string, seed uint64) error {
	cs := cluster.Clientset(s.tb, sceneUA(name))
	w := s.writerLocked(name)
	w.sent("fast", "update")
	w.lostTo = []string{other}
	rnd := rand.New(rand.NewPCG(seed, 50))
	end := time.Now().Add(fastFor)
	for round := 0; round < fastRounds && time.Now().Before(end); round++ {
		rmwObject(ctx, cs, s.ns, "fast", name, name, round, &w.writerLog)
		time.Sleep(time.Duration(100+rnd.IntN(151)) * time.Millisecond)
	}
	return nil
}

// blindApplier applies ConfigMap blind's key a, which busy-blind-owner
// owns, every 700 ms without force; after each conflict it sends the same
// apply again at once, twice, without reading (#50 D2): a chain of three
// 409s, retried blind, then given up.
func (s *busyScene) blindApplier(ctx context.Context) error {
	const name, owner = "busy-blind", "busy-blind-owner"
	cs := cluster.Clientset(s.tb, sceneUA(name))
	apply := func(manager, value string) error { return applyKey(ctx, cs, s.ns, manager, "a", value) }
	o := s.writerLocked(owner)
	o.userAgent = sceneUA(name)
	o.sent("blind", "apply")
	o.Attempts++
	if err := apply(owner, "owned"); err != nil {
		return fmt.Errorf("%s: %w", owner, err)
	}
	o.Successes++
	w := s.writerLocked(name)
	w.sent("blind", "apply")
	w.lostTo = []string{owner}
	// A first apply of its own key, a period before the blind ones,
	// gives conflicts its pace (see docs/conflicts.md: a writer with no
	// pace yet is retrying).
	w.Attempts++
	if err := applyKey(ctx, cs, s.ns, name, "b", "mine"); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	w.Successes++
	time.Sleep(700 * time.Millisecond)
	for round := 0; round < 6; round++ {
		for try := 0; try < 3; try++ {
			w.Attempts++
			err := apply(name, fmt.Sprint(round))
			fields, ok := framework.ApplyConflicts(err)
			if !ok {
				return fmt.Errorf("%s: got %v, want an apply conflict", name, err)
			}
			w.Conflicts++
			w.causes["ssa-field-conflict"]++
			w.owners = map[string][]string{}
			for field, managers := range fields {
				for _, m := range managers {
					w.owners[m] = append(w.owners[m], field)
				}
			}
		}
		w.RetryChains++
		w.GiveUps++
		time.Sleep(700 * time.Millisecond)
	}
	return nil
}

// applyKey applies ConfigMap blind's key as manager, without force.
func applyKey(ctx context.Context, cs kubernetes.Interface, ns, manager, key, value string) error {
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]string{"name": "blind", "namespace": ns}, "data": map[string]string{key: value}})
	_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "blind", types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: manager})
	return err
}

// retryObjects creates the ConfigMaps of the fast writers and the blind
// applier.
func (s *busyScene) retryObjects(ctx context.Context) error {
	cs := cluster.Clientset(s.tb, sceneUA("busy-setup"))
	for _, name := range []string{"fast", "blind"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}, Data: map[string]string{}}
		if _, err := cs.CoreV1().ConfigMaps(s.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
