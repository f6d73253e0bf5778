//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

var caGizmoCRD = crdManifest("clientapply.example.com", "Gizmo", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          size: {type: integer}
          mode: {type: string}
          tags: {type: array, items: {type: string}}
          settings: {type: object, additionalProperties: {type: string}}
`)

var caGizmoGVR = schema.GroupVersionResource{Group: "clientapply.example.com", Version: "v1", Resource: "gizmos"}

// caCase is one client-side apply: how the object came to be, the manifest
// applied then, and what the case was built to show (the expectations
// come from the case's design, never from kubectl-rv).
type caCase struct {
	name string
	gvr  schema.GroupVersionResource
	// history writes the object before the apply (nothing: it does not
	// exist).
	history func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface)
	// manifest is the YAML kubectl applies, without namespace (kubectl
	// sets -n's).
	manifest string
	// wantDeleted are the fields that left the manifest and the apply
	// deletes; wantClobbered the other managers' fields it overwrites or
	// removes, as clobberKey writes them ([] for none).
	wantDeleted   []string
	wantClobbered string
	// wantWarning says kubectl warns of a missing annotation.
	wantWarning bool
	wantAction  string
}

// kubectlApply client-side applies a manifest with the real kubectl.
func kubectlApply(t *testing.T, ns, manifest string, extra ...string) {
	t.Helper()
	cluster.KubectlStdin(t, manifest, append([]string{"apply", "-n", ns, "-f", "-"}, extra...)...)
}

// ctrlUpdate is another manager ("ctrl") editing the object with an update.
func ctrlUpdate(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface, name, manager string, edit func(u *unstructured.Unstructured)) {
	t.Helper()
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	edit(u)
	if _, err := ri.Update(ctx, u, metav1.UpdateOptions{FieldManager: manager}); err != nil {
		t.Fatal(err)
	}
}

const caWeb = `apiVersion: apps/v1
kind: Deployment
metadata: {name: ca-web, labels: {app: web, tier: front}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1"}
      - {name: sidecar, image: "busybox:1"}
`

func caCases(ns string) []caCase {
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: " + data + "\n"
	}
	gizmo := func(spec string) string {
		return "apiVersion: clientapply.example.com/v1\nkind: Gizmo\nmetadata: {name: ca-gizmo}\nspec: " + spec + "\n"
	}
	cmGVR := predictCMGVR
	return []caCase{{
		name: "a key left the manifest", gvr: cmGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			kubectlApply(t, ns, cm("ca-dropped", "{a: '1', b: '1'}"))
		},
		manifest: cm("ca-dropped", "{a: '2'}"), wantDeleted: []string{".data.b"}, wantClobbered: "[]", wantAction: predict.ActionPatch,
	}, {
		name: "another manager's key kept", gvr: cmGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			kubectlApply(t, ns, cm("ca-other", "{a: '1'}"))
			ctrlUpdate(t, ctx, ri, "ca-other", "ctrl", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "1", "data", "c")
			})
		},
		manifest: cm("ca-other", "{a: '1', b: '2'}"), wantClobbered: "[]", wantAction: predict.ActionPatch,
	}, {
		name: "another manager's value overwritten", gvr: cmGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			kubectlApply(t, ns, cm("ca-clobber", "{a: '1', b: '1'}"))
			ctrlUpdate(t, ctx, ri, "ca-clobber", "ctrl", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "x", "data", "a")
			})
		},
		manifest: cm("ca-clobber", "{a: '1'}"), wantDeleted: []string{".data.b"}, wantClobbered: "[ctrl/Update:.data.a]", wantAction: predict.ActionPatch,
	}, {
		name: "no annotation (kubectl create)", gvr: cmGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			cluster.KubectlStdin(t, cm("ca-created", "{a: '1', b: '1'}"), "create", "-n", ns, "-f", "-")
		},
		manifest: cm("ca-created", "{a: '2'}"), wantWarning: true, wantClobbered: "[kubectl-create/Update:.data.a]", wantAction: predict.ActionPatch,
	}, {
		name: "unchanged", gvr: cmGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			kubectlApply(t, ns, cm("ca-same", "{a: '1'}"))
		},
		manifest: cm("ca-same", "{a: '1'}"), wantClobbered: "[]", wantAction: predict.ActionUnchanged,
	}, {
		name: "does not exist", gvr: cmGVR, history: func(*testing.T, context.Context, dynamic.ResourceInterface) {},
		manifest: cm("ca-new", "{a: '1', b: null}"), wantClobbered: "[]", wantAction: predict.ActionCreate,
	}, {
		name: "replicas and a container left the manifest, the autoscaler's replicas", gvr: predictDeployGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			kubectlApply(t, ns, caWeb)
			ctrlUpdate(t, ctx, ri, "ca-web", "hpa", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
			})
		},
		manifest:    strings.Replace(strings.Replace(caWeb, "  replicas: 2\n", "", 1), "      - {name: sidecar, image: \"busybox:1\"}\n", "", 1),
		wantDeleted: []string{`.spec.replicas`, `.spec.template.spec.containers[name="sidecar"].image`, `.spec.template.spec.containers[name="sidecar"].name`},
		// The server defaults replicas back to 1, which the autoscaler had set.
		wantClobbered: "[hpa/Update:.spec.replicas]", wantAction: predict.ActionPatch,
	}, {
		name: "a custom resource (JSON merge patch)", gvr: caGizmoGVR,
		history: func(t *testing.T, ctx context.Context, ri dynamic.ResourceInterface) {
			kubectlApply(t, ns, gizmo("{size: 2, mode: fast, tags: [t1, t2]}"))
			ctrlUpdate(t, ctx, ri, "ca-gizmo", "ctrl", func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"k": "v"}, "spec", "settings")
			})
		},
		manifest: gizmo("{size: 3, tags: [t1]}"), wantDeleted: []string{".spec.mode"}, wantClobbered: "[]", wantAction: predict.ActionPatch,
	}}
}

// answered is an executor that answers the write with the object kubectl
// got from the server: Predict's analysis of the server's own answer.
type answered struct {
	live, out *unstructured.Unstructured
}

func (a answered) Engine() string { return "kubectl" }

func (a answered) Live(context.Context) (*unstructured.Unstructured, error) {
	if a.live == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	return a.live, nil
}

func (a answered) Update(context.Context, *unstructured.Unstructured, predict.Write) (*unstructured.Unstructured, error) {
	return a.out, nil
}

func (a answered) Patch(context.Context, types.PatchType, []byte, predict.Write) (*unstructured.Unstructured, error) {
	return a.out, nil
}

func (a answered) Create(context.Context, *unstructured.Unstructured, predict.Write) (*unstructured.Unstructured, error) {
	return a.out, nil
}

// TestPredictFidelityClientApply predicts kubectl apply (client side) with
// both engines for cases with and without the last-applied annotation,
// fields dropped from the manifest, fields another manager added or
// changed, a create, an unchanged manifest and a custom resource, and
// checks each prediction against what the real kubectl's apply
// --dry-run=server -o json answers and what its real apply stores: the
// changed fields, the fields deleted because they left the manifest, the
// other managers' fields overwritten or removed, and the annotation.
func TestPredictFidelityClientApply(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.PauseControllers(t)
	dyn := cluster.Dynamic(t, "clientapply")
	ctx := context.Background()
	gizmoTC, gizmoOffline := installCRD(t, caGizmoCRD)
	for _, c := range caCases(ns) {
		t.Run(c.name, func(t *testing.T) {
			ri := dyn.Resource(c.gvr).Namespace(ns)
			c.history(t, ctx, ri)
			desired := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(c.manifest), &desired.Object); err != nil {
				t.Fatal(err)
			}
			name := desired.GetName()
			live, err := ri.Get(ctx, name, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			} else if err != nil {
				live = nil
			}
			cfg := predict.Config{Methods: []predict.Method{predict.ClientApply}, DefaultManager: "kubectl-rv"}
			engine := offlineEngine(nil)
			if c.gvr == caGizmoGVR {
				cfg.TypeConverter, engine = gizmoTC, gizmoOffline
			}
			in := predict.Input{Ref: predict.ObjectRef{APIVersion: desired.GetAPIVersion(), Kind: desired.GetKind(), Namespace: ns, Name: name}, Desired: desired}
			srv := predictOne(t, ctx, cfg, in, predict.Server(ri, name))
			ex, err := engine.Executor(desired.GroupVersionKind(), name, live)
			if err != nil {
				t.Fatal(err)
			}
			off := predictOne(t, ctx, cfg, in, ex)

			// The real kubectl: a server dry run, then the real apply.
			dry := cluster.Run(t, strings.NewReader(c.manifest), "kubectl", "apply", "-n", ns, "-f", "-", "--dry-run=server", "-o", "json", "--show-managed-fields")
			if dry.Code != 0 {
				t.Fatalf("kubectl apply --dry-run=server: %s", dry)
			}
			if warned := strings.Contains(dry.Stderr, "is missing the kubectl.kubernetes.io/last-applied-configuration annotation"); warned != c.wantWarning {
				t.Errorf("kubectl warned of a missing annotation: %v, want %v (stderr %q)", warned, c.wantWarning, dry.Stderr)
			}
			dryObj := decodeObject(t, dry.Stdout)
			kub := predictOne(t, ctx, cfg, in, answered{live: live, out: dryObj})
			real := cluster.Run(t, strings.NewReader(c.manifest), "kubectl", "apply", "-n", ns, "-f", "-", "-o", "json", "--show-managed-fields")
			if real.Code != 0 {
				t.Fatalf("kubectl apply: %s", real)
			}
			stored := predictOne(t, ctx, cfg, in, answered{live: live, out: decodeObject(t, real.Stdout)})

			for _, got := range []struct {
				what string
				m    predict.MethodResult
			}{{"server engine", srv}, {"offline engine", off}, {"the real apply", stored}} {
				if diff := cmp.Diff(comparable(kub), comparable(got.m)); diff != "" {
					t.Errorf("%s against kubectl apply --dry-run=server (-kubectl +%s):\n%s", got.what, got.what, diff)
				}
			}
			if c.wantAction != predict.ActionUnchanged {
				if want, got := dryObj.GetAnnotations()[predict.LastAppliedAnnotation], off.ClientApply.LastApplied; got != want {
					t.Errorf("the annotation becomes %q, the offline engine says %q", want, got)
				}
			}
			if diff := cmp.Diff(c.wantDeleted, kub.ClientApply.Deleted); diff != "" {
				t.Errorf("deleted fields (-case +kubectl):\n%s", diff)
			}
			if got := clobberKey(kub); got != c.wantClobbered {
				t.Errorf("clobbered %q, the case was built to clobber %q", got, c.wantClobbered)
			}
			if kub.ClientApply.Action != c.wantAction || kub.ClientApply.AnnotationMissing != c.wantWarning {
				t.Errorf("action %s (annotation missing %v), want %s (%v)", kub.ClientApply.Action, kub.ClientApply.AnnotationMissing, c.wantAction, c.wantWarning)
			}
		})
	}
}

// predictOne predicts the one configured method.
func predictOne(t *testing.T, ctx context.Context, cfg predict.Config, in predict.Input, ex predict.Executor) predict.MethodResult {
	t.Helper()
	res, err := predict.Predict(ctx, cfg, in, ex)
	if err != nil {
		t.Fatalf("%s: %v", ex.Engine(), err)
	}
	if len(res.Methods) != 1 {
		t.Fatalf("%s: %d methods", ex.Engine(), len(res.Methods))
	}
	return res.Methods[0]
}

// comparable is what two predictions of one write must share.
func comparable(m predict.MethodResult) predict.MethodResult {
	m.Request = ""
	return m
}

func decodeObject(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("decoding kubectl's output: %v\n%s", err, js)
	}
	return u
}

// TestPredictCSAUpgradeAgainstServer predicts server-side applies of
// ConfigMaps last applied client-side, with both engines, and checks them
// against the real kubectl apply --server-side: with kubectl's own manager
// it succeeds, kubectl upgrades the managedFields (no client-side apply
// entry is left) and the key that left the manifest is deleted; with
// another manager a changed value conflicts with kubectl-client-side-apply
// (the 409 kubectl prints), --force-conflicts takes it, and the
// annotation goes too.
func TestPredictCSAUpgradeAgainstServer(t *testing.T) {
	ns := cluster.Namespace(t)
	dyn := cluster.Dynamic(t, "csaupgrade")
	ctx := context.Background()
	ri := dyn.Resource(predictCMGVR).Namespace(ns)
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: " + data + "\n"
	}
	for _, c := range []struct {
		name, manager, first, manifest string
		wantConflicts, wantDeleted     []string
	}{
		{"kubectl, a key dropped", "kubectl", "{a: '1', b: '1'}", "{a: '1'}", nil, []string{".data.b"}},
		{"another manager, a changed value", "ci", "{a: '1', b: '1'}", "{a: '2', b: '1'}",
			[]string{".data.a"}, []string{".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "csa-" + c.manager
			kubectlApply(t, ns, cm(name, c.first))
			live, err := ri.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			desired := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(cm(name, c.manifest)), &desired.Object); err != nil {
				t.Fatal(err)
			}
			desired.SetNamespace(ns)
			in := predict.Input{Ref: predict.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}, Desired: desired}
			cfg := predict.Config{FieldManager: c.manager, Methods: []predict.Method{predict.Apply}}
			ex, err := offlineEngine(nil).Executor(desired.GroupVersionKind(), name, live)
			if err != nil {
				t.Fatal(err)
			}
			srv, off := predictOne(t, ctx, cfg, in, predict.Server(ri, name)), predictOne(t, ctx, cfg, in, ex)
			if diff := cmp.Diff(srv.CSAUpgrade, off.CSAUpgrade); diff != "" {
				t.Errorf("the engines differ (-server +offline):\n%s", diff)
			}
			u := srv.CSAUpgrade
			if u == nil {
				t.Fatalf("no upgrade predicted: %+v", srv)
			}
			if diff := cmp.Diff(c.wantConflicts, u.Conflicts); diff != "" {
				t.Errorf("conflicts with kubectl-client-side-apply (-case +predicted):\n%s", diff)
			}
			args := []string{"apply", "--server-side", "-n", ns, "-f", "-", "-o", "json", "--show-managed-fields"}
			if c.manager != "kubectl" {
				args = append(args, "--field-manager", c.manager)
			}
			r := cluster.Run(t, strings.NewReader(cm(name, c.manifest)), "kubectl", args...)
			for _, f := range c.wantConflicts {
				if r.Code == 0 || !strings.Contains(r.Stderr, `conflict with "kubectl-client-side-apply"`) || !strings.Contains(r.Stderr, f) {
					t.Fatalf("kubectl apply --server-side: want a conflict on %s with kubectl-client-side-apply: %s", f, r)
				}
			}
			if len(c.wantConflicts) > 0 {
				r = cluster.Run(t, strings.NewReader(cm(name, c.manifest)), "kubectl", append(args, "--force-conflicts")...)
			}
			if r.Code != 0 {
				t.Fatalf("kubectl apply --server-side: %s", r)
			}
			after := decodeObject(t, r.Stdout)
			for _, e := range after.GetManagedFields() {
				if e.Manager == predict.ClientApplyManager {
					t.Errorf("kubectl left a %s entry: the managedFields were not upgraded", e.Manager)
				}
			}
			for _, f := range u.Deleted {
				if hasField(after, f) {
					t.Errorf("predicted deleted, but %s is still there", f)
				}
			}
			if diff := cmp.Diff(c.wantDeleted, u.Deleted); diff != "" {
				t.Errorf("deleted (-case +predicted):\n%s", diff)
			}
			if !strings.Contains(u.Advice, "--force-conflicts") && len(c.wantConflicts) > 0 {
				t.Errorf("the advice does not name --force-conflicts: %s", u.Advice)
			}
		})
	}
}

// hasField reports whether u has the field of a path in server style
// (.data.b, .metadata.annotations.KEY).
func hasField(u *unstructured.Unstructured, path string) bool {
	if k, ok := strings.CutPrefix(path, ".metadata.annotations."); ok {
		_, found := u.GetAnnotations()[k]
		return found
	}
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, strings.Split(strings.TrimPrefix(path, "."), ".")...)
	return found
}

// TestPredictKubectlVerbsAgainstKubectl predicts kubectl's verbs (--method
// kubectl) on a Deployment last applied client-side whose replicas an
// autoscaler took, for a manifest that changes the image and drops a
// label, and checks each verb's prediction by both engines against the
// real kubectl command's server dry run (kubectl apply, apply
// --server-side, replace, patch) or, for kubectl edit (which has no dry
// run), its real write: the verdict, the manager, the changed fields and
// the clobbered fields.
func TestPredictKubectlVerbsAgainstKubectl(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.PauseControllers(t)
	dyn := cluster.Dynamic(t, "verbs")
	ctx := context.Background()
	ri := dyn.Resource(predictDeployGVR).Namespace(ns)
	web := strings.ReplaceAll(caWeb, "ca-web", "verbs")
	kubectlApply(t, ns, web)
	ctrlUpdate(t, ctx, ri, "verbs", "hpa", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
	})
	manifest := strings.Replace(strings.Replace(web, `"nginx:1"`, `"nginx:2"`, 1), ", tier: front", "", 1)
	desired := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &desired.Object); err != nil {
		t.Fatal(err)
	}
	live, err := ri.Get(ctx, "verbs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := predict.Input{Ref: predict.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "verbs"}, Desired: desired}
	ms, err := predict.ParseMethods([]string{"kubectl"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := predict.Config{Methods: ms}
	srv, err := predict.Predict(ctx, cfg, in, predict.Server(ri, "verbs"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := offlineEngine(nil).Executor(desired.GroupVersionKind(), "verbs", live)
	if err != nil {
		t.Fatal(err)
	}
	off, err := predict.Predict(ctx, cfg, in, ex)
	if err != nil {
		t.Fatal(err)
	}
	file := predictWriteFile(t, t.TempDir(), "web.yaml", manifest)
	dry := []string{"-n", ns, "--dry-run=server", "-o", "json", "--show-managed-fields"}
	commands := map[predict.Method][]string{
		predict.ClientApply:     append([]string{"apply", "-f", file}, dry...),
		predict.ServerSideApply: append([]string{"apply", "--server-side", "-f", file}, dry...),
		predict.Replace:         append([]string{"replace", "-f", file}, dry...),
	}
	for i, sm := range srv.Methods {
		om := off.Methods[i]
		if diff := cmp.Diff(verbKey(sm), verbKey(om)); diff != "" {
			t.Errorf("%s: the engines differ (-server +offline):\n%s", sm.Method, diff)
		}
		args, ok := commands[sm.Method]
		if !ok {
			continue
		}
		r := cluster.Kubectl(t, args...)
		if sm.Verdict == predict.ApplyConflict {
			if r.Code == 0 || !strings.Contains(r.Stderr, "Apply failed with") {
				t.Errorf("%s: predicted an apply conflict, kubectl %s: %s", sm.Method, strings.Join(args, " "), r)
			}
			continue
		}
		if r.Code != 0 {
			t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r)
		}
		kub := predictOne(t, ctx, predict.Config{Methods: []predict.Method{sm.Method}}, in, answered{live: live, out: decodeObject(t, r.Stdout)})
		if diff := cmp.Diff(verbKey(kub), verbKey(sm)); diff != "" {
			t.Errorf("%s against kubectl %s (-kubectl +predicted):\n%s", sm.Method, args[0], diff)
		}
	}
	// kubectl edit saving the manifest's change: its editor copies in the
	// live object with the new image.
	edited := live.DeepCopy()
	edited.SetManagedFields(nil)
	cs, _, _ := unstructured.NestedSlice(edited.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:2"
	_ = unstructured.SetNestedSlice(edited.Object, cs, "spec", "template", "spec", "containers")
	js, err := edited.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	editFile := predictWriteFile(t, t.TempDir(), "edited.json", string(js))
	cfg.Methods = []predict.Method{predict.Edit}
	predicted := predictOne(t, ctx, cfg, predict.Input{Ref: in.Ref, Desired: edited}, predict.Server(ri, "verbs"))
	r := cluster.Run(t, nil, "env", "EDITOR=cp "+editFile, "kubectl", "edit", "deployment/verbs", "-n", ns, "-o", "json", "--show-managed-fields")
	if r.Code != 0 {
		t.Fatalf("kubectl edit: %s", r)
	}
	kub := predictOne(t, ctx, cfg, predict.Input{Ref: in.Ref, Desired: edited}, answered{live: live, out: decodeObject(t, r.Stdout)})
	if diff := cmp.Diff(verbKey(kub), verbKey(predicted)); diff != "" || predicted.Manager != "kubectl-edit" {
		t.Errorf("edit by %s against kubectl edit (-kubectl +predicted):\n%s", predicted.Manager, diff)
	}
}

// verbKey is what a verb's prediction and kubectl's answer must share.
func verbKey(m predict.MethodResult) string {
	var changed []string
	for _, c := range m.Changed {
		changed = append(changed, c.Path+" "+c.Change)
	}
	return fmt.Sprintf("%s by %s: %s %d clobbered %s\nchanged %s", m.Method, m.Manager, m.Verdict, m.Code, clobberKey(m), strings.Join(changed, "\n  "))
}

// TestPredictClientApplyCommand runs kubectl rv predict --method
// client-apply as a user does, against the server and offline, on a ConfigMap last applied client-side whose retries
// another manager changed, for a manifest without its debug key: both say
// kubectl apply deletes .data.debug and takes .data.retries from the
// tuner, and the real kubectl apply then does. RV_PREDICT_DOCS=1 logs the
// sessions docs/predict.md shows, RV_PREDICT_DOCS_DIR=DIR saves the
// manifest and the live object its offline session runs on
// (examples/client-apply).
func TestPredictClientApplyCommand(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	first := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n  retries: \"3\"\n  debug: \"true\"\n"
	next := strings.Replace(first, "  debug: \"true\"\n", "", 1)
	file := predictWriteFile(t, dir, "settings.yaml", first)
	cluster.MustKubectl(t, "apply", "-n", ns, "-f", file)
	cluster.MustKubectl(t, "patch", "configmap", "settings", "-n", ns, "--type", "merge", "-p", `{"data":{"retries":"5"}}`, "--field-manager", "tuner")
	file = predictWriteFile(t, dir, "settings.yaml", next)
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "configmap", "settings", "-n", ns, "-o", "yaml", "--show-managed-fields"))
	sessions := [][]string{
		{"predict", "-n", ns, "-f", file, "--method", "client-apply"},
		{"predict", "-n", ns, "-f", file, "--method", "client-apply", "--offline", "--live", live},
		{"predict", "-n", ns, "-f", file, "--method", "kubectl"},
	}
	for _, args := range sessions {
		r := cluster.RV(t, args...)
		if r.Code != 0 && r.Code != 1 {
			t.Fatalf("kubectl rv %s: %s", strings.Join(args, " "), r)
		}
		for _, want := range []string{"client-apply", "deletes .data.debug (left the manifest)", `takes .data.retries from "tuner"`} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("kubectl rv %s: the table lacks %q:\n%s", strings.Join(args, " "), want, r.Stdout)
			}
		}
		if os.Getenv("RV_PREDICT_DOCS") != "" {
			t.Logf("$ kubectl rv %s\n%s%s", strings.Join(args, " "), r.Stdout, r.Stderr)
		}
	}
	if out := os.Getenv("RV_PREDICT_DOCS_DIR"); out != "" {
		// docs/predict.md's offline session runs on these, its namespace
		// renamed demo.
		liveYAML, err := os.ReadFile(live)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"settings.yaml": next, "live.yaml": strings.ReplaceAll(string(liveYAML), ns, "demo")} {
			if err := os.WriteFile(filepath.Join(out, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, _ := predictReport(t, "-n", ns, "-f", file, "--method", "client-apply")
	ca := rep.Objects[0].Methods[0].ClientApply
	if ca == nil || !strings.Contains(ca.LastApplied, `"retries":"3"`) || strings.Contains(ca.LastApplied, "debug") {
		t.Errorf("-o json: the annotation becomes %+v, want the new manifest", ca)
	}
	cluster.MustKubectl(t, "apply", "-n", ns, "-f", file)
	data := cluster.MustKubectl(t, "get", "configmap", "settings", "-n", ns, "-o", "jsonpath={.data}")
	if strings.Contains(data, "debug") || !strings.Contains(data, `"retries":"3"`) {
		t.Errorf("after kubectl apply the data is %s, want no debug and retries 3", data)
	}
}
