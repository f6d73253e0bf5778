//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// edgeCRD is a custom resource with a schema that says nothing of
// metadata: the server still types its metadata as ObjectMeta.
var edgeCRD = crdManifest("edges.example.com", "Sprocket", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          size: {type: integer}
`)

var sprocketGVR = schema.GroupVersionResource{Group: "edges.example.com", Version: "v1", Resource: "sprockets"}

var revisionGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "controllerrevisions"}

// edgeWrite is one write that sets up a case: a server-side apply
// (forced) or a create, by manager.
type edgeWrite struct {
	manager string
	apply   bool
	obj     string
}

type edgeCase struct {
	name    string
	gvr     schema.GroupVersionResource
	writes  []edgeWrite
	desired string
	// noRV sends the desired object without a resourceVersion; otherwise
	// it carries the live one (a fresh read).
	noRV bool
	// want is what the server must answer per method (the test's own
	// check that the case exercises what it is named after).
	want map[predict.Method]predict.Verdict
}

// TestPredictEdgeCasesAgree runs hand-made cases the randomized corpus
// misses through both engines, against the real API server: a strategic
// merge patch the server fails with 500 (the same port on TCP and UDP),
// empty label and annotation maps the server drops, a custom resource
// updated without a resourceVersion, empty annotations on a custom
// resource (dropped too: its metadata is ObjectMeta), finalizers on a
// custom resource (a set, as in ObjectMeta), and a ControllerRevision's
// immutable data. Each method's verdict, apply conflicts and
// clobbered fields must be the same offline as on the server.
func TestPredictEdgeCasesAgree(t *testing.T) {
	ns := cluster.Namespace(t)
	// The deployment controller would change objects between the dry runs
	// and the offline prediction.
	cluster.PauseControllers(t)
	tc, offline := installCRD(t, edgeCRD)
	svc := schema.GroupVersionResource{Version: "v1", Resource: "services"}
	cases := []edgeCase{
		{
			name: "service-port-on-tcp-and-udp", gvr: svc,
			writes:  []edgeWrite{{manager: "team", apply: true, obj: `{apiVersion: v1, kind: Service, metadata: {name: dns2}, spec: {selector: {app: dns}, ports: [{name: a-udp, port: 8080, protocol: UDP}]}}`}},
			desired: `{apiVersion: v1, kind: Service, metadata: {name: dns2}, spec: {selector: {app: dns}, ports: [{name: a-udp, port: 8080, protocol: UDP}, {name: b-udp, port: 53, protocol: UDP}, {name: a-tcp, port: 8080, protocol: TCP}]}}`,
			want:    map[predict.Method]predict.Verdict{predict.StrategicMergePatch: predict.ServerError, predict.Update: predict.OK},
		},
		{
			name: "container-port-on-tcp-and-udp", gvr: predictDeployGVR,
			writes:  []edgeWrite{{manager: "team", apply: true, obj: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: dns}, spec: {selector: {matchLabels: {app: dns}}, template: {metadata: {labels: {app: dns}}, spec: {containers: [{name: dns, image: dns:1, ports: [{name: udp, containerPort: 53, protocol: UDP}]}]}}}}`}},
			desired: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: dns}, spec: {selector: {matchLabels: {app: dns}}, template: {metadata: {labels: {app: dns}}, spec: {containers: [{name: dns, image: dns:1, ports: [{name: udp, containerPort: 53, protocol: UDP}, {name: tcp, containerPort: 53, protocol: TCP}]}]}}}}`,
		},
		{
			// A ControllerRevision's data is immutable; its revision is not.
			name: "controllerrevision-data-is-immutable", gvr: revisionGVR,
			writes:  []edgeWrite{{manager: "ctrl", obj: `{apiVersion: apps/v1, kind: ControllerRevision, metadata: {name: rev}, revision: 1, data: {a: 1}}`}},
			desired: `{apiVersion: apps/v1, kind: ControllerRevision, metadata: {name: rev}, revision: 2, data: {a: 2}}`,
			want:    map[predict.Method]predict.Verdict{predict.Update: predict.Invalid, predict.MergePatch: predict.Invalid},
		},
		{
			name: "controllerrevision-revision-changes", gvr: revisionGVR,
			writes:  []edgeWrite{{manager: "ctrl", obj: `{apiVersion: apps/v1, kind: ControllerRevision, metadata: {name: rev2}, revision: 1, data: {a: 1}}`}},
			desired: `{apiVersion: apps/v1, kind: ControllerRevision, metadata: {name: rev2}, revision: 3, data: {a: 1}}`,
			// Another manager takes .revision from ctrl: allowed, and a clobber.
			want: map[predict.Method]predict.Verdict{predict.Update: predict.Clobber, predict.MergePatch: predict.Clobber},
		},
		{
			name: "empty-labels-dropped", gvr: predictCMGVR,
			writes:  []edgeWrite{{manager: "ci", apply: true, obj: `{apiVersion: v1, kind: ConfigMap, metadata: {name: el, labels: {}}, data: {a: "1"}}`}},
			desired: `{apiVersion: v1, kind: ConfigMap, metadata: {name: el, labels: {}}, data: {a: "1", b: "2"}}`,
			want:    map[predict.Method]predict.Verdict{predict.UpdateNoRV: predict.OK},
		},
		{
			name: "empty-annotations-dropped", gvr: predictCMGVR,
			writes:  []edgeWrite{{manager: "ci", apply: true, obj: `{apiVersion: v1, kind: ConfigMap, metadata: {name: ea, annotations: {}}, data: {a: "1"}}`}},
			desired: `{apiVersion: v1, kind: ConfigMap, metadata: {name: ea, annotations: {}}, data: {a: "1"}}`,
		},
		{
			name: "custom-resource-update-without-rv", gvr: sprocketGVR, noRV: true,
			writes:  []edgeWrite{{manager: "maker", obj: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: norv}, spec: {size: 1}}`}},
			desired: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: norv}, spec: {size: 2}}`,
			want:    map[predict.Method]predict.Verdict{predict.UpdateNoRV: predict.Invalid},
		},
		{
			// The server coerces a custom resource's metadata through
			// ObjectMeta, so annotations: {} in an update or patch is no
			// field: the applier keeps its (empty) annotations.
			name: "custom-resource-empty-annotations-dropped", gvr: sprocketGVR,
			writes:  []edgeWrite{{manager: "ci", apply: true, obj: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: ea, annotations: {}}, spec: {size: 1}}`}},
			desired: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: ea, annotations: {}, labels: {a: b}}, spec: {size: 1}}`,
			want:    map[predict.Method]predict.Verdict{predict.Update: predict.OK, predict.MergePatch: predict.OK, predict.JSONPatch: predict.OK},
		},
		{
			name: "custom-resource-annotations-emptied", gvr: sprocketGVR,
			writes:  []edgeWrite{{manager: "ci", apply: true, obj: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: ee, annotations: {x: "y"}}, spec: {size: 1}}`}},
			desired: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: ee, annotations: {}}, spec: {size: 1}}`,
			want:    map[predict.Method]predict.Verdict{predict.Update: predict.Clobber},
		},
		{
			name: "custom-resource-finalizers-are-a-set", gvr: sprocketGVR,
			writes:  []edgeWrite{{manager: "guard", apply: true, obj: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: fin, finalizers: [a.example.com/x]}, spec: {size: 1}}`}},
			desired: `{apiVersion: edges.example.com/v1, kind: Sprocket, metadata: {name: fin, finalizers: [b.example.com/y]}}`,
			want:    map[predict.Method]predict.Verdict{predict.Apply: predict.OK},
		},
	}
	dyn := cluster.Dynamic(t, "edges")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			ri := dyn.Resource(c.gvr).Namespace(ns)
			name := ""
			for _, w := range c.writes {
				obj := edgeObject(t, w.obj)
				name = obj.GetName()
				var err error
				if w.apply {
					b, _ := json.Marshal(obj.Object)
					force := true
					_, err = ri.Patch(ctx, name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: w.manager, Force: &force})
				} else {
					_, err = ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: w.manager})
				}
				if err != nil {
					t.Fatalf("setting up: %s's write: %v", w.manager, err)
				}
			}
			live, err := ri.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			desired := edgeObject(t, c.desired)
			if !c.noRV {
				desired.SetResourceVersion(live.GetResourceVersion())
			}
			in := predict.Input{Ref: predict.ObjectRef{APIVersion: live.GetAPIVersion(), Kind: live.GetKind(), Namespace: ns, Name: name}, Desired: desired}
			cfg := predict.Config{FieldManager: "writer", DefaultManager: "kubectl-rv", TypeConverter: tc}
			srv, err := predict.Predict(ctx, cfg, in, predict.Server(ri, name))
			if err != nil {
				t.Fatalf("server: %v (one method's failure must not fail the prediction)", err)
			}
			ex, err := offline.Executor(live.GroupVersionKind(), name, live)
			if err != nil {
				t.Fatal(err)
			}
			off, err := predict.Predict(ctx, cfg, in, ex)
			if err != nil {
				t.Fatalf("offline: %v", err)
			}
			got := map[predict.Method]predict.Verdict{}
			for i, sm := range srv.Methods {
				om := off.Methods[i]
				got[sm.Method] = sm.Verdict
				if sm.Verdict != om.Verdict || sm.Code != om.Code || conflictKey(sm) != conflictKey(om) || clobberKey(sm) != clobberKey(om) {
					t.Errorf("%s:\n  server  %s %d %s %s %s\n  offline %s %d %s %s %s", sm.Method,
						sm.Verdict, sm.Code, conflictKey(sm), clobberKey(sm), sm.Reason,
						om.Verdict, om.Code, conflictKey(om), clobberKey(om), om.Reason)
				}
			}
			for m, v := range c.want {
				if got[m] != v {
					t.Errorf("server: %s is %s, want %s", m, got[m], v)
				}
			}
			for i, sm := range srv.Methods {
				if sm.Verdict == predict.ServerError && (!strings.Contains(sm.Reason, "apply or a JSON patch") || !strings.Contains(off.Methods[i].Reason, "apply or a JSON patch")) {
					t.Errorf("%s: a 500 must say what to use instead: server %q, offline %q", sm.Method, sm.Reason, off.Methods[i].Reason)
				}
			}
		})
	}
}

func edgeObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}
