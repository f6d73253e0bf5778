//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// lagDoc is the part of kubectl rv lag -o json the tests read.
type lagDoc struct {
	APIVersion string
	Kind       string
	Summary    struct{ Objects, Lagging, NeverObserved, RollingOut, Paused, Stalled, Findings int }
	Types      []struct {
		Resource, Group string
		Objects         int
		Error           string
	}
	Items []struct {
		Kind, Namespace, Name string
		Generation            *int64
		ObservedGeneration    *int64
		Lag                   int64
		State                 string
		Finding               bool
		LaggingConditions     []struct {
			Type               string
			ObservedGeneration int64
		}
		Rollout      string
		AgeSeconds   int64
		SpecSource   string
		Observer     string
		Explanations []string
	}
	Warnings []string
}

func lagJSON(t *testing.T, args ...string) (lagDoc, int) {
	t.Helper()
	r := cluster.RV(t, append([]string{"lag", "-o", "json"}, args...)...)
	var d lagDoc
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("kubectl rv lag %s -o json is not JSON: %v\n%s", strings.Join(args, " "), err, r)
	}
	if d.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || d.Kind != "LagReport" {
		t.Fatalf("unexpected report head %q %q", d.APIVersion, d.Kind)
	}
	return d, r.Code
}

func lagWaitCurrent(t *testing.T, args ...string) {
	t.Helper()
	r := cluster.RV(t, append([]string{"lag", "--wait", "--timeout", "90s"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("objects did not become current: %s", r)
	}
}

func TestLagPausedControllersReportsExactlyTheScaledDeployments(t *testing.T) {
	ns := cluster.Namespace(t)
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		cluster.MustKubectl(t, "create", "deployment", name, "--image=registry.k8s.io/pause:3.10", "--replicas=1", "-n", ns)
	}
	lagWaitCurrent(t, "deployments", "-n", ns)
	r := cluster.RV(t, "lag", "deployments", "-n", ns)
	if r.Code != 0 || !strings.Contains(r.Stderr, "nothing lags") {
		t.Fatalf("freshly reconciled Deployments should be current: %s", r)
	}

	cluster.PauseControllers(t)
	cluster.MustKubectl(t, "scale", "deployment", "alpha", "--replicas=2", "-n", ns)
	cluster.MustKubectl(t, "scale", "deployment", "bravo", "--replicas=2", "-n", ns)
	cluster.MustKubectl(t, "scale", "deployment", "bravo", "--replicas=3", "-n", ns)

	d, code := lagJSON(t, "deployments", "-n", ns)
	if code != 1 {
		t.Fatalf("lagging Deployments: want exit 1, got %d", code)
	}
	type row struct {
		Name         string
		Gen, Obs     int64
		Lag          int64
		State        string
		Finding      bool
		Observer     string
		SpecEstimate bool
	}
	var got []row
	for _, it := range d.Items {
		got = append(got, row{it.Name, *it.Generation, *it.ObservedGeneration, it.Lag, it.State, it.Finding, it.Observer, it.SpecSource == "managedFields-estimate"})
		if it.AgeSeconds < 0 || it.AgeSeconds > 300 {
			t.Errorf("%s: implausible age %ds", it.Name, it.AgeSeconds)
		}
	}
	want := []row{
		{"alpha", 2, 1, 1, "lagging", true, "kube-controller-manager", true},
		{"bravo", 3, 1, 2, "lagging", true, "kube-controller-manager", true},
	}
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Errorf("lagging Deployments:\nwant %v\ngot  %v", want, got)
	}
	if d.Summary.Objects != 3 || d.Summary.Findings != 2 {
		t.Errorf("summary: %+v", d.Summary)
	}

	// The table, and the default scope of the namespace (which also holds
	// the ReplicaSets and the Pods no kubelet will ever observe).
	r = cluster.RV(t, "lag", "-n", ns)
	if r.Code != 1 {
		t.Fatalf("default scope: want exit 1, got %s", r)
	}
	for _, s := range []string{"deployment.apps/alpha", "deployment.apps/bravo", "kubectl rollout status will wait until status.observedGeneration reaches 3"} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("table lacks %q:\n%s", s, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "deployment.apps/charlie") {
		t.Errorf("charlie is current and should not be listed:\n%s", r.Stdout)
	}
	// --max-lag 1 lets alpha (lag 1) pass, not bravo (lag 2).
	d, code = lagJSON(t, "deployments", "-n", ns, "--max-lag", "1")
	if code != 1 || d.Summary.Findings != 1 {
		t.Errorf("--max-lag 1: want exit 1 with one finding, got exit %d %+v", code, d.Summary)
	}
	// --min-age 1h: nothing has waited that long.
	if _, code = lagJSON(t, "deployments", "-n", ns, "--min-age", "1h"); code != 0 {
		t.Errorf("--min-age 1h: want exit 0, got %d", code)
	}
	// The watch cache gives the same answer.
	if d, code = lagJSON(t, "deployments", "-n", ns, "--cache"); code != 1 || d.Summary.Findings != 2 {
		t.Errorf("--cache: want exit 1 with two findings, got exit %d %+v", code, d.Summary)
	}

	// A --wait that times out lists what still lags and exits 1.
	r = cluster.RV(t, "lag", "deployments", "-n", ns, "--wait", "--timeout", "2s")
	if r.Code != 1 || !strings.Contains(r.Stderr, "timed out after 2s") || !strings.Contains(r.Stdout, "deployment.apps/bravo") {
		t.Errorf("--wait --timeout 2s while paused: %s", r)
	}

	// Resume while a --wait is running: it must return as soon as the
	// controller catches up (it watches; it does not poll).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	wait := cluster.Command(ctx, "kubectl", "rv", "lag", "-n", ns, "--wait", "--timeout", "60s")
	var out strings.Builder
	wait.Stdout, wait.Stderr = &out, &out
	if err := wait.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	cluster.ResumeControllers(t)
	if err := wait.Wait(); err != nil {
		t.Fatalf("lag --wait --timeout 60s after resuming: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "waiting for ") {
		t.Errorf("--wait should say what it waits for:\n%s", out.String())
	}
}

func TestLagWatchShowsControllersCatchingUp(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "create", "deployment", "delta", "--image=registry.k8s.io/pause:3.10", "--replicas=1", "-n", ns)
	lagWaitCurrent(t, "deployments", "-n", ns)
	cluster.PauseControllers(t)
	cluster.MustKubectl(t, "scale", "deployment", "delta", "--replicas=2", "-n", ns)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := cluster.Command(ctx, "kubectl", "rv", "lag", "deployments", "-n", ns, "--watch", "--timeout", "20s")
	var stdout, stderr strings.Builder
	w.Stdout, w.Stderr = &stdout, &stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	cluster.ResumeControllers(t)
	_ = w.Wait()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sawLagging, sawCurrent bool
	for _, l := range lines {
		if strings.Contains(l, "deployment.apps/delta") && strings.Contains(l, " lagging ") {
			sawLagging = true
		}
		if sawLagging && strings.Contains(l, "deployment.apps/delta") && strings.Contains(l, " current ") {
			sawCurrent = true
		}
	}
	if !sawLagging || !sawCurrent {
		t.Errorf("--watch should show delta lagging, then current:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if w.ProcessState.ExitCode() != 0 {
		t.Errorf("--watch ended with nothing lagging: want exit 0, got %d", w.ProcessState.ExitCode())
	}
}

// lagCRD creates a namespaced CRD with a unique group and returns its
// resource; the CRD is deleted after the test.
func lagCRD(t *testing.T, kind string, statusSchema map[string]any, statusSubresource bool) schema.GroupVersionResource {
	t.Helper()
	group := fmt.Sprintf("lag%d.e2e.kubectl-rv.dev", time.Now().UnixNano())
	plural := strings.ToLower(kind) + "s"
	props := map[string]any{"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	if statusSchema != nil {
		props["status"] = statusSchema
	}
	version := map[string]any{
		"name": "v1", "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": props}},
	}
	if statusSubresource {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{version},
		},
	}}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	dyn := cluster.Dynamic(t, "e2e-setup")
	if _, err := dyn.Resource(crdGVR).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating CRD: %v", err)
	}
	t.Cleanup(func() { deleteCRD(t, plural+"."+group) })
	cluster.MustKubectl(t, "wait", "--for=condition=Established", "--timeout=60s", "crd/"+plural+"."+group)
	return schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
}

// deleteCRD deletes a CRD and waits until it is gone: the API server serves
// a CRD being deleted until its custom resources are, and a later test that
// discovered it meanwhile would see it vanish under its feet. Finalizers a
// test left on custom resources are removed first, or the CRD (and the
// namespace) would stay terminating for good.
func deleteCRD(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	dyn := cluster.Dynamic(t, "e2e-setup")
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Fatalf("reading CRD %s: %v", name, err)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if len(versions) > 0 {
		v, _ := versions[0].(map[string]any)["name"].(string)
		gvr := schema.GroupVersionResource{Group: group, Version: v, Resource: plural}
		crs, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s: %v", name, err)
		}
		for _, cr := range crs.Items {
			if len(cr.GetFinalizers()) == 0 {
				continue
			}
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			if _, err := dyn.Resource(gvr).Namespace(cr.GetNamespace()).Patch(ctx, cr.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("removing the finalizers of %s %s/%s: %v", name, cr.GetNamespace(), cr.GetName(), err)
			}
		}
	}
	cluster.MustKubectl(t, "delete", "crd", name, "--ignore-not-found", "--wait=true", "--timeout=60s")
}

func TestLagCustomResourcesConditionsAndNeverObserved(t *testing.T) {
	ns := cluster.Namespace(t)
	cond := map[string]any{"type": "object", "properties": map[string]any{
		"type": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"},
		"observedGeneration": map[string]any{"type": "integer"},
	}}
	observed := lagCRD(t, "Gizmo", map[string]any{"type": "object", "properties": map[string]any{
		"observedGeneration": map[string]any{"type": "integer"},
		"conditions":         map[string]any{"type": "array", "items": cond},
	}}, true)
	silent := lagCRD(t, "Doohickey", nil, false)

	ctx := context.Background()
	// The operator writes the status through the status subresource, as
	// "gizmo-operator".
	op := cluster.Dynamic(t, "gizmo-operator").Resource(observed).Namespace(ns)
	user := cluster.Dynamic(t, "e2e-user").Resource(observed).Namespace(ns)
	mk := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": observed.GroupVersion().String(), "kind": "Gizmo",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"size": int64(1)},
		}}
	}
	setStatus := func(name string, og, readyOG int64) {
		t.Helper()
		u, err := op.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u.Object["status"] = map[string]any{"observedGeneration": og, "conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "observedGeneration": readyOG},
			map[string]any{"type": "Synced", "status": "True", "observedGeneration": og},
		}}
		if _, err := op.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"steady", "halfway"} {
		if _, err := user.Create(ctx, mk(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		setStatus(n, 1, 1)
	}
	// A new spec for halfway: the operator observes generation 2 but its
	// Ready condition still speaks of generation 1.
	u, err := user.Get(ctx, "halfway", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"] = map[string]any{"size": int64(2)}
	if _, err := user.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	setStatus("halfway", 2, 1)

	// Objects of a type whose controller never reports observedGeneration.
	sil := cluster.Dynamic(t, "e2e-user").Resource(silent).Namespace(ns)
	if _, err := sil.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": silent.GroupVersion().String(), "kind": "Doohickey",
		"metadata": map[string]any{"name": "quiet"}, "spec": map[string]any{"a": "b"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	gizmos := observed.GroupResource().String()
	d, code := lagJSON(t, gizmos, "-n", ns)
	if code != 1 || len(d.Items) != 1 {
		t.Fatalf("want exit 1 and only halfway, got exit %d %+v", code, d.Items)
	}
	it := d.Items[0]
	if it.Name != "halfway" || it.State != "lagging" || *it.Generation != 2 || *it.ObservedGeneration != 2 || it.Lag != 1 ||
		len(it.LaggingConditions) != 1 || it.LaggingConditions[0].Type != "Ready" || it.LaggingConditions[0].ObservedGeneration != 1 ||
		it.Observer != "gizmo-operator" || it.SpecSource != "managedFields" {
		t.Errorf("halfway: %+v", it)
	}
	wantExpl := "kubectl wait --for=condition=Ready will block until the condition's observedGeneration reaches 2"
	if !strings.Contains(strings.Join(it.Explanations, "\n"), wantExpl) {
		t.Errorf("halfway explanations %q lack %q", it.Explanations, wantExpl)
	}

	// The type that never reports observedGeneration: never-observed, shown
	// and explained, but not a finding.
	r := cluster.RV(t, "lag", silent.GroupResource().String(), "-n", ns)
	if r.Code != 0 {
		t.Fatalf("never-observed objects of a silent type are not findings: %s", r)
	}
	for _, s := range []string{"doohickey." + silent.Group + "/quiet", "never-observed", "kstatus-based tools (Flux, kpt) will report this object as Current because it has no observedGeneration"} {
		if !strings.Contains(r.Stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, r.Stdout)
		}
	}

	// Both CRDs are found by discovery in the default scope.
	d, code = lagJSON(t, "-n", ns)
	found := map[string]bool{}
	for _, ty := range d.Types {
		found[ty.Resource+"."+ty.Group] = true
	}
	if code != 1 || !found[gizmos] || !found[silent.GroupResource().String()] {
		t.Errorf("default scope: exit %d, types %v", code, found)
	}

	// The operator catches up: --wait returns.
	setStatus("halfway", 2, 2)
	lagWaitCurrent(t, gizmos, "-n", ns)
}

func TestLagReadOnlyContext(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "create", "deployment", "echo", "--image=registry.k8s.io/pause:3.10", "--replicas=1", "-n", ns)
	lagWaitCurrent(t, "deployments", "-n", ns)
	d, code := lagJSON(t, "-n", ns, "--context", "rv-readonly", "--all")
	if code != 0 || len(d.Warnings) != 0 {
		t.Fatalf("read-only context: exit %d, warnings %q", code, d.Warnings)
	}
	names := map[string]string{}
	for _, it := range d.Items {
		names[it.Kind+"/"+it.Name] = it.State
	}
	if names["Deployment/echo"] != "current" {
		t.Errorf("read-only context should see the current Deployment: %v", names)
	}
	r := cluster.RV(t, "lag", "-A", "--context", "rv-readonly")
	if r.Code != 0 && r.Code != 1 || !strings.Contains(r.Stdout, "total: ") {
		t.Errorf("lag -A as the read-only user: %s", r)
	}
}

func TestLagForbiddenTypeWarnsAndGivesPartialResults(t *testing.T) {
	ns := cluster.Namespace(t)
	user := "lag-limited-" + ns
	cluster.MustKubectl(t, "create", "deployment", "foxtrot", "--image=registry.k8s.io/pause:3.10", "--replicas=1", "-n", ns)
	lagWaitCurrent(t, "deployments", "-n", ns)
	cluster.MustKubectl(t, "create", "role", "deployments-only", "--verb=get,list,watch", "--resource=deployments.apps", "-n", ns)
	cluster.MustKubectl(t, "create", "rolebinding", "deployments-only", "--role=deployments-only", "--user="+user, "-n", ns)

	r := cluster.RV(t, "lag", "deployments,replicasets", "-n", ns, "--as", user, "--all")
	if r.Code != 0 {
		t.Fatalf("partial results with nothing lagging: want exit 0, got %s", r)
	}
	if !strings.Contains(r.Stderr, "warning: replicasets.apps:") || !strings.Contains(r.Stderr, "forbidden") || !strings.Contains(r.Stderr, "partial") {
		t.Errorf("want a warning naming replicasets.apps as forbidden:\n%s", r.Stderr)
	}
	if !strings.Contains(r.Stdout, "deployment.apps/foxtrot") || !strings.Contains(r.Stdout, "[partial: ") {
		t.Errorf("want the Deployment listed and the partial type marked:\n%s", r.Stdout)
	}

	// The default scope: every type but Deployments is refused.
	d, code := lagJSON(t, "-n", ns, "--as", user)
	if code != 0 || len(d.Warnings) == 0 {
		t.Errorf("default scope as %s: exit %d, warnings %q", user, code, d.Warnings)
	}

	// A user who may list nothing: exit 3, not a crash.
	r = cluster.RV(t, "lag", "deployments", "-n", ns, "--context", "rv-nobody")
	if r.Code != 3 || !strings.Contains(r.Stderr, "forbidden") {
		t.Errorf("rv-nobody: want exit 3 naming the refusal, got %s", r)
	}
}

func TestLagBadInputExits2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"lag", "nosuchtype"}, `unknown resource type "nosuchtype"`},
		{[]string{"lag", "--min-age", "soon"}, "--min-age"},
		{[]string{"lag", "--max-lag", "-1"}, "--max-lag must be 0 or positive"},
		{[]string{"lag", "--timeout", "5s"}, "--timeout needs --wait or --watch"},
		{[]string{"lag", "--wait", "--watch"}, "cannot be combined"},
		{[]string{"lag", "deployment/web"}, "not TYPE/NAME"},
		{[]string{"lag", "-o", "csv"}, `--output "csv"`},
	} {
		r := cluster.RV(t, tc.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
			t.Errorf("kubectl rv %s: want exit 2 naming %q and no output, got %s", strings.Join(tc.args, " "), tc.want, r)
		}
	}
}

// lagGadgets creates a CRD whose objects carry status.observedGeneration
// (no status subresource, so the test writes it with the object) and two of
// its objects in ns: "steady" (generation 1, observed 1) and "behind"
// (generation 2, observed 1), labelled which=NAME. It returns the type's
// name for kubectl rv lag.
func lagGadgets(t *testing.T, ns string) string {
	t.Helper()
	gvr := lagCRD(t, "Gadget", map[string]any{"type": "object", "properties": map[string]any{
		"observedGeneration": map[string]any{"type": "integer"},
	}}, false)
	ctx := context.Background()
	ri := cluster.Dynamic(t, "gadget-operator").Resource(gvr).Namespace(ns)
	for _, name := range []string{"steady", "behind"} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": gvr.GroupVersion().String(), "kind": "Gadget",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"which": name}},
			"spec":     map[string]any{"size": int64(1)},
			"status":   map[string]any{"observedGeneration": int64(1)},
		}}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	u, err := ri.Get(ctx, "behind", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"] = map[string]any{"size": int64(2)}
	if u, err = ri.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u.GetGeneration() != 2 {
		t.Fatalf("behind: generation %d after a new spec, want 2", u.GetGeneration())
	}
	return gvr.GroupResource().String()
}

// TestLagWatchEndsOnCtrlCByWhatItFound: lag --watch runs until stopped, so
// Ctrl-C is its normal end (docs/exit-codes.md): exit 1 when an object
// lags then, 0 when none does; never 130.
func TestLagWatchEndsOnCtrlCByWhatItFound(t *testing.T) {
	ns := cluster.Namespace(t)
	gadgets := lagGadgets(t, ns)
	for _, tc := range []struct {
		which    string
		wantCode int
		stderr   string
	}{
		{which: "behind", wantCode: 1, stderr: "watch ended: 1 object lags"},
		{which: "steady", wantCode: 0, stderr: "nothing lags"},
	} {
		t.Run(tc.which, func(t *testing.T) {
			bg := cluster.StartRV(t, "lag", gadgets, "-n", ns, "-l", "which="+tc.which, "--watch")
			bg.WaitFor(t, time.Minute, "the report after the scan", func(l string) bool { return strings.HasPrefix(l, "total: ") })
			r := bg.Stop(t)
			if r.Code != tc.wantCode || strings.Contains(r.Stderr, "interrupted") || !strings.Contains(r.Stderr, tc.stderr) {
				t.Errorf("Ctrl-C on lag --watch with %s: want exit %d saying %q, not interrupted; got %s", tc.which, tc.wantCode, tc.stderr, r)
			}
		})
	}
}

// TestLagNoHeadersPrintsOnlyRows: with --no-headers standard output holds
// one line per object, for scripts; the summary and the notes go to
// standard error.
func TestLagNoHeadersPrintsOnlyRows(t *testing.T) {
	ns := cluster.Namespace(t)
	gadgets := lagGadgets(t, ns)
	r := cluster.RV(t, "lag", gadgets, "-n", ns, "-l", "which=behind", "--no-headers")
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if r.Code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], "gadget.") || !strings.Contains(lines[0], "/behind ") {
		t.Fatalf("lag --no-headers of one lagging object: want exit 1 and its row alone on stdout, got %s", r)
	}
	if !strings.Contains(r.Stderr, "total: 1 type, 1 object, 0 current, 1 lagging") {
		t.Errorf("the summary should be on stderr: %s", r)
	}
}
