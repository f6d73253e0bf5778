//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// gadgetCRD is a custom resource with a structural schema and a status
// subresource: a set, an associative list keyed by name, an atomic list
// and a map of strings in its spec.
var gadgetCRD = crdManifest("fidelity.example.com", "Gadget", `subresources: {status: {}}
schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          size: {type: integer}
          mode: {type: string}
          tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
          args: {type: array, items: {type: string}}
          ports:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items:
              type: object
              required: [name]
              properties:
                name: {type: string}
                port: {type: integer}
          settings: {type: object, additionalProperties: {type: string}}
      status:
        type: object
        properties:
          phase: {type: string}
          ready: {type: integer}
`)

// widgetCRD is a custom resource whose schema keeps any field (the server
// deduces their types: lists atomic, maps granular), without a status
// subresource.
var widgetCRD = crdManifest("fidelity.example.com", "Widget", `schema:
  openAPIV3Schema:
    type: object
    x-kubernetes-preserve-unknown-fields: true
`)

// crKind is one custom kind of the corpus.
type crKind struct {
	kind   string
	gvr    schema.GroupVersionResource
	tc     managedfields.TypeConverter
	status bool
	// typed is the offline engine given the CRD (predict --schema CRD).
	typed *predict.Offline
}

// crCorpus generates the custom resource cases. It has generators of its
// own, so the ConfigMap and Deployment cases of a seed stay those they
// were before custom resources joined the corpus.
type crCorpus struct {
	rng, pick *rand.Rand
	ri        func(gvr schema.GroupVersionResource) dynamic.ResourceInterface
	gadget    crKind
	widget    crKind
	// untyped is the offline engine without a schema.
	untyped *predict.Offline
}

// newCRCorpus installs the CRDs and returns the generator of their cases.
func newCRCorpus(t *testing.T, dyn dynamic.Interface, ns string, seed int64) *crCorpus {
	t.Helper()
	cc := &crCorpus{
		rng:  rand.New(rand.NewSource(seed + 3)),
		pick: rand.New(rand.NewSource(seed + 4)),
		ri: func(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
			return dyn.Resource(gvr).Namespace(ns)
		},
		untyped: offlineEngine(nil),
	}
	install := func(kind, plural, crd string, status bool) crKind {
		tc, typed := installCRD(t, crd)
		return crKind{kind: kind, gvr: schema.GroupVersionResource{Group: "fidelity.example.com", Version: "v1", Resource: plural},
			tc: tc, status: status, typed: typed}
	}
	cc.gadget = install("Gadget", "gadgets", gadgetCRD, true)
	cc.widget = install("Widget", "widgets", widgetCRD, false)
	return cc
}

// crCase is a custom resource case and how the offline engine sees it.
type crCase struct {
	kind    *crKind
	offline *predict.Offline
	tc      managedfields.TypeConverter
	// bare, when not nil, predicts the case again without the CRD (predict
	// --offline without --schema): see checkWithoutSchema.
	bare *predict.Offline
}

// next reports whether case i is a custom resource (a quarter of them).
func (cc *crCorpus) next() bool { return cc.rng.Intn(4) == 0 }

// build writes one custom resource through 1-4 managers (creates, applies,
// updates and, for Gadgets, status writes) and returns the desired change.
// Both kinds are typed by their CRD, as predict --offline --schema types
// them; half of the Widgets are also predicted without it (crCase.bare).
func (cc *crCorpus) build(t *testing.T, ctx context.Context, ns string, i int) (fidelityCase, crCase, *unstructured.Unstructured, predict.Input) {
	t.Helper()
	rng := cc.rng
	k := &cc.gadget
	if rng.Intn(3) == 0 {
		k = &cc.widget
	}
	cr := crCase{kind: k, offline: k.typed, tc: k.tc}
	c := fidelityCase{ID: i, Kind: k.kind}
	if k == &cc.widget && rng.Intn(2) == 0 {
		cr.bare = cc.untyped
	}
	name := fmt.Sprintf("c%03d", i)
	ri := cc.ri(k.gvr)
	live, rvs, nManagers := writeByManagers(t, ctx, ri, rng, i, name, func(mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		obj, what, err := cc.write(ctx, ri, k, cur, name, ns, mgr)
		c.Writes = append(c.Writes, mgr+":"+what)
		if what == "apply(empty)" {
			c.EmptyWrite = true
		}
		return obj, err
	})
	// One generator draws everything of a custom resource's change.
	in, _ := drawChange(changeDraw{rng: rng, patches: rng, emptyOneIn: 6,
		seed:   func() *unstructured.Unstructured { return crSeed(rng, k, name, ns, "writer") },
		mutate: func(u *unstructured.Unstructured, _ bool) { crMutate(rng, k, u) },
		given: func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
			return crGivenPatch(rng, live, desired, rv)
		},
	}, &c, live, rvs, nManagers, ns, name)
	return c, cr, live, in
}

// write makes one write of a custom resource by mgr: a create or apply
// first, then applies (forced or not, a sixth of them with
// annotations: {}), read-modify-write updates, and for Gadgets status
// writes through /status.
func (cc *crCorpus) write(ctx context.Context, ri dynamic.ResourceInterface, k *crKind, cur *unstructured.Unstructured, name, ns, mgr string) (*unstructured.Unstructured, string, error) {
	rng := cc.rng
	if cur != nil && k.status && rng.Intn(4) == 0 {
		next := cur.DeepCopy()
		_ = unstructured.SetNestedField(next.Object, []string{"Pending", "Ready"}[rng.Intn(2)], "status", "phase")
		_ = unstructured.SetNestedField(next.Object, int64(rng.Intn(3)), "status", "ready")
		obj, err := ri.UpdateStatus(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
		return obj, "status", err
	}
	if cur != nil && rng.Intn(2) == 0 {
		next := cur.DeepCopy()
		crMutate(rng, k, next)
		obj, err := ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
		return obj, "update", err
	}
	cfg := crSeed(rng, k, name, ns, mgr)
	if cur != nil {
		crMutate(rng, k, cfg)
	}
	if cur == nil && rng.Intn(2) == 0 {
		obj, err := ri.Create(ctx, cfg, metav1.CreateOptions{FieldManager: mgr})
		return obj, "create", err
	}
	what := "apply"
	if rng.Intn(6) == 0 {
		cfg.SetAnnotations(map[string]string{})
		what = "apply(empty)"
	}
	force := rng.Intn(3) > 0
	if !force {
		what += "(no force)"
	}
	b, _ := json.Marshal(cfg.Object)
	obj, err := ri.Patch(ctx, name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: mgr, Force: &force})
	switch {
	case err != nil && !force && cur != nil:
		// A conflicting apply without force leaves the object as it was.
		return cur, what, nil
	case apierrors.IsInvalid(err) && cur != nil:
		// An apply that takes back the only key of another applier's map
		// leaves it null, which the schema refuses (seed 7, case 450): the
		// object stays as it was.
		return cur, what + "(422)", nil
	}
	return obj, what, err
}

// crSeed returns a small custom resource whose content depends on rng:
// labels, sometimes the manager's finalizer, and a spec of the kind.
func crSeed(rng *rand.Rand, k *crKind, name, ns, mgr string) *unstructured.Unstructured {
	u := seedMeta(rng, "fidelity.example.com/v1", k.kind, name, ns, mgr)
	if rng.Intn(3) == 0 {
		u.SetFinalizers([]string{"fidelity.example.com/" + mgr})
	}
	spec := map[string]any{"size": int64(1 + rng.Intn(3))}
	if k.kind == "Gadget" {
		if rng.Intn(2) == 0 {
			spec["mode"] = []string{"fast", "slow"}[rng.Intn(2)]
		}
		spec["tags"] = someOf(rng, "t", 4)
		if rng.Intn(2) == 0 {
			spec["args"] = []any{fmt.Sprintf("--v=%d", rng.Intn(3))}
		}
		var ports []any
		for _, n := range someOf(rng, "p", 3) {
			ports = append(ports, map[string]any{"name": n, "port": int64(80 + rng.Intn(3))})
		}
		spec["ports"] = ports
		spec["settings"] = map[string]any{fmt.Sprintf("s%d", rng.Intn(3)): fmt.Sprintf("v%d", rng.Intn(3))}
	} else {
		spec["color"] = []string{"red", "blue"}[rng.Intn(2)]
		spec["items"] = someOf(rng, "i", 3)
		spec["extra"] = map[string]any{fmt.Sprintf("e%d", rng.Intn(3)): fmt.Sprintf("v%d", rng.Intn(3))}
	}
	u.Object["spec"] = spec
	return u
}

// someOf returns 1 to n distinct names prefix0..prefix(n-1), in order.
func someOf(rng *rand.Rand, prefix string, n int) []any {
	var out []any
	for i := 0; i < n; i++ {
		if rng.Intn(2) == 0 || (i == n-1 && len(out) == 0) {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
	}
	return out
}

// crMutate makes one random edit of a custom resource: a label, an
// annotation, a finalizer added or removed, the size changed or removed,
// a list edited (a set item, an associative list item, an atomic list),
// or a map key added, changed or removed.
func crMutate(rng *rand.Rand, k *crKind, u *unstructured.Unstructured) {
	switch rng.Intn(6) {
	case 0:
		setRandomLabel(rng, u)
		return
	case 1:
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[fmt.Sprintf("note%d", rng.Intn(2))] = fmt.Sprintf("n%d", rng.Intn(3))
		u.SetAnnotations(ann)
		return
	case 2:
		fin := u.GetFinalizers()
		f := fmt.Sprintf("fidelity.example.com/f%d", rng.Intn(3))
		if i := slices.Index(fin, f); i >= 0 {
			fin = slices.Delete(fin, i, i+1)
		} else if len(fin) > 0 && rng.Intn(2) == 0 {
			fin = fin[1:]
		} else {
			fin = append(fin, f)
		}
		u.SetFinalizers(fin)
		return
	case 3:
		if rng.Intn(4) == 0 {
			unstructured.RemoveNestedField(u.Object, "spec", "size")
		} else {
			_ = unstructured.SetNestedField(u.Object, int64(1+rng.Intn(5)), "spec", "size")
		}
		return
	case 4:
		crListEdit(rng, k, u)
		return
	}
	key, field := "extra", "e"
	if k.kind == "Gadget" {
		key, field = "settings", "s"
		if rng.Intn(3) == 0 {
			if _, ok, _ := unstructured.NestedString(u.Object, "spec", "mode"); ok {
				unstructured.RemoveNestedField(u.Object, "spec", "mode")
			} else {
				_ = unstructured.SetNestedField(u.Object, "slow", "spec", "mode")
			}
			return
		}
	}
	m, _, _ := unstructured.NestedMap(u.Object, "spec", key)
	if m == nil {
		m = map[string]any{}
	}
	f := fmt.Sprintf("%s%d", field, rng.Intn(3))
	if _, ok := m[f]; ok && rng.Intn(2) == 0 {
		delete(m, f)
	} else {
		m[f] = fmt.Sprintf("v%d", rng.Intn(3))
	}
	_ = unstructured.SetNestedMap(u.Object, m, "spec", key)
}

// crListEdit edits one list: Gadget tags (a set), ports (keyed by name)
// or args (atomic); Widget items (deduced: atomic).
func crListEdit(rng *rand.Rand, k *crKind, u *unstructured.Unstructured) {
	field := "items"
	if k.kind == "Gadget" {
		field = []string{"tags", "ports", "args"}[rng.Intn(3)]
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "spec", field)
	switch field {
	case "ports":
		n := fmt.Sprintf("p%d", rng.Intn(4))
		i := slices.IndexFunc(list, func(p any) bool { return p.(map[string]any)["name"] == n })
		switch {
		case i < 0:
			list = append(list, map[string]any{"name": n, "port": int64(90 + rng.Intn(3))})
		case rng.Intn(2) == 0:
			list = slices.Delete(list, i, i+1)
		default:
			list[i].(map[string]any)["port"] = int64(100 + rng.Intn(3))
		}
	case "args":
		list = []any{fmt.Sprintf("--v=%d", rng.Intn(4))}
	default:
		prefix := map[string]string{"tags": "t", "items": "i"}[field]
		v := fmt.Sprintf("%s%d", prefix, rng.Intn(5))
		if i := slices.Index(list, any(v)); i >= 0 {
			list = slices.Delete(list, i, i+1)
		} else {
			list = append(list, v)
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, list, "spec", field)
}

// crGivenPatch returns a patch of a random type making part of the change
// from live to desired: the labels and spec as a merge patch (removed keys
// as null) or a strategic merge patch (which custom resources refuse with
// 415), label adds and the size as a JSON patch (after a test of the
// resourceVersion, sometimes), or the desired object as an apply patch.
func crGivenPatch(rng *rand.Rand, live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
	pt := []predict.PatchType{predict.PatchJSON, predict.PatchMerge, predict.PatchStrategic, predict.PatchApply}[rng.Intn(4)]
	switch pt {
	case predict.PatchApply:
		b, _ := json.Marshal(desired.Object)
		return pt, b
	case predict.PatchJSON:
		ops := []map[string]any{}
		if rv != "" && rng.Intn(2) == 0 {
			ops = append(ops, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
		}
		labels := desired.GetLabels()
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			if live.GetLabels()[k] != labels[k] {
				ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/" + k, "value": labels[k]})
			}
		}
		if rng.Intn(2) == 0 {
			// The desired finalizers, or an empty list the server drops.
			fin := desired.GetFinalizers()
			if fin == nil {
				fin = []string{}
			}
			ops = append(ops, map[string]any{"op": "add", "path": "/metadata/finalizers", "value": fin})
		}
		if r, ok, _ := unstructured.NestedInt64(desired.Object, "spec", "size"); ok {
			ops = append(ops, map[string]any{"op": "add", "path": "/spec/size", "value": r})
		}
		b, _ := json.Marshal(ops)
		return pt, b
	}
	labels := map[string]any{}
	for k, v := range desired.GetLabels() {
		labels[k] = v
	}
	for k := range live.GetLabels() {
		if _, ok := labels[k]; !ok && rng.Intn(2) == 0 {
			labels[k] = nil
		}
	}
	spec, _, _ := unstructured.NestedMap(desired.Object, "spec")
	liveSpec, _, _ := unstructured.NestedMap(live.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	for k := range liveSpec {
		if _, ok := spec[k]; !ok {
			spec[k] = nil
		}
	}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec})
	return pt, b
}

// withoutSchema counts the predictions of custom resources made again
// offline without their CRD, and the unknown verdicts among them.
type withoutSchema struct{ methods, unknown int }

// check predicts a custom resource case again with bare, an offline
// engine without the CRD (predict --offline without --schema), and returns
// what it got confidently wrong: every method must give the server's
// verdict, conflicts and clobbers, or say unknown with a reason that names
// --schema.
func (w *withoutSchema) check(ctx context.Context, cfg predict.Config, in predict.Input, live *unstructured.Unstructured, bare *predict.Offline, srv predict.Result) ([]string, error) {
	cfg.TypeConverter = nil
	ex, err := bare.Executor(live.GroupVersionKind(), live.GetName(), live)
	if err != nil {
		return nil, err
	}
	off, err := predict.Predict(ctx, cfg, in, ex)
	if err != nil {
		return nil, err
	}
	var wrong []string
	for j, sm := range srv.Methods {
		om := off.Methods[j]
		w.methods++
		switch {
		case om.Verdict == predict.Unknown:
			w.unknown++
			if !strings.Contains(om.Reason, "with --schema") {
				wrong = append(wrong, fmt.Sprintf("%s without the CRD: unknown, but the reason does not name --schema: %q", sm.Method, om.Reason))
			}
		case sm.Verdict != om.Verdict || conflictKey(sm) != conflictKey(om) || clobberKey(sm) != clobberKey(om):
			wrong = append(wrong, fmt.Sprintf("%s without the CRD, confidently wrong:\n  server  %s %s %s %s\n  offline %s %s %s %s",
				sm.Method, sm.Verdict, conflictKey(sm), clobberKey(sm), sm.Reason, om.Verdict, conflictKey(om), clobberKey(om), om.Reason))
		}
	}
	return wrong, nil
}
