//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// applyConfig is a server-side apply configuration a test wrote, kept so
// that the test can re-apply it without an item.
type applyConfig struct {
	manager     string
	subresource string
	obj         map[string]any
}

func mustYAML(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("test manifest: %v", err)
	}
	return m
}

func ssa(t *testing.T, gvr schema.GroupVersionResource, ns string, c applyConfig) {
	t.Helper()
	dyn := cluster.Dynamic(t, "e2e-"+c.manager)
	u := &unstructured.Unstructured{Object: deepCopy(c.obj)}
	var sub []string
	if c.subresource != "" {
		sub = []string{c.subresource}
	}
	if _, err := dyn.Resource(gvr).Namespace(ns).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: c.manager}, sub...); err != nil {
		t.Fatalf("server-side apply as %s: %v", c.manager, err)
	}
}

func deepCopy(m map[string]any) map[string]any {
	return runtimeDeepCopy(m).(map[string]any)
}

func runtimeDeepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = runtimeDeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = runtimeDeepCopy(e)
		}
		return out
	}
	return v
}

// dropFinalizers lets the namespace go away after the test.
func dropFinalizers(t *testing.T, ns, kind, name string) {
	t.Cleanup(func() {
		cluster.Kubectl(t, "-n", ns, "patch", kind, name, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})
}

// setUpWeb builds a Deployment written by kubectl create, client-side apply,
// two server-side-apply managers and kubectl scale (and the controllers).
func setUpWeb(t *testing.T, ns string) []applyConfig {
	t.Helper()
	cluster.MustKubectl(t, "-n", ns, "create", "deployment", "web", "--image=nginx:1.25", "--port=80")
	dropFinalizers(t, ns, "deployment", "web")
	cluster.KubectlStdin(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: front}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        args: ["-g", "daemon off;"]
`, "-n", ns, "apply", "-f", "-")
	teamA := applyConfig{manager: "team-a", obj: mustYAML(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: `+ns+`
  labels: {owner: team-a}
  finalizers: [example.com/guard]
spec:
  template:
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - {containerPort: 8080, protocol: TCP, name: alt}
        - {containerPort: 8080, protocol: UDP, name: alt-udp}
        env:
        - {name: MODE, value: a}
`)}
	teamB := applyConfig{manager: "team-b", obj: mustYAML(t, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: `+ns+`
  labels: {team: b}
spec:
  template:
    spec:
      containers:
      - name: nginx
        env:
        - {name: MODE, value: a}
        - {name: LEVEL, value: b}
`)}
	ssa(t, deploymentsGVR, ns, teamA)
	ssa(t, deploymentsGVR, ns, teamB)
	cluster.MustKubectl(t, "-n", ns, "scale", "deployment", "web", "--replicas=3")
	waitSettled(t, deploymentsGVR, ns, "web")
	return []applyConfig{teamA, teamB}
}

// setUpPod builds a Pod (nothing schedules it, so nothing else writes it)
// created by server-side apply, with a /status update and a /status apply.
func setUpPod(t *testing.T, ns string) []applyConfig {
	t.Helper()
	author := applyConfig{manager: "pod-author", obj: mustYAML(t, `apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: `+ns+`
  finalizers: [example.com/a, example.com/b]
  labels: {app: p}
spec:
  containers:
  - name: main
    image: busybox:1.36
    command: [sleep, "3600"]
    ports:
    - {containerPort: 53, protocol: UDP}
    - {containerPort: 53, protocol: TCP}
`)}
	ssa(t, podsGVR, ns, author)
	dropFinalizers(t, ns, "pod", "p")
	cs := cluster.Clientset(t, "status-writer/1.0")
	ctx := context.Background()
	pod, err := cs.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "example.com/Written", Status: corev1.ConditionTrue})
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("/status update: %v", err)
	}
	statusApplier := applyConfig{manager: "status-applier", subresource: "status", obj: mustYAML(t, `apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: `+ns+`
status:
  conditions:
  - {type: example.com/Applied, status: "True", reason: Probe}
`)}
	ssa(t, podsGVR, ns, statusApplier)
	return []applyConfig{author, statusApplier}
}

// waitSettled waits until the object stops changing (the controllers are
// done with it) for two seconds.
func waitSettled(t *testing.T, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	waitQuiet(t, gvr, ns, name, false)
}

// waitScaled is waitSettled for a scalable object whose pods can all be
// created (no rollout under way): its controller must also have reported
// every replica at the observed generation.
func waitScaled(t *testing.T, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	waitQuiet(t, gvr, ns, name, true)
}

func waitQuiet(t *testing.T, gvr schema.GroupVersionResource, ns, name string, replicas bool) {
	t.Helper()
	dyn := cluster.Dynamic(t, "e2e-reader")
	last, stable := "", 0
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if rv := u.GetResourceVersion(); rv == last {
			stable++
		} else {
			last, stable = rv, 0
		}
		return stable >= 4 && (!replicas || caughtUp(u)), nil
	})
	if err != nil {
		t.Fatalf("%s %s/%s did not settle: %v", gvr.Resource, ns, name, err)
	}
}

// caughtUp reports whether the controller of a scalable object has
// observed its generation and reported its replicas: until it has, it
// writes the status again, however long it has been quiet (on a loaded
// machine the replica set controller creates pods seconds apart). A
// Deployment in a rollout that cannot finish (no kubelet runs its pods)
// never catches up: waitSettled does not ask.
func caughtUp(u *unstructured.Unstructured) bool {
	want, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !ok {
		return true
	}
	got, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	return got == want && observed == u.GetGeneration()
}

func ownersJSON(t *testing.T, args ...string) framework.OwnersObjectReport {
	t.Helper()
	r := cluster.RV(t, append([]string{"owners", "-o", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("kubectl rv owners %s: %s", strings.Join(args, " "), r)
	}
	rep, err := framework.ParseOwnersReport(r.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "OwnersReport" || len(rep.Items) != 1 {
		t.Fatalf("want one item in an rv.kubectl-rv.dev/v1alpha1 OwnersReport, got %s %s with %d items", rep.APIVersion, rep.Kind, len(rep.Items))
	}
	return rep.Items[0]
}

// TestOwnersAttributionMatchesServerConflicts is the decisive test: for
// every field owners attributes to managers, a server-side-apply dry run
// by another manager that changes the field must conflict with exactly those
// managers; and for every list or set item owned by a server-side-apply
// manager, re-applying that manager's configuration without the item must
// remove it exactly when owners named that manager alone.
func TestOwnersAttributionMatchesServerConflicts(t *testing.T) {
	ns := cluster.Namespace(t)
	webConfigs := setUpWeb(t, ns)
	podConfigs := setUpPod(t, ns)

	for _, tc := range []struct {
		name    string
		gvr     schema.GroupVersionResource
		obj     string
		configs []applyConfig
		// frozen is a prefix of immutable fields: the API server refuses to
		// remove items there, so only value changes are checked.
		frozen string
		// minProbes and minItems guard against a check that checks nothing.
		minProbes, minItems int
		// must are attributions the setup guarantees, path -> conflict IDs.
		must map[string][]string
	}{
		{
			name: "deployment", gvr: deploymentsGVR, obj: "web", configs: webConfigs, minProbes: 30, minItems: 5,
			must: map[string][]string{
				`.spec.replicas`:                                     {"kubectl subresource=scale using apps/v1"},
				`.metadata.labels.owner`:                             {"team-a"},
				`.metadata.labels.team`:                              {"team-b"},
				`.metadata.labels.tier`:                              {"kubectl-client-side-apply using apps/v1"},
				`.metadata.finalizers[="example.com/guard"]`:         {"team-a"},
				`.spec.template.spec.containers[name="nginx"].args`:  {"kubectl-client-side-apply using apps/v1"},
				`.spec.template.spec.containers[name="nginx"].image`: {"kubectl-create using apps/v1", "team-a"},
				`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="TCP"].name`: {"team-a"},
				`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="UDP"]`:      {"team-a"},
				`.spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]`:        {"kubectl-create using apps/v1"},
				`.spec.template.spec.containers[name="nginx"].env[name="MODE"].value`:                        {"team-a", "team-b"},
				`.spec.template.spec.containers[name="nginx"].env[name="LEVEL"]`:                             {"team-b"},
				`.status.observedGeneration`: {"kube-controller-manager subresource=status using apps/v1"},
			},
		},
		{
			name: "pod", gvr: podsGVR, obj: "p", configs: podConfigs, frozen: ".spec", minProbes: 5, minItems: 3,
			must: map[string][]string{
				`.metadata.finalizers[="example.com/a"]`:                               {"pod-author"},
				`.spec.containers[name="main"].command`:                                {"pod-author"},
				`.spec.containers[name="main"].ports[containerPort=53,protocol="UDP"]`: {"pod-author"},
				`.status.conditions[type="example.com/Written"].status`:                {"status-writer subresource=status using v1"},
				`.status.conditions[type="example.com/Applied"].reason`:                {"status-applier subresource=status"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkAttribution(t, tc.gvr, ns, tc.obj, tc.configs, tc.frozen, tc.minProbes, tc.minItems, tc.must)
		})
	}
}

func checkAttribution(t *testing.T, gvr schema.GroupVersionResource, ns, name string, configs []applyConfig, frozen string, minProbes, minItems int, must map[string][]string) {
	dyn := cluster.Dynamic(t, "e2e-prober")
	ctx := context.Background()
	var lastErr string
	for attempt := 0; attempt < 3; attempt++ {
		before, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rep := ownersJSON(t, "-n", ns, gvr.Resource+"/"+name)
		problems, probed, items := probeAll(t, dyn, gvr, ns, before.Object, rep, configs, frozen)
		for path, want := range must {
			f, ok := rep.Field(path)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: owners does not list it", path))
				continue
			}
			if diff := cmp.Diff(want, conflictIDs(f.Owners)); diff != "" {
				problems = append(problems, fmt.Sprintf("%s: owners (-want +got):\n%s", path, diff))
			}
		}
		after, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if before.GetResourceVersion() != after.GetResourceVersion() {
			lastErr = fmt.Sprintf("the object changed during the check (resourceVersion %s -> %s)", before.GetResourceVersion(), after.GetResourceVersion())
			continue // a controller wrote in between: the snapshot is stale
		}
		if len(problems) > 0 {
			t.Fatalf("owners disagrees with the API server on %d field(s):\n%s", len(problems), strings.Join(problems, "\n"))
		}
		if probed < minProbes || items < minItems {
			t.Fatalf("too few checks to mean anything: %d fields probed, %d items", probed, items)
		}
		t.Logf("%s: %d owned fields; %d value changes and %d item removals agreed with the API server", name, len(rep.Fields), probed, items)
		return
	}
	t.Fatal(lastErr)
}

func conflictIDs(owners []framework.OwnersOwner) []string {
	out := make([]string, len(owners))
	for i, o := range owners {
		out[i] = o.ConflictID()
	}
	sort.Strings(out)
	return out
}

// probeAll checks every owned field of rep against the API server.
func probeAll(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, live map[string]any, rep framework.OwnersObjectReport, configs []applyConfig, frozen string) (problems []string, probed, items int) {
	t.Helper()
	paths := map[string]fieldpath.Path{}
	for _, f := range rep.Fields {
		p, err := managedfields.PathFromElements(f.Elements)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: owners printed elements it cannot read back: %v", f.Path, err))
			continue
		}
		if p.String() != f.Path {
			problems = append(problems, fmt.Sprintf("%s: the elements %v spell %s", f.Path, f.Elements, p))
		}
		paths[f.Path] = p
		if !f.Present {
			problems = append(problems, fmt.Sprintf("%s: reported absent, but the object was just written", f.Path))
		}
		if _, ok := lookup(live, p); !ok {
			problems = append(problems, fmt.Sprintf("%s: attributed to a node the object does not have", f.Path))
		}
	}
	hasOwnedChild := map[string]bool{}
	for _, p := range paths {
		for i := 1; i < len(p); i++ {
			hasOwnedChild[p[:i].String()] = true
		}
	}
	for _, f := range rep.Fields {
		p, ok := paths[f.Path]
		if !ok {
			continue
		}
		last := p[len(p)-1]
		if last.Key != nil || last.Value != nil {
			if c, ok := soleApplyConfig(f.Owners, configs); ok && (frozen == "" || !strings.HasPrefix(f.Path, frozen)) {
				if msg := probeItemRemoval(t, dyn, gvr, ns, p, f.Owners, c); msg != "" {
					problems = append(problems, msg)
				}
				items++
			}
			continue
		}
		if hasOwnedChild[f.Path] || isKeyField(p) {
			continue
		}
		body, ok := probeBody(live, p)
		if !ok {
			continue
		}
		var sub []string
		if *p[0].FieldName == "status" {
			sub = []string{"status"}
		}
		u := &unstructured.Unstructured{Object: body}
		_, err := dyn.Resource(gvr).Namespace(ns).Apply(context.Background(), u.GetName(), u,
			metav1.ApplyOptions{FieldManager: "e2e-prober", DryRun: []string{metav1.DryRunAll}}, sub...)
		probed++
		got, isConflict := framework.ApplyConflicts(err)
		if !isConflict {
			problems = append(problems, fmt.Sprintf("%s: changing it did not conflict (err %v), but owners names %v", f.Path, err, conflictIDs(f.Owners)))
			continue
		}
		if diff := cmp.Diff(map[string][]string{f.Path: conflictIDs(f.Owners)}, got); diff != "" {
			problems = append(problems, fmt.Sprintf("%s: server conflicts (-owners +server):\n%s", f.Path, diff))
		}
	}
	return problems, probed, items
}

// soleApplyConfig returns the configuration of an Apply owner the test
// wrote, if any.
func soleApplyConfig(owners []framework.OwnersOwner, configs []applyConfig) (applyConfig, bool) {
	for _, o := range owners {
		if o.Operation != "Apply" {
			continue
		}
		for _, c := range configs {
			if c.manager == o.Manager && c.subresource == o.Subresource {
				return c, true
			}
		}
	}
	return applyConfig{}, false
}

// probeItemRemoval re-applies c without the item at p (dry run): the item
// must disappear exactly when c's manager is its only owner.
func probeItemRemoval(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, p fieldpath.Path, owners []framework.OwnersOwner, c applyConfig) string {
	t.Helper()
	cfg := deepCopy(c.obj)
	if !removeItem(cfg, p) {
		return fmt.Sprintf("%s: owned by %s, but its configuration has no such item", p, c.manager)
	}
	u := &unstructured.Unstructured{Object: cfg}
	var sub []string
	if c.subresource != "" {
		sub = []string{c.subresource}
	}
	res, err := dyn.Resource(gvr).Namespace(ns).Apply(context.Background(), u.GetName(), u,
		metav1.ApplyOptions{FieldManager: c.manager, DryRun: []string{metav1.DryRunAll}}, sub...)
	if err != nil {
		return fmt.Sprintf("%s: re-applying %s's configuration without it: %v", p, c.manager, err)
	}
	_, stays := lookup(res.Object, p)
	sole := len(owners) == 1
	if stays == sole {
		return fmt.Sprintf("%s: owners names %v; without it in %s's configuration the item stays=%v", p, conflictIDs(owners), c.manager, stays)
	}
	return ""
}

// lookup resolves a path in an object, matching keyed items by their keys
// and set items by value.
func lookup(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Key != nil, pe.Value != nil:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			i := findItem(l, pe)
			if i < 0 {
				return nil, false
			}
			cur = l[i]
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		}
	}
	return cur, true
}

func findItem(l []any, pe fieldpath.PathElement) int {
	for i, it := range l {
		if pe.Value != nil {
			if reflect.DeepEqual(normalizeNumber((*pe.Value).Unstructured()), normalizeNumber(it)) {
				return i
			}
			continue
		}
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for _, f := range *pe.Key {
			if !reflect.DeepEqual(normalizeNumber(f.Value.Unstructured()), normalizeNumber(m[f.Name])) {
				match = false
			}
		}
		if match {
			return i
		}
	}
	return -1
}

func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int:
		return int64(n)
	case float64:
		if n == float64(int64(n)) {
			return int64(n)
		}
	}
	return v
}

func removeItem(cfg map[string]any, p fieldpath.Path) bool {
	parent, ok := lookup(cfg, p[:len(p)-1])
	if !ok {
		return false
	}
	l, ok := parent.([]any)
	if !ok {
		return false
	}
	i := findItem(l, p[len(p)-1])
	if i < 0 {
		return false
	}
	holder, _ := lookup(cfg, p[:len(p)-2])
	m := holder.(map[string]any)
	m[*p[len(p)-2].FieldName] = append(l[:i:i], l[i+1:]...)
	return true
}

// isKeyField reports whether p is a key field of a keyed list item:
// changing it names another item, it does not change this one.
func isKeyField(p fieldpath.Path) bool {
	if len(p) < 2 || p[len(p)-2].Key == nil || p[len(p)-1].FieldName == nil {
		return false
	}
	for _, f := range *p[len(p)-2].Key {
		if f.Name == *p[len(p)-1].FieldName {
			return true
		}
	}
	return false
}

// probeBody builds an apply configuration that holds only the path to p
// (with the keys of the list items on the way) and a changed value at p.
func probeBody(live map[string]any, p fieldpath.Path) (map[string]any, bool) {
	u := &unstructured.Unstructured{Object: live}
	body := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}}
	var cur any = body
	var lv any = live
	for i, pe := range p {
		lastElem := i == len(p)-1
		switch {
		case pe.FieldName != nil:
			m := cur.(map[string]any)
			lm, _ := lv.(map[string]any)
			lv = lm[*pe.FieldName]
			if lastElem {
				v, ok := changed(lv)
				if !ok {
					return nil, false
				}
				m[*pe.FieldName] = v
				return body, true
			}
			next, exists := m[*pe.FieldName]
			if !exists {
				if p[i+1].FieldName != nil {
					next = map[string]any{}
				} else {
					next = []any{}
				}
			}
			if p[i+1].Key != nil {
				item := map[string]any{}
				for _, f := range *p[i+1].Key {
					item[f.Name] = f.Value.Unstructured()
				}
				m[*pe.FieldName] = []any{item}
				cur = item
				continue
			}
			if p[i+1].FieldName == nil {
				return nil, false // set or indexed items cannot be changed in place
			}
			m[*pe.FieldName] = next
			cur = next
		case pe.Key != nil:
			l, _ := lv.([]any)
			j := findItem(l, pe)
			if j < 0 {
				return nil, false
			}
			lv = l[j]
		default:
			return nil, false
		}
	}
	return nil, false
}

// changed returns a different value of the same shape.
func changed(v any) (any, bool) {
	switch t := v.(type) {
	case int64:
		return t + 1, true
	case float64:
		return t + 1, true
	case bool:
		return !t, true
	case string:
		if ts, err := time.Parse(time.RFC3339, t); err == nil {
			return ts.Add(time.Second).UTC().Format(time.RFC3339), true
		}
		return t + "x", true
	case []any:
		if len(t) == 0 {
			return nil, false
		}
		out := runtimeDeepCopy(t).([]any)
		c, ok := changed(out[0])
		out[0] = c
		return out, ok
	case map[string]any:
		if len(t) == 0 {
			return nil, false
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := deepCopy(t)
		c, ok := changed(out[keys[0]])
		out[keys[0]] = c
		return out, ok
	}
	return nil, false
}

func TestOwnersViewsOnLiveDeployment(t *testing.T) {
	ns := cluster.Namespace(t)
	setUpWeb(t, ns)

	r := cluster.RV(t, "owners", "-n", ns, "deployment", "web")
	if r.Code != 0 {
		t.Fatalf("tree view: %s", r)
	}
	for _, want := range []string{"Deployment " + ns + "/web", "replicas", "kubectl (Update/scale", "team-a (Apply", "[containerPort=8080,protocol=\"TCP\"]", "hazards:", "ApplyUpdateShared"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("tree view lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = cluster.RV(t, "owners", "-n", ns, "deploy", "web", "--view", "blame")
	if r.Code != 0 {
		t.Fatalf("blame view: %s", r)
	}
	var blamed map[string]any
	if err := yaml.Unmarshal([]byte(r.Stdout), &blamed); err != nil {
		t.Fatalf("the blame view is not valid YAML: %v\n%s", err, r.Stdout)
	}
	if blamed["kind"] != "Deployment" || !strings.Contains(r.Stdout, "replicas: 3") || !strings.Contains(r.Stdout, "# kubectl (Update/scale") {
		t.Errorf("blame view should show replicas: 3 owned by kubectl/scale:\n%s", r.Stdout)
	}

	r = cluster.RV(t, "owners", "-n", ns, "deploy/web", "--view", "summary")
	if r.Code != 0 {
		t.Fatalf("summary view: %s", r)
	}
	for _, want := range []string{"MANAGER", "LAST WRITE", "kubectl-create", "kubectl-client-side-apply", "team-a", "team-b", "scale", "kube-controller-manager"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("summary view lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = cluster.RV(t, "owners", "-n", ns, "deploy/web", "--view", "table", "--field", ".spec.template.spec.containers[name=nginx].env[name=MODE]")
	if r.Code != 0 {
		t.Fatalf("table view: %s", r)
	}
	var modeOwners []string
	for _, line := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == `.spec.template.spec.containers[name="nginx"].env[name="MODE"].value` {
			modeOwners = append(modeOwners, f[1]+" "+f[len(f)-1])
		}
	}
	if diff := cmp.Diff([]string{"team-a MULTI", "team-b MULTI"}, modeOwners); diff != "" || strings.Contains(r.Stdout, "LEVEL") {
		t.Errorf("--field should narrow the table to the MODE variable, one row for each of team-a and team-b (-want +got):\n%s\n%s", diff, r.Stdout)
	}

	rep := ownersJSON(t, "-n", ns, "deploy/web", "--manager", "team-b")
	for _, f := range rep.Fields {
		found := false
		for _, o := range f.Owners {
			found = found || o.Manager == "team-b"
		}
		if !found {
			t.Errorf("--manager team-b listed %s owned by %v", f.Path, f.Owners)
		}
	}
	if len(rep.Fields) == 0 {
		t.Errorf("--manager team-b found nothing")
	}

	rep = ownersJSON(t, "-n", ns, "deploy/web", "--shared")
	for _, f := range rep.Fields {
		if len(f.Owners) < 2 {
			t.Errorf("--shared listed %s with one owner", f.Path)
		}
	}
	if _, ok := rep.Field(`.spec.template.spec.containers[name="nginx"].env[name="MODE"].value`); !ok {
		t.Errorf("--shared should list the MODE value shared by team-a and team-b: %+v", rep.Fields)
	}

	// Offline: the same object from a dump gives the same ownership.
	dump := cluster.MustKubectl(t, "-n", ns, "get", "deploy", "web", "-o", "yaml", "--show-managed-fields")
	file := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(file, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	live := ownersJSON(t, "-n", ns, "deploy/web")
	offline := ownersJSON(t, "-f", file, "--server", "https://127.0.0.1:1")
	if diff := cmp.Diff(live.Fields, offline.Fields); diff != "" {
		t.Errorf("offline ownership differs from live (-live +offline):\n%s", diff)
	}
	if !strings.HasPrefix(offline.Source, file+":") {
		t.Errorf("offline source = %q, want %s:LINE", offline.Source, file)
	}

	// Label selection across namespaces.
	r = cluster.RV(t, "owners", "deployments", "-A", "-l", "owner=team-a", "--view", "summary")
	if r.Code != 0 || !strings.Contains(r.Stdout, ns) || !strings.Contains(r.Stdout, "Deployment/web") {
		t.Errorf("owners deployments -A -l owner=team-a should list %s/web: %s", ns, r)
	}
}

func TestOwnersHazardsAndFailOnHazard(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()

	// Client-side apply, then server-side apply of the same data by another client.
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mig}\ndata: {a: \"1\", b: \"2\"}\n", "-n", ns, "apply", "-f", "-")
	ssa(t, configMapsGVR, ns, applyConfig{manager: "gitops", obj: mustYAML(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mig, namespace: "+ns+"}\ndata: {a: \"1\"}\n")})
	rep := ownersJSON(t, "-n", ns, "configmap/mig")
	if !hasHazard(rep, "ClientSideApplyMigration", ".data.a") {
		t.Errorf("want a ClientSideApplyMigration hazard on .data.a: %+v", rep.Hazards)
	}
	r := cluster.RV(t, "owners", "-n", ns, "configmap/mig", "--fail-on", "hazard")
	if r.Code != 1 || !strings.Contains(r.Stdout, "ClientSideApplyMigration") || !strings.Contains(r.Stderr, "1 hazard found (--fail-on hazard)") {
		t.Errorf("--fail-on hazard should print the hazard, say it found one and exit 1: %s", r)
	}
	r = cluster.RV(t, "owners", "-n", ns, "configmap/mig", "--fail-on-hazard", "--field", ".data.b")
	if r.Code != 0 {
		t.Errorf("--field .data.b selects no hazard, so --fail-on-hazard (the old spelling of --fail-on hazard) should pass: %s", r)
	}

	// A client without a user agent, then more than ten Update managers.
	generic := cluster.Dynamic(t, "Go-http-client/1.1")
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "busy", "namespace": ns}, "data": map[string]any{"seed": "0"}}}
	if _, err := generic.Resource(configMapsGVR).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 11; i++ {
		dyn := cluster.Dynamic(t, fmt.Sprintf("writer-%02d/1.0", i))
		patch := fmt.Sprintf(`{"data":{"k%02d":"v"}}`, i)
		if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Patch(ctx, "busy", "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rep = ownersJSON(t, "-n", ns, "cm", "busy")
	if !hasHazard(rep, "AncientChanges", "") {
		t.Errorf("eleven Update managers should leave an ancient-changes entry: %+v", rep.Entries)
	}
	var managers []string
	for _, e := range rep.Entries {
		managers = append(managers, e.Manager)
	}
	if !strings.Contains(strings.Join(managers, ","), "ancient-changes") {
		t.Errorf("entries should include ancient-changes: %v", managers)
	}
	// The generic manager is among the oldest, merged away: check it on its own object.
	if _, err := generic.Resource(configMapsGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "anon", "namespace": ns}, "data": map[string]any{"x": "1"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rep = ownersJSON(t, "-n", ns, "cm", "anon")
	if !hasHazard(rep, "GenericManager", "") {
		t.Errorf("want a GenericManager hazard for Go-http-client: %+v", rep.Hazards)
	}
}

func hasHazard(rep framework.OwnersObjectReport, typ, field string) bool {
	for _, h := range rep.Hazards {
		if h.Type != typ {
			continue
		}
		if field == "" {
			return true
		}
		for _, f := range h.Fields {
			if f == field {
				return true
			}
		}
	}
	return false
}

func TestOwnersNeverPrintsSecretValues(t *testing.T) {
	ns := cluster.Namespace(t)
	// "s3cr3t-value" base64-encoded, applied client side so that the
	// last-applied annotation holds it too.
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: s3cr3t-value}\n", "-n", ns, "apply", "-f", "-")
	encoded := "czNjcjN0LXZhbHVl"
	for _, view := range []string{"tree", "blame", "table", "summary"} {
		for _, o := range []string{"table", "json", "yaml"} {
			r := cluster.RV(t, "owners", "-n", ns, "secret/creds", "--view", view, "-o", o)
			if r.Code != 0 {
				t.Fatalf("--view %s -o %s: %s", view, o, r)
			}
			if strings.Contains(r.Stdout, encoded) || strings.Contains(r.Stdout, "s3cr3t-value") {
				t.Errorf("--view %s -o %s printed the secret value:\n%s", view, o, r.Stdout)
			}
		}
	}
	r := cluster.RV(t, "owners", "-n", ns, "secret/creds", "--view", "blame")
	if !strings.Contains(r.Stdout, "password: <hidden>") && !strings.Contains(r.Stdout, `password: "<hidden>"`) || !strings.Contains(r.Stdout, "kubectl-client-side-apply") {
		t.Errorf("the blame view should show who owns the password key but hide its value:\n%s", r.Stdout)
	}
	r = cluster.RV(t, "owners", "-n", ns, "secret/creds", "--view", "blame", "--show-secrets")
	if !strings.Contains(r.Stdout, encoded) {
		t.Errorf("--show-secrets should print the value:\n%s", r.Stdout)
	}
}

func TestOwnersBadInputExits2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noMF := write("nomf.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: default}\ndata: {a: b}\n")
	badMF := write("bad.yaml", `apiVersion: v1
kind: ConfigMap
metadata:
  name: broken
  namespace: default
  managedFields:
  - manager: ok
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"f:a": {}}}
  - manager: mangled
    operation: Update
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {"q:x": {}}}
`)
	notObj := write("list.yaml", "- a\n- b\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no managedFields", []string{"-f", noMF}, []string{noMF + ":1", "ConfigMap default/plain", "--show-managed-fields"}},
		{"invalid fieldsV1", []string{"-f", badMF}, []string{badMF + ":1", "ConfigMap default/broken", "managedFields[1]", `"mangled"`, `invalid key "q:x"`}},
		{"not an object", []string{"-f", notObj}, []string{notObj, "not a Kubernetes object"}},
		{"bad --field", []string{"-f", noMF, "--field", ".spec.containers[name=nginx"}, []string{"--field", "unclosed ["}},
		{"bad --view", []string{"-f", noMF, "--view", "graph"}, []string{"--view", "tree, blame, table, summary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cluster.RV(t, append([]string{"owners"}, tc.args...)...)
			if r.Code != 2 || r.Stdout != "" {
				t.Fatalf("want exit 2 and nothing on stdout, got %s", r)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("the error should mention %q: %s", w, r.Stderr)
				}
			}
		})
	}
}

func TestOwnersRespectsRBAC(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "-n", ns, "create", "configmap", "c", "--from-literal=a=b")
	r := cluster.RV(t, "owners", "-n", ns, "configmap/c", "--context", "rv-readonly", "--view", "table")
	if r.Code != 0 || !strings.Contains(r.Stdout, ".data.a") || !strings.Contains(r.Stdout, "kubectl-create") {
		t.Errorf("a read-only user should see the owners: %s", r)
	}
	r = cluster.RV(t, "owners", "-n", ns, "configmap/c", "--context", "rv-nobody")
	if r.Code != 3 || r.Stdout != "" {
		t.Errorf("a user without rights should get exit 3 and no report: %s", r)
	}
}

func TestOwnersFieldAcceptsServerPaths(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "-n", ns, "create", "deployment", "d", "--image=nginx:1.25")
	waitSettled(t, deploymentsGVR, ns, "d")
	// The path exactly as the table view and conflict messages print it.
	r := cluster.RV(t, "owners", "-n", ns, "deploy/d", "--view", "table", "--field", ".metadata.annotations.deployment.kubernetes.io/revision")
	if r.Code != 0 || !strings.Contains(r.Stdout, "kube-controller-manager") || strings.Count(strings.TrimSpace(r.Stdout), "\n") != 1 {
		t.Errorf("--field with the server's path format should select the one annotation: %s", r)
	}
}
