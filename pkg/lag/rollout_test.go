package lag

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/polymorphichelpers"
)

var (
	statefulSets = NewTarget(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "StatefulSet", true)
	daemonSets   = NewTarget(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, "DaemonSet", true)
	podsT        = NewTarget(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "Pod", true)
)

// viewerAnswer is what a status viewer says, in a comparable form.
type viewerAnswer struct {
	Msg  string
	Done bool
	Err  string
}

func answer(msg string, done bool, err error) viewerAnswer {
	a := viewerAnswer{Msg: msg, Done: done}
	if err != nil {
		a.Err = err.Error()
	}
	return a
}

// kubectlSays runs kubectl's own status viewer on obj.
func kubectlSays(t *testing.T, kind string, obj runtime.Object) viewerAnswer {
	t.Helper()
	v, err := polymorphichelpers.StatusViewerFor(schema.GroupKind{Group: "apps", Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return answer(v.Status(&unstructured.Unstructured{Object: u}, 0))
}

// TestRolloutStatusMatchesKubectl holds the ported status viewers equal to
// kubectl's on seeded random workloads whose counts cross each other's
// boundaries (and a fixed number of them, so the test is bounded).
func TestRolloutStatusMatchesKubectl(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	small := func() int32 { return r.Int32N(4) }
	opt := func() *int32 {
		if r.IntN(4) == 0 {
			return nil
		}
		return ptr(small())
	}
	reasons := []string{"", "NewReplicaSetAvailable", "ProgressDeadlineExceeded", "DeploymentPaused"}
	for i := range 3000 {
		meta := metav1.ObjectMeta{Name: fmt.Sprint("w", i), Generation: int64(small())}
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: opt(), Paused: r.IntN(2) == 0},
			Status: appsv1.DeploymentStatus{ObservedGeneration: int64(small()), Replicas: small(), UpdatedReplicas: small(), AvailableReplicas: small()}}
		if reason := reasons[r.IntN(len(reasons))]; reason != "" {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: "False", Reason: reason}}
		}
		strategies := []appsv1.StatefulSetUpdateStrategyType{appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType}
		sts := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: opt(), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: strategies[r.IntN(2)]}},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: int64(small()), ReadyReplicas: small(), UpdatedReplicas: small(), CurrentReplicas: small(),
				CurrentRevision: fmt.Sprint("r", small()), UpdateRevision: fmt.Sprint("r", small())}}
		if r.IntN(2) == 0 {
			sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: opt()}
		}
		dsStrategies := []appsv1.DaemonSetUpdateStrategyType{appsv1.RollingUpdateDaemonSetStrategyType, appsv1.OnDeleteDaemonSetStrategyType}
		ds := &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: dsStrategies[r.IntN(2)]}},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: int64(small()), DesiredNumberScheduled: small(), UpdatedNumberScheduled: small(), NumberAvailable: small()}}
		for _, c := range []struct {
			kind      string
			obj       runtime.Object
			want, got viewerAnswer
		}{
			{"Deployment", d, kubectlSays(t, "Deployment", d), answer(deploymentStatus(d))},
			{"StatefulSet", sts, kubectlSays(t, "StatefulSet", sts), answer(statefulSetStatus(sts))},
			{"DaemonSet", ds, kubectlSays(t, "DaemonSet", ds), answer(daemonSetStatus(ds))},
		} {
			if diff := cmp.Diff(c.want, c.got); diff != "" {
				t.Fatalf("%s %+v: kubectl (-want) and lag (+got) disagree\n%s", c.kind, c.obj, diff)
			}
		}
	}
}

// deploymentJSON is a Deployment at generation 2 with one replica wanted.
func deploymentJSON(t *testing.T, paused bool, status appsv1.DeploymentStatus) []byte {
	t.Helper()
	d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 2},
		Spec: appsv1.DeploymentSpec{Replicas: ptr[int32](1), Paused: paused}, Status: status}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestClassifyRollout: with RolledOut, an object whose generation has been
// observed is current only once rolled out; a paused and a stalled rollout
// are states of their own. Without it (the default), all of them are
// current, which is what a paused Deployment with a new image used to pass
// as.
func TestClassifyRollout(t *testing.T) {
	deadline := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-1" has timed out progressing.`}
	tests := []struct {
		name        string
		target      Target
		data        []byte
		state       State
		rollout     string
		generations State
	}{
		{"paused with a new spec", deployments, deploymentJSON(t, true, appsv1.DeploymentStatus{ObservedGeneration: 2}),
			Paused, `spec.paused is true: Waiting for deployment "web" rollout to finish: 0 out of 1 new replicas have been updated...`, Current},
		{"progress deadline exceeded", deployments, deploymentJSON(t, false, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, Conditions: []appsv1.DeploymentCondition{deadline}}),
			Stalled, `condition Progressing is False (ProgressDeadlineExceeded): ReplicaSet "web-1" has timed out progressing.`, Current},
		{"replicas not available", deployments, deploymentJSON(t, false, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1}),
			RollingOut, `Waiting for deployment "web" rollout to finish: 0 of 1 updated replicas are available...`, Current},
		{"rolled out", deployments, deploymentJSON(t, false, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}),
			Current, "", Current},
		{"spec not observed is still lagging", deployments, deploymentJSON(t, true, appsv1.DeploymentStatus{ObservedGeneration: 1}),
			Lagging, "", Lagging},
		{"statefulset waiting for pods", statefulSets, []byte(`{"metadata":{"name":"db","generation":1},"spec":{"replicas":2,"updateStrategy":{"type":"RollingUpdate"}},"status":{"observedGeneration":1,"readyReplicas":1}}`),
			RollingOut, "Waiting for 1 pods to be ready...", Current},
		{"statefulset on delete cannot be judged", statefulSets, []byte(`{"metadata":{"name":"db","generation":1},"spec":{"replicas":2,"updateStrategy":{"type":"OnDelete"}},"status":{"observedGeneration":1}}`),
			Current, "", Current},
		{"daemonset rolled out", daemonSets, []byte(`{"metadata":{"name":"ds","generation":3},"spec":{"updateStrategy":{"type":"RollingUpdate"}},"status":{"observedGeneration":3,"desiredNumberScheduled":2,"updatedNumberScheduled":2,"numberAvailable":2}}`),
			Current, "", Current},
		{"custom resource not ready", widgets, []byte(`{"metadata":{"name":"w","generation":1},"status":{"observedGeneration":1,"conditions":[{"type":"Ready","status":"False","reason":"Waiting","message":"db not up"}]}}`),
			RollingOut, "condition Ready is False (Waiting): db not up", Current},
		{"custom resource without observedGeneration, reconciling", widgets, []byte(`{"metadata":{"name":"w","generation":1},"status":{"conditions":[{"type":"Reconciling","status":"True"}]}}`),
			RollingOut, "condition Reconciling is True", NeverObserved},
		{"custom resource stalled", widgets, []byte(`{"metadata":{"name":"w","generation":1},"status":{"observedGeneration":1,"conditions":[{"type":"Ready","status":"False"},{"type":"Stalled","status":"True","reason":"BadSpec"}]}}`),
			Stalled, "condition Stalled is True (BadSpec)", Current},
		{"custom resource progress deadline", widgets, []byte(`{"metadata":{"name":"w","generation":1},"status":{"observedGeneration":1,"conditions":[{"type":"Progressing","status":"False","reason":"ProgressDeadlineExceeded"}]}}`),
			Stalled, "condition Progressing is False (ProgressDeadlineExceeded)", Current},
		{"custom resource ready", widgets, []byte(`{"metadata":{"name":"w","generation":1},"status":{"observedGeneration":1,"conditions":[{"type":"Ready","status":"True"}]}}`),
			Current, "", Current},
		{"custom resource with a status of another shape", widgets, []byte(`{"metadata":{"name":"w","generation":1},"status":{"observedGeneration":1,"conditions":"Ready"}}`),
			Current, "", Current},
		{"completed pod", podsT, []byte(`{"metadata":{"name":"p","generation":1},"status":{"observedGeneration":1,"phase":"Succeeded","conditions":[{"type":"Ready","status":"False","reason":"PodCompleted"}]}}`),
			Current, "", Current},
		{"no generation is not judged", widgets, []byte(`{"metadata":{"name":"w"},"status":{"conditions":[{"type":"Ready","status":"False"}]}}`),
			NoGeneration, "", NoGeneration},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := DecodeObject(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			cfg := NewConfig()
			cfg.For = RolledOut
			c := classify(cfg, tt.target, o)
			if diff := cmp.Diff([2]string{string(tt.state), tt.rollout}, [2]string{string(c.State), c.Rollout}); diff != "" {
				t.Errorf("--for rollout: state and rollout (-want +got)\n%s", diff)
			}
			if got := classify(NewConfig(), tt.target, o).State; got != tt.generations {
				t.Errorf("--for generation: state %s, want %s", got, tt.generations)
			}
		})
	}
}

// rolloutDeployment is obj's Deployment with a status for the rollout
// check: one replica wanted, updated and available as given, and an
// optional Progressing condition reason.
func rolloutDeployment(name string, updated, available int, progressing string) string {
	st := map[string]any{"observedGeneration": 2, "replicas": updated, "updatedReplicas": updated, "availableReplicas": available}
	if progressing != "" {
		st["conditions"] = []any{map[string]any{"type": "Progressing", "status": "False", "reason": progressing, "message": "timed out"}}
	}
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"name": name, "namespace": "ns", "generation": 2, "creationTimestamp": t0.Add(-time.Hour).Format(time.RFC3339)},
		"spec":     map[string]any{"replicas": 1}, "status": st})
	return string(b)
}

// TestRunWaitEndsAtOnceWhenStalled: --wait --for rollout does not wait for
// a stalled rollout, whether the scan finds it or the watch sees it happen,
// and its error names the object and the condition.
func TestRunWaitEndsAtOnceWhenStalled(t *testing.T) {
	const want = "rollout stalled: deployments.apps ns/web: condition Progressing is False (ProgressDeadlineExceeded): timed out"
	cfg := testConfig()
	cfg.Mode, cfg.For = UntilCaughtUp, RolledOut
	t.Run("found by the scan", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {
			rolloutDeployment("slow", 1, 0, ""), rolloutDeployment("web", 1, 0, "ProgressDeadlineExceeded"),
		}}}
		rep, err := Run(context.Background(), cfg, c, []Target{deployments})
		if !errors.Is(err, ErrStalled) || err.Error() != want {
			t.Fatalf("Run = %v, want %q", err, want)
		}
		if s := rep.Types[0]; s.Stalled != 1 || s.RollingOut != 1 || s.Findings != 2 {
			t.Errorf("summary: %+v", s)
		}
		if c.watchers != nil {
			t.Error("Run watched though a rollout had stalled")
		}
	})
	t.Run("seen by the watch", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {rolloutDeployment("web", 1, 0, "")}}}
		go func() {
			c.watcher(deployments.Name()).Modify(toUnstructured(t, rolloutDeployment("web", 1, 0, "ProgressDeadlineExceeded")))
		}()
		_, err := Run(context.Background(), cfg, c, []Target{deployments})
		if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "ProgressDeadlineExceeded") {
			t.Fatalf("Run = %v, want ErrStalled naming ProgressDeadlineExceeded", err)
		}
	})
	t.Run("rolled out", func(t *testing.T) {
		c := &fakeClient{objects: map[string][]string{deployments.Name(): {rolloutDeployment("web", 1, 0, "")}}}
		go func() {
			c.watcher(deployments.Name()).Modify(toUnstructured(t, rolloutDeployment("web", 1, 1, "")))
		}()
		if rep, err := Run(context.Background(), cfg, c, []Target{deployments}); err != nil || rep.Findings() != 0 {
			t.Fatalf("Run = %v with %d findings, want the rollout done", err, rep.Findings())
		}
	})
}
