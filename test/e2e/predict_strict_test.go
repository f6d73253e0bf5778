//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// strictCRD is a custom resource with a structural schema: a field it
// does not declare is pruned, or refused under fieldValidation=Strict.
var strictCRD = crdManifest("strict.example.com", "Knob", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec: {type: object, properties: {turns: {type: integer}}}
`)

// TestPredictKubectlVerbsRefuseUnknownFields: kubectl apply, apply
// --server-side, replace and edit send fieldValidation=Strict (their
// --validate default), so a manifest with a field its kind does not
// declare (a typo) fails, where a client's plain write would drop the
// field with a warning. For a ConfigMap (existing and not), a
// Deployment's container and a custom resource, both engines must
// predict each verb's refusal with the server's code and words, and the
// real kubectl command (a server dry run; edit for real) must fail with
// the unknown field in its message.
func TestPredictKubectlVerbsRefuseUnknownFields(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.PauseControllers(t)
	dyn := cluster.Dynamic(t, "strict")
	ctx := context.Background()
	knobTC, knobOffline := installCRD(t, strictCRD)
	knobGVR := schema.GroupVersionResource{Group: "strict.example.com", Version: "v1", Resource: "knobs"}
	deploy := strings.ReplaceAll(caWeb, "ca-web", "strict-web")
	cases := []struct {
		name, manifest, typo string
		gvr                  schema.GroupVersionResource
		exists               bool
	}{
		{"ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict-cm}\ndata: {a: '1'}\ndatta: {b: '2'}\n", `unknown field "datta"`, predictCMGVR, true},
		{"ConfigMap that does not exist", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: strict-new}\ndata: {a: '1'}\ndatta: {b: '2'}\n", `unknown field "datta"`, predictCMGVR, false},
		{"Deployment", strings.Replace(deploy, `image: "busybox:1"}`, `image: "busybox:1", imagee: "busybox:2"}`, 1), `unknown field "spec.template.spec.containers[1].imagee"`, predictDeployGVR, true},
		{"custom resource", "apiVersion: strict.example.com/v1\nkind: Knob\nmetadata: {name: strict-knob}\nspec: {turns: 2, twists: 3, spins: 1}\n", `unknown field "spec.spins", unknown field "spec.twists"`, knobGVR, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := predictWriteFile(t, t.TempDir(), "manifest.yaml", c.manifest)
			if c.exists {
				cluster.MustKubectl(t, "create", "--validate=false", "-n", ns, "-f", file)
			}
			desired := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(c.manifest), &desired.Object); err != nil {
				t.Fatal(err)
			}
			desired.SetNamespace(ns)
			ri := dyn.Resource(c.gvr).Namespace(ns)
			live, err := ri.Get(ctx, desired.GetName(), metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				live = nil
			} else if err != nil {
				t.Fatal(err)
			}
			in := predict.Input{Ref: predict.ObjectRef{APIVersion: desired.GetAPIVersion(), Kind: desired.GetKind(), Namespace: ns, Name: desired.GetName()}, Desired: desired}
			cfg := predict.Config{Methods: []predict.Method{predict.ClientApply, predict.ServerSideApply, predict.Replace, predict.Edit}}
			engine := offlineEngine(nil)
			if c.gvr == knobGVR {
				cfg.TypeConverter, engine = knobTC, knobOffline
			}
			srv, off := strictPredictions(t, ctx, cfg, in, predict.Server(ri, desired.GetName()), engine, desired, live)
			commands := map[predict.Method][]string{
				predict.ClientApply:     {"apply", "-f", file},
				predict.ServerSideApply: {"apply", "--server-side", "-f", file},
				predict.Replace:         {"replace", "-f", file},
			}
			for i, sm := range srv.Methods {
				om := off.Methods[i]
				sameReason := sm.Reason == om.Reason
				if sm.Method == predict.ServerSideApply {
					// The field manager names one unknown field, the first
					// its walk of a map meets: with two, either, on the
					// server too (seen: spins, twists, spins, spins).
					sameReason = strings.Contains(om.Reason, "field not declared in schema")
				}
				if sm.Verdict != om.Verdict || sm.Code != om.Code || !sameReason {
					t.Errorf("%s: offline %s %d %q, server %s %d %q", sm.Method, om.Verdict, om.Code, om.Reason, sm.Verdict, sm.Code, sm.Reason)
				}
				want := c.typo
				if sm.Method == predict.ServerSideApply {
					// The field manager refuses it first (500), Strict or not.
					want = "field not declared in schema"
				}
				if sm.Method == predict.Edit && live == nil {
					if sm.Verdict != predict.NotFound {
						t.Errorf("edit of an object that does not exist: %s", sm.Verdict)
					}
					continue
				}
				if sm.Verdict == predict.OK || sm.Verdict == predict.Clobber || !strings.Contains(sm.Reason, want) {
					t.Errorf("%s: predicted %s (%s), want a refusal naming %s", sm.Method, sm.Verdict, sm.Reason, want)
				}
				args, ok := commands[sm.Method]
				if !ok {
					continue
				}
				r := cluster.Kubectl(t, append(args, "-n", ns, "--dry-run=server")...)
				if r.Code == 0 || !strings.Contains(r.Stderr, want) {
					t.Errorf("%s predicted %s; kubectl %s: %s", sm.Method, sm.Verdict, strings.Join(args, " "), r)
				}
			}
			// With kubectl's --validate=warn the field is dropped: replace
			// succeeds, predicted alike by both engines.
			cfg.KubectlValidation = metav1.FieldValidationWarn
			cfg.Methods = []predict.Method{predict.Replace}
			wsrv, woff := strictPredictions(t, ctx, cfg, in, predict.Server(ri, desired.GetName()), engine, desired, live)
			r := cluster.Kubectl(t, "replace", "--validate=warn", "-f", file, "-n", ns, "--dry-run=server")
			if sm, om := wsrv.Methods[0], woff.Methods[0]; sm.Verdict != om.Verdict || sm.Code != om.Code || (sm.Code == 200) != (r.Code == 0) {
				t.Errorf("replace --validate=warn: server %s %d, offline %s %d; kubectl replace: %s", sm.Verdict, sm.Code, om.Verdict, om.Code, r)
			}
			if live != nil {
				// kubectl edit saving the manifest (with the uid and
				// resourceVersion it read, by which it finds the object): it
				// fails with the server's 422, "is invalid" (the causes go
				// into the copy it keeps, which the editor here overwrites).
				saved := desired.DeepCopy()
				saved.SetUID(live.GetUID())
				saved.SetResourceVersion(live.GetResourceVersion())
				js, err := saved.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				editFile := predictWriteFile(t, t.TempDir(), "edited.json", string(js))
				r = cluster.Run(t, nil, "env", "EDITOR=cp "+editFile, "kubectl", "edit", c.gvr.Resource+"/"+desired.GetName(), "-n", ns)
				if em := srv.Methods[3]; r.Code == 0 || !strings.Contains(r.Stderr, " is invalid") || em.Code != 422 {
					t.Errorf("edit predicted %s %d; kubectl edit: %s", em.Verdict, em.Code, r)
				}
			}
		})
	}
}

// strictPredictions predicts in by the server (dry runs) and offline.
func strictPredictions(t *testing.T, ctx context.Context, cfg predict.Config, in predict.Input, server predict.Executor, engine *predict.Offline, desired, live *unstructured.Unstructured) (predict.Result, predict.Result) {
	t.Helper()
	srv, err := predict.Predict(ctx, cfg, in, server)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := engine.Executor(desired.GroupVersionKind(), desired.GetName(), live)
	if err != nil {
		t.Fatal(err)
	}
	off, err := predict.Predict(ctx, cfg, in, ex)
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Methods) != len(cfg.Methods) || len(off.Methods) != len(cfg.Methods) {
		t.Fatalf("%d and %d methods predicted, want %d", len(srv.Methods), len(off.Methods), len(cfg.Methods))
	}
	return srv, off
}
