//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestWatchRolloutAttributesTheControllersStatusWrites: in a Deployment's
// rollout, every write that changes .status is attributed to the /status
// writer the API server recorded in managedFields (the deployment
// controller of kube-controller-manager), including the write that removes
// .status.updatedReplicas, which showed "? time not moved" (#28).
func TestWatchRolloutAttributesTheControllersStatusWrites(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cs := cluster.Clientset(t, "e2e-rollout")
	deploys := cs.AppsV1().Deployments(ns)
	// Recreate: the rollout scales the old ReplicaSet to zero before it
	// creates the new one, so the controller's status writes remove
	// .status.replicas and .status.updatedReplicas on the way, whatever the
	// timing (with RollingUpdate they may only change).
	web := newDeployment(ns, "web", 2)
	web.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	if _, err := deploys.Create(ctx, web, metav1.CreateOptions{FieldManager: "e2e-rollout"}); err != nil {
		t.Fatal(err)
	}
	// Nothing schedules the Pods: the controller reports two updated,
	// unavailable replicas, but it writes the status of every step.
	settled := func(gen int64, what string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
		t.Helper()
		var d *appsv1.Deployment
		deadline := time.Now().Add(time.Minute)
		for {
			var err error
			if d, err = deploys.Get(ctx, "web", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
			if d.Status.ObservedGeneration >= gen && ok(d) {
				return d
			}
			if time.Now().After(deadline) {
				t.Fatalf("the deployment controller did not %s within a minute: status %+v", what, d.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	settled(1, "report two updated replicas", func(d *appsv1.Deployment) bool { return d.Status.UpdatedReplicas == 2 })

	bg := cluster.StartRV(t, "watch", "deployment/web", "-n", ns, "-o", "json")
	bg.WaitFor(t, time.Minute, "the initial ADDED row", isRow("ADDED", "web"))
	p := mergePatch(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.26"}}}}}})
	if _, err := deploys.Patch(ctx, "web", types.StrategicMergePatchType, p, metav1.PatchOptions{FieldManager: "e2e-rollout"}); err != nil {
		t.Fatal(err)
	}
	d := settled(2, "report the new ReplicaSet", func(d *appsv1.Deployment) bool { return d.Status.UpdatedReplicas >= 1 })
	// A second apart, so that the controller's later status writes, if any,
	// are seen before the watch stops.
	time.Sleep(time.Second)
	if d, err := deploys.Get(ctx, "web", metav1.GetOptions{}); err == nil {
		bg.WaitFor(t, time.Minute, "the row of the last version", func(l string) bool {
			r, _ := parseRow(t, l)
			return r.ResourceVersion == d.ResourceVersion
		})
	}
	res := bg.Stop(t)
	if res.Code != 0 {
		t.Fatalf("watch ended with %s", res)
	}

	// Who may write .status, as the API server recorded it.
	var statusWriters []string
	for _, e := range d.ManagedFields {
		if e.Subresource == "status" {
			statusWriters = append(statusWriters, e.Manager)
		}
	}
	if len(statusWriters) != 1 {
		t.Fatalf("want one /status writer in managedFields, got %q", statusWriters)
	}
	want := statusWriters[0]
	statusRows, removals := 0, 0
	for _, r := range parseRows(t, res.Stdout) {
		if r.Type != "MODIFIED" || len(r.Fields) == 0 {
			continue
		}
		// Only a write through /status changes a Deployment's .status (the
		// API server resets it on the main resource), so every row that
		// changes it is the /status writer's.
		status := false
		for _, f := range r.Fields {
			if strings.HasPrefix(f.Path, ".status.") {
				status = true
				if f.Op == "remove" {
					removals++
				}
			}
		}
		if !status {
			continue
		}
		statusRows++
		if r.Writer == nil || r.Writer.Manager != want || r.Writer.Subresource != "status" {
			t.Errorf("rv %s changes .status (%+v) but is attributed to %+v, want %s (status)", r.ResourceVersion, r.Fields, r.Writer, want)
		}
	}
	t.Logf("%d rows change .status, %d removed fields; /status writer %s", statusRows, removals, want)
	if statusRows == 0 || removals == 0 {
		t.Errorf("want status writes that remove a field (.status.updatedReplicas) in the rollout, got %d rows and %d removals:\n%s", statusRows, removals, res.Stdout)
	}
}
