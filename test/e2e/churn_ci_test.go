//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestChurnCIFormatsOnAHotLoop: manager "looper" re-stamps ConfigMap hot
// every 200 ms, as churnScene's does; churn --fail-on loop exits 1 in the
// table and in every CI format, each holding the loop as an error at the
// ConfigMap with its writer.
func TestChurnCIFormatsOnAHotLoop(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx, stop := context.WithCancel(context.Background())
	cs := cluster.Clientset(t, "e2e-setup")
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wait := every(ctx, t, 200*time.Millisecond, func(int) error {
		p := mergePatch(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"stamp": time.Now().UTC().Format(time.RFC3339Nano)}}})
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "hot", types.MergePatchType, p, metav1.PatchOptions{FieldManager: "looper"})
		return err
	})
	runs := rvFormats(t, "churn", "configmaps", "-n", ns, "--for", "6s", "--fail-on", "loop")
	stop()
	wait()
	checkCIFormats(t, t.TempDir(), runs, ciFinding{code: 1, rule: "churn/loop", object: "configmaps/" + ns + "/hot", text: "looper rewrote it"})
}
