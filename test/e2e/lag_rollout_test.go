//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestLagForRolloutPausedDeploymentDoesNotPass: a paused Deployment with a
// new image has observed its generation, so the generation gate (lag
// --wait, the default --for generation) passes it; kubectl rollout status
// waits, and so must --wait --for rollout, which names it paused. The
// plane has no kubelet; the deployment controller (running: no test pauses
// it here) still observes every generation.
func TestLagForRolloutPausedDeploymentDoesNotPass(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=1", "-n", ns)
	cluster.MustKubectl(t, "rollout", "pause", "deployment/web", "-n", ns)
	cluster.MustKubectl(t, "set", "image", "deployment/web", "pause=registry.k8s.io/pause:3.9", "-n", ns)

	// The generation gate: passes once the controller has observed the
	// new image, although nothing rolled out.
	lagWaitCurrent(t, "deployments", "-n", ns)

	// What kubectl rollout status says of it.
	ks := cluster.Kubectl(t, "rollout", "status", "deployment/web", "-n", ns, "--timeout=2s")
	const kubectlSays = `Waiting for deployment "web" rollout to finish: 0 out of 1 new replicas have been updated...`
	if ks.Code == 0 || !strings.Contains(ks.Stdout, kubectlSays) {
		t.Fatalf("kubectl rollout status of a paused Deployment: want it waiting with %q, got %s", kubectlSays, ks)
	}

	r := cluster.RV(t, "lag", "deployments", "-n", ns, "--wait", "--for", "rollout", "--timeout", "3s")
	if r.Code != 1 || !strings.Contains(r.Stderr, "timed out after 3s: 1 object not rolled out (1 paused)") {
		t.Fatalf("--wait --for rollout of a paused Deployment: want exit 1 naming it paused, got %s", r)
	}
	if !strings.Contains(r.Stdout, "deployment.apps/web") || !strings.Contains(r.Stdout, kubectlSays) {
		t.Errorf("the report should list web with kubectl's words:\n%s", r.Stdout)
	}

	d, code := lagJSON(t, "deployments", "-n", ns, "--for", "rollout")
	if code != 1 || len(d.Items) != 1 || d.Summary.Paused != 1 || d.Summary.Findings != 1 {
		t.Fatalf("lag --for rollout -o json: want exit 1 and web paused, got exit %d %+v", code, d)
	}
	if it := d.Items[0]; it.Name != "web" || it.State != "paused" || !it.Finding || it.Rollout != "spec.paused is true: "+kubectlSays {
		t.Errorf("web: %+v", it)
	}

	// Resumed, its rollout has begun, and waits for replicas that no
	// kubelet will run: rolling-out, no longer paused.
	cluster.MustKubectl(t, "rollout", "resume", "deployment/web", "-n", ns)
	r = cluster.RV(t, "lag", "deployments", "-n", ns, "--wait", "--for", "rollout", "--timeout", "5s")
	if r.Code != 1 || !strings.Contains(r.Stderr, "not rolled out (1 rolling-out)") {
		t.Errorf("--wait --for rollout after resuming: want exit 1 with web rolling-out, got %s", r)
	}
}

// TestLagForRolloutStalledFailsAtOnce: a Deployment whose progress deadline
// passes (no kubelet runs its pod) is stalled: --wait --for rollout ends as
// soon as the controller says so, long before its --timeout, exit 1
// naming the condition, as kubectl rollout status fails.
func TestLagForRolloutStalledFailsAtOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.KubectlStdin(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: slow
spec:
  replicas: 1
  progressDeadlineSeconds: 5
  selector:
    matchLabels: {app: slow}
  template:
    metadata:
      labels: {app: slow}
    spec:
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10
`, "apply", "-n", ns, "-f", "-")

	r := cluster.RV(t, "lag", "deployments", "-n", ns, "--wait", "--for", "rollout", "--timeout", "10m")
	want := "rollout stalled: deployments.apps " + ns + "/slow: condition Progressing is False (ProgressDeadlineExceeded)"
	if r.Code != 1 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("--wait --for rollout of a stalled Deployment: want exit 1 with %q, got %s", want, r)
	}
	if strings.Contains(r.Stderr, "timed out after") || !strings.Contains(r.Stdout, "deployment.apps/slow") {
		t.Errorf("it should fail at the stall, listing slow, not at the timeout: %s", r)
	}

	// kubectl rollout status agrees, in its words.
	ks := cluster.Kubectl(t, "rollout", "status", "deployment/slow", "-n", ns, "--timeout=10s")
	if ks.Code == 0 || !strings.Contains(ks.Stderr, `deployment "slow" exceeded its progress deadline`) {
		t.Errorf("kubectl rollout status: want the progress deadline error, got %s", ks)
	}

	d, code := lagJSON(t, "deployments", "-n", ns, "--for", "rollout")
	if code != 1 || len(d.Items) != 1 || d.Summary.Stalled != 1 {
		t.Fatalf("lag --for rollout -o json: want exit 1 and slow stalled, got exit %d %+v", code, d)
	}
	if it := d.Items[0]; it.State != "stalled" || !strings.HasPrefix(it.Rollout, "condition Progressing is False (ProgressDeadlineExceeded): ") {
		t.Errorf("slow: %+v", it)
	}
	// The generation gate passes it: the controller has observed it.
	if r := cluster.RV(t, "lag", "deployments", "-n", ns, "--wait", "--timeout", "30s"); r.Code != 0 {
		t.Errorf("--for generation: want exit 0, the generation is observed, got %s", r)
	}
}
