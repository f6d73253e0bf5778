//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// truthCase is one write that a user makes with kubectl -n NS -f FILE,
// predicted by both engines (kubectl rv predict, and --offline with a
// --live snapshot) and made for real, method by method, on the real API
// server: its dry run through kubectl (--dry-run=server) and the real
// write are the truth.
type truthCase struct {
	name string
	gvr  schema.GroupVersionResource
	// crd is the CRD of a custom resource, given offline with --schema.
	crd string
	// setup writes the object's history in namespace ns (nothing: the
	// write is a create). It runs again before each real write.
	setup func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, ns string)
	// manifest is the YAML written, without a namespace: kubectl's -n
	// gives it.
	manifest string
	// methods are the methods predicted (--method).
	methods []predict.Method
	// want is what the real server answers per method, by the case's
	// design: the test's check that the case shows what it is named after.
	want map[predict.Method]predict.Verdict
}

// truthManager is the field manager of every write predicted.
const truthManager = "writer"

// runTruthCase predicts c with both engines and checks each method's
// verdict, apply conflicts and clobbered fields against kubectl's server
// dry run of the verb (kubectl apply, apply --server-side, replace,
// create) and against the real write.
func runTruthCase(t *testing.T, ctx context.Context, dyn dynamic.Interface, ns string, c truthCase) {
	t.Helper()
	ri := dyn.Resource(c.gvr).Namespace(ns)
	if c.setup != nil {
		c.setup(t, ctx, ri, ns)
	}
	desired := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(c.manifest), &desired.Object); err != nil {
		t.Fatal(err)
	}
	name := desired.GetName()
	dir := t.TempDir()
	file := predictWriteFile(t, dir, "manifest.yaml", c.manifest)
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		live = nil
	} else if err != nil {
		t.Fatal(err)
	}
	// --live needs an object: for a create, the snapshot is a
	// ServiceAccount, of another kind.
	cluster.KubectlStdin(t, "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: truth-snapshot}\n", "apply", "-n", ns, "-f", "-")
	liveYAML := cluster.MustKubectl(t, "get", "serviceaccount", "truth-snapshot", "-n", ns, "-o", "yaml", "--show-managed-fields")
	if live != nil {
		b, err := yaml.Marshal(live.Object)
		if err != nil {
			t.Fatal(err)
		}
		liveYAML = string(b)
	}
	liveFile := predictWriteFile(t, dir, "live.yaml", liveYAML)
	var methods []string
	for _, m := range c.methods {
		methods = append(methods, string(m))
	}
	args := []string{"-n", ns, "-f", file, "--method", strings.Join(methods, ","), "--field-manager", truthManager, "--fail-on", "none"}
	srvRep, _ := predictReport(t, args...)
	offArgs := append(slices.Clone(args), "--offline", "--live", liveFile)
	if c.crd != "" {
		offArgs = append(offArgs, "--schema", predictWriteFile(t, dir, "crd.yaml", c.crd))
	}
	offRep, _ := predictReport(t, offArgs...)
	srv, off := methodMap(srvRep), methodMap(offRep)
	kub := truthKubectlDryRuns(t, ctx, ns, file, live, desired, c.methods)
	for _, m := range c.methods {
		sm, om := srv[m], off[m]
		if truthKey(sm) != truthKey(om) {
			t.Errorf("%s: the engines differ:\n  server  %s %s\n  offline %s %s", m, truthKey(sm), sm.Reason, truthKey(om), om.Reason)
		}
		if km, ok := kub[m]; ok && km.Code == -1 && km.Verdict != sm.Verdict {
			t.Errorf("%s: kubectl --dry-run=server refuses it as %s, predicted %s:\n  kubectl   %s\n  predicted %s", m, km.Verdict, sm.Verdict, km.Reason, sm.Reason)
		} else if ok && km.Code != -1 && truthKey(km) != truthKey(sm) {
			t.Errorf("%s: kubectl --dry-run=server answers\n  %s %s\n  predicted %s %s", m, truthKey(km), km.Reason, truthKey(sm), sm.Reason)
		}
		real := truthRealWrite(t, ctx, ri, ns, name, desired, m, c)
		if truthKey(real) != truthKey(sm) || truthKey(real) != truthKey(om) {
			t.Errorf("%s: the real write:\n  real    %s %s\n  server  %s %s\n  offline %s %s", m, truthKey(real), real.Reason, truthKey(sm), sm.Reason, truthKey(om), om.Reason)
		}
		if want, ok := c.want[m]; ok && real.Verdict != want {
			t.Errorf("%s: the real write is %s, the case was built for %s (%s)", m, real.Verdict, want, real.Reason)
		}
	}
}

// truthKey is what two answers to one write must share: the verdict, the
// fields in conflict and the clobbered fields, with their owners, whether
// the write changes nothing or bumps the generation, and the fields it
// changes (but for the uid and creationTimestamp a create gets, which
// the offline engine does not list: docs/predict.md, Known limits).
func truthKey(m predict.MethodResult) string {
	var changed []string
	for _, c := range m.Changed {
		if c.Path != ".metadata.uid" && c.Path != ".metadata.creationTimestamp" {
			changed = append(changed, c.Path)
		}
	}
	slices.Sort(changed)
	return fmt.Sprintf("%s conflicts %s clobbered %s no-op %v generation bumped %v changed %s", m.Verdict, conflictKey(m), clobberKey(m), m.NoOp, m.GenerationBumped, changed)
}

// truthKubectlDryRuns runs the kubectl verb of each of methods that has
// one with --dry-run=server, and returns its answer as predict sees it:
// a success analyzed as predict analyzes a write's result, a refusal as
// the verdict kubectl's error says (Code -1: nothing else is known).
func truthKubectlDryRuns(t *testing.T, ctx context.Context, ns, file string, live, desired *unstructured.Unstructured, methods []predict.Method) map[predict.Method]predict.MethodResult {
	t.Helper()
	dry := []string{"-n", ns, "-f", file, "--dry-run=server", "-o", "json", "--show-managed-fields", "--field-manager", truthManager}
	verbs := map[predict.Method][]string{
		predict.ClientApply:     {"apply"},
		predict.ServerSideApply: {"apply", "--server-side"},
		predict.Replace:         {"replace"},
	}
	out := map[predict.Method]predict.MethodResult{}
	in := predict.Input{Ref: predict.ObjectRef{APIVersion: desired.GetAPIVersion(), Kind: desired.GetKind(), Namespace: ns, Name: desired.GetName()}, Desired: desired}
	for _, m := range methods {
		verb, ok := verbs[m]
		if !ok {
			continue
		}
		r := cluster.Kubectl(t, append(slices.Clone(verb), dry...)...)
		if r.Code != 0 {
			// Code -1: only the verdict is known.
			out[m] = predict.MethodResult{Method: m, Verdict: kubectlVerdict(r.Stderr), Reason: r.Stderr, Code: -1}
			continue
		}
		cfg := predict.Config{Methods: []predict.Method{m}, FieldManager: truthManager}
		out[m] = predictOne(t, ctx, cfg, in, answered{live: live, out: decodeObject(t, r.Stdout)})
	}
	return out
}

// kubectlVerdict is the verdict kubectl's error message says.
func kubectlVerdict(stderr string) predict.Verdict {
	switch {
	case strings.Contains(stderr, "Apply failed with"):
		return predict.ApplyConflict
	case strings.Contains(stderr, "the object has been modified"):
		return predict.Conflict
	case strings.Contains(stderr, "is invalid") || strings.Contains(stderr, "BadRequest"):
		return predict.Invalid
	case strings.Contains(stderr, "NotFound") || strings.Contains(stderr, "not found"):
		return predict.NotFound
	}
	return predict.ServerError
}

// truthRealWrite makes method m's write for real on the object as the
// case's setup leaves it, and returns what it did; then it deletes the
// object and writes its history again, for the next method.
func truthRealWrite(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, ns, name string, desired *unstructured.Unstructured, m predict.Method, c truthCase) predict.MethodResult {
	t.Helper()
	in := predict.Input{Ref: predict.ObjectRef{APIVersion: desired.GetAPIVersion(), Kind: desired.GetKind(), Namespace: ns, Name: name}, Desired: desired.DeepCopy()}
	cfg := predict.Config{Methods: []predict.Method{m}, FieldManager: truthManager}
	got := predictOne(t, ctx, cfg, in, persisting{ri: ri, name: name})
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := ri.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%s/%s is still there 30s after its deletion (%v)", c.gvr.Resource, name, err)
		}
	}
	if c.setup != nil {
		c.setup(t, ctx, ri, ns)
	}
	return got
}

// truthApplyMethods are the methods of a manifest that create an object
// that does not exist: the applies, and kubectl's apply verbs.
var truthApplyMethods = []predict.Method{predict.Apply, predict.ApplyForce, predict.ClientApply, predict.ServerSideApply}

// truthGadgetCRD is a namespaced custom resource.
var truthGadgetCRD = crdManifest("truth.example.com", "Gadget", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          size: {type: integer}
`)

// TestPredictTruthCreateInDefaultNamespace predicts creates whose
// manifest names no namespace, the namespace coming from kubectl's -n: a
// ConfigMap and a custom resource, for every method that creates (the
// applies and kubectl's apply verbs), then the other methods (a 404). The
// server creates the object in -n's namespace; the offline engine must
// too, not refuse it for a missing metadata.namespace.
func TestPredictTruthCreateInDefaultNamespace(t *testing.T) {
	ns := cluster.Namespace(t)
	installCRD(t, truthGadgetCRD)
	dyn := cluster.Dynamic(t, "truth2")
	ctx := context.Background()
	created := map[predict.Method]predict.Verdict{predict.Apply: predict.OK, predict.ApplyForce: predict.OK, predict.ClientApply: predict.OK, predict.ServerSideApply: predict.OK}
	methods := append(slices.Clone(truthApplyMethods), predict.Update, predict.MergePatch, predict.Replace)
	for _, c := range []truthCase{
		{name: "configmap", gvr: predictCMGVR, methods: methods, want: created,
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh, labels: {app: a}}\ndata: {a: '1'}\n"},
		{name: "custom resource", gvr: schema.GroupVersionResource{Group: "truth.example.com", Version: "v1", Resource: "gadgets"},
			crd: truthGadgetCRD, methods: methods, want: created,
			manifest: "apiVersion: truth.example.com/v1\nkind: Gadget\nmetadata: {name: fresh}\nspec: {size: 2}\n"},
	} {
		t.Run(c.name, func(t *testing.T) { runTruthCase(t, ctx, dyn, ns, c) })
	}
}

// truthEveryMethod is every method of a manifest: the HTTP methods and
// kubectl's verbs.
var truthEveryMethod = append(slices.Clone(predict.AllMethods), predict.ClientApply, predict.ServerSideApply, predict.Replace, predict.Edit)

// truthApply server-side applies manifest (YAML) as manager, forced.
func truthApply(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, manager, manifest string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	b, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	force := true
	if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: manager, Force: &force}); err != nil {
		t.Fatalf("%s's apply: %v", manager, err)
	}
}

// TestPredictTruthSecretStringData predicts writes of a Secret whose
// manifest sets a key with stringData, where another manager owns the
// key in data: the server merges stringData into data before it stores
// the object, so every method but the applies overwrites the other
// manager's .data.KEY (a clobber), and the applies own .stringData.KEY.
func TestPredictTruthSecretStringData(t *testing.T) {
	ns := cluster.Namespace(t)
	dyn := cluster.Dynamic(t, "truth2")
	ctx := context.Background()
	secretGVR := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	owned := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {token: b2xk, user: YWRtaW4=}\n"
	// The manifest keeps data as it was read and sets the token anew with
	// stringData.
	runTruthCase(t, ctx, dyn, ns, truthCase{
		name: "stringData", gvr: secretGVR, methods: truthEveryMethod,
		setup: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, ns string) {
			truthApply(t, ctx, ri, "vault", owned)
		},
		manifest: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {token: b2xk, user: YWRtaW4=}\nstringData: {token: new}\n",
		want:     map[predict.Method]predict.Verdict{predict.Update: predict.Clobber, predict.MergePatch: predict.Clobber, predict.Replace: predict.Clobber, predict.ClientApply: predict.Clobber},
	})
}

// TestPredictTruthServiceAccountAlias predicts writes of a Deployment
// whose pod template names its service account with the deprecated
// serviceAccount as well as serviceAccountName: the server reconciles the
// two (serviceAccountName wins, serviceAccount becomes its copy), so a
// manifest whose stale serviceAccount differs changes nothing, and one
// with serviceAccount alone sets serviceAccountName.
func TestPredictTruthServiceAccountAlias(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.PauseControllers(t)
	dyn := cluster.Dynamic(t, "truth2")
	ctx := context.Background()
	deploy := func(name, sa string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      ` + sa + `
      containers: [{name: app, image: "app:1"}]
`
	}
	// platform creates the Deployment (an update: it owns every field
	// stored, serviceAccount too).
	setup := func(name string) func(*testing.T, context.Context, dynamic.ResourceInterface, string) {
		return func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, _ string) {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(deploy(name, "serviceAccountName: runner")), &u.Object); err != nil {
				t.Fatal(err)
			}
			if _, err := ri.Create(ctx, u, metav1.CreateOptions{FieldManager: "platform"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []truthCase{
		{name: "a stale serviceAccount beside serviceAccountName", gvr: predictDeployGVR, methods: truthEveryMethod, setup: setup("both"),
			manifest: deploy("both", "serviceAccount: builder\n      serviceAccountName: runner"),
			want:     map[predict.Method]predict.Verdict{predict.Update: predict.OK, predict.MergePatch: predict.OK, predict.Replace: predict.OK}},
		{name: "serviceAccount alone", gvr: predictDeployGVR, methods: truthEveryMethod, setup: setup("alone"),
			manifest: deploy("alone", "serviceAccount: builder"),
			want:     map[predict.Method]predict.Verdict{predict.Update: predict.Clobber}},
	} {
		t.Run(c.name, func(t *testing.T) { runTruthCase(t, ctx, dyn, ns, c) })
	}
}

// truthTwoVersionCRD is a custom resource served at v1 (stored) and
// v1beta1, with the same schema and no conversion webhook: the API server
// converts between them by changing apiVersion only.
const truthTwoVersionCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: dials.truthversions.example.com}
spec:
  group: truthversions.example.com
  names: {kind: Dial, plural: dials, singular: dial}
  scope: Namespaced
  conversion: {strategy: None}
  versions:
  - name: v1
    served: true
    storage: true
    schema: &schema
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, maximum: 10}
              mode: {type: string}
  - name: v1beta1
    served: true
    storage: false
    schema: *schema
`

// TestPredictTruthCustomResourceVersions predicts writes of a custom
// resource at v1 whose managedFields are at v1beta1 (its other manager
// wrote through v1beta1): the field manager converts the object to each
// entry's version, which for a CRD without a conversion webhook only
// changes apiVersion. A server-side apply of another manager's field
// conflicts (409), one of a value over the schema's maximum is refused
// (422), one of the manager's own fields succeeds.
func TestPredictTruthCustomResourceVersions(t *testing.T) {
	ns := cluster.Namespace(t)
	installCRD(t, truthTwoVersionCRD)
	dyn := cluster.Dynamic(t, "truth2")
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: "truthversions.example.com", Version: "v1", Resource: "dials"}
	beta := gvr
	beta.Version = "v1beta1"
	dial := func(version, name, spec string) string {
		return "apiVersion: truthversions.example.com/" + version + "\nkind: Dial\nmetadata: {name: " + name + "}\nspec: " + spec + "\n"
	}
	setup := func(name string) func(*testing.T, context.Context, dynamic.ResourceInterface, string) {
		return func(t *testing.T, ctx context.Context, _ dynamic.ResourceInterface, ns string) {
			truthApply(t, ctx, dyn.Resource(beta).Namespace(ns), "legacy", dial("v1beta1", name, "{size: 1, mode: slow}"))
		}
	}
	for _, c := range []truthCase{
		{name: "another manager's field", gvr: gvr, crd: truthTwoVersionCRD, methods: truthEveryMethod, setup: setup("taken"),
			manifest: dial("v1", "taken", "{size: 2, mode: slow}"),
			want:     map[predict.Method]predict.Verdict{predict.Apply: predict.ApplyConflict, predict.ServerSideApply: predict.ApplyConflict, predict.Update: predict.Clobber}},
		{name: "over the maximum", gvr: gvr, crd: truthTwoVersionCRD, methods: truthEveryMethod, setup: setup("big"),
			manifest: dial("v1", "big", "{size: 20, mode: slow}"),
			want:     map[predict.Method]predict.Verdict{predict.ApplyForce: predict.Invalid, predict.Update: predict.Invalid}},
		{name: "a field of its own", gvr: gvr, crd: truthTwoVersionCRD, methods: []predict.Method{predict.Apply, predict.ApplyForce, predict.ServerSideApply}, setup: setup("own"),
			manifest: "apiVersion: truthversions.example.com/v1\nkind: Dial\nmetadata: {name: own, labels: {team: a}}\n",
			want:     map[predict.Method]predict.Verdict{predict.Apply: predict.OK, predict.ServerSideApply: predict.OK}},
	} {
		t.Run(c.name, func(t *testing.T) { runTruthCase(t, ctx, dyn, ns, c) })
	}
}
