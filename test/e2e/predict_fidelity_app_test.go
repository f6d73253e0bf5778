//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// applianceCRD is a custom resource whose schema the API server acts on:
// defaults (nested, in the items of an associative list, on a nullable
// field), pruning (unknown fields, a subtree that keeps them),
// enum/pattern/minimum/maximum, and CEL rules, one of them a transition
// rule (oldSelf), with a status subresource.
var applianceCRD = crdManifest("fidelity.example.com", "Appliance", `subresources: {status: {}}
schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        x-kubernetes-validations:
        - rule: "self.replicas <= self.maxReplicas"
          message: replicas must not exceed maxReplicas
        - rule: "!has(oldSelf.tier) || !has(self.tier) || self.tier == oldSelf.tier"
          message: tier is immutable
        properties:
          replicas: {type: integer, default: 1, minimum: 0, maximum: 10}
          maxReplicas: {type: integer, default: 5}
          tier: {type: string, enum: [gold, silver]}
          owner: {type: string, pattern: '^[a-z]+$'}
          note: {type: string, nullable: true, default: none}
          resources:
            type: object
            default: {}
            properties:
              cpu: {type: string, default: 100m}
              memory: {type: string, default: 64Mi}
          volumes:
            type: array
            x-kubernetes-list-type: map
            x-kubernetes-list-map-keys: [name]
            items:
              type: object
              required: [name]
              properties:
                name: {type: string}
                size: {type: integer, default: 1}
                readOnly: {type: boolean, default: false}
          extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
      status:
        type: object
        properties:
          phase: {type: string}
`)

// appCorpus generates the Appliance cases, from generators of its own so
// that the other kinds' cases of a seed stay those they were.
type appCorpus struct {
	rng, pick *rand.Rand
	ri        dynamic.ResourceInterface
	tc        managedfields.TypeConverter
	// offline is predict --offline --schema applianceCRD.
	offline *predict.Offline
	// Invalid counts the desired changes made invalid, by how.
	Invalid map[string]int
}

var applianceGVR = schema.GroupVersionResource{Group: "fidelity.example.com", Version: "v1", Resource: "appliances"}

// newAppCorpus installs the CRD and returns the generator of its cases.
func newAppCorpus(t *testing.T, dyn dynamic.Interface, ns string, seed int64) *appCorpus {
	t.Helper()
	tc, off := installCRD(t, applianceCRD)
	return &appCorpus{rng: rand.New(rand.NewSource(seed + 9)), pick: rand.New(rand.NewSource(seed + 10)),
		ri: dyn.Resource(applianceGVR).Namespace(ns), tc: tc, offline: off, Invalid: map[string]int{}}
}

// next reports whether case i is an Appliance (an eighth of them).
func (ac *appCorpus) next() bool { return ac.rng.Intn(8) == 0 }

// build writes one Appliance through 1-4 managers and returns the
// desired change.
func (ac *appCorpus) build(t *testing.T, ctx context.Context, ns string, i int) (fidelityCase, *unstructured.Unstructured, predict.Input) {
	t.Helper()
	rng := ac.rng
	c := fidelityCase{ID: i, Kind: "Appliance"}
	name := fmt.Sprintf("a%03d", i)
	live, rvs, nManagers := writeByManagers(t, ctx, ac.ri, rng, i, name, func(mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		obj, what, err := ac.write(ctx, cur, name, ns, mgr)
		c.Writes = append(c.Writes, mgr+":"+what)
		return obj, err
	})
	in, _ := drawChange(changeDraw{rng: rng, patches: rng, emptyOneIn: 6,
		seed:   func() *unstructured.Unstructured { return appSeed(rng, name, ns, "writer") },
		mutate: func(u *unstructured.Unstructured, rmw bool) { appMutate(rng, u, rmw) },
		invalid: func(u *unstructured.Unstructured) string {
			what := appInvalidate(rng, u)
			if what != "" {
				ac.Invalid[what]++
			}
			return what
		},
		given: func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
			return appGivenPatch(rng, live, desired, rv)
		},
	}, &c, live, rvs, nManagers, ns, name)
	return c, live, in
}

// write makes one valid write of an Appliance by mgr: a create or apply
// first, then applies, read-modify-write updates and status writes.
func (ac *appCorpus) write(ctx context.Context, cur *unstructured.Unstructured, name, ns, mgr string) (*unstructured.Unstructured, string, error) {
	rng := ac.rng
	switch {
	case cur != nil && rng.Intn(5) == 0:
		next := cur.DeepCopy()
		_ = unstructured.SetNestedField(next.Object, []string{"Pending", "Ready"}[rng.Intn(2)], "status", "phase")
		obj, err := ac.ri.UpdateStatus(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
		return obj, "status", err
	case cur != nil && rng.Intn(2) == 0:
		next := cur.DeepCopy()
		appMutate(rng, next, true)
		obj, err := ac.ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
		return obj, "update", err
	}
	cfg := appSeed(rng, name, ns, mgr)
	if cur != nil {
		// An applier keeps the tier (the transition rule) it finds.
		if tier, ok, _ := unstructured.NestedString(cur.Object, "spec", "tier"); ok {
			_ = unstructured.SetNestedField(cfg.Object, tier, "spec", "tier")
		}
	}
	if cur == nil && rng.Intn(2) == 0 {
		obj, err := ac.ri.Create(ctx, cfg, metav1.CreateOptions{FieldManager: mgr})
		return obj, "create", err
	}
	force := rng.Intn(3) > 0
	b, _ := json.Marshal(cfg.Object)
	obj, err := ac.ri.Patch(ctx, name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: mgr, Force: &force})
	if err != nil && !force && cur != nil {
		return cur, "apply(no force)", nil
	}
	return obj, fmt.Sprintf("apply(force=%v)", force), err
}

// appSeed returns a valid Appliance manifest: some fields set, others
// left to their defaults.
func appSeed(rng *rand.Rand, name, ns, mgr string) *unstructured.Unstructured {
	u := seedMeta(rng, "fidelity.example.com/v1", "Appliance", name, ns, mgr)
	spec := map[string]any{}
	if rng.Intn(2) == 0 {
		spec["replicas"] = int64(rng.Intn(4))
	}
	if rng.Intn(3) == 0 {
		spec["maxReplicas"] = int64(4 + rng.Intn(3))
	}
	if rng.Intn(2) == 0 {
		spec["tier"] = []string{"gold", "silver"}[rng.Intn(2)]
	}
	if rng.Intn(3) == 0 {
		spec["owner"] = []string{"ann", "bob"}[rng.Intn(2)]
	}
	if rng.Intn(3) == 0 {
		spec["resources"] = map[string]any{"cpu": []string{"200m", "1"}[rng.Intn(2)]}
	}
	if rng.Intn(2) == 0 {
		var vols []any
		for _, n := range someOf(rng, "v", 3) {
			v := map[string]any{"name": n}
			if rng.Intn(2) == 0 {
				v["size"] = int64(2 + rng.Intn(3))
			}
			vols = append(vols, v)
		}
		spec["volumes"] = vols
	}
	if rng.Intn(4) == 0 {
		spec["extra"] = map[string]any{"k": map[string]any{"deep": fmt.Sprintf("x%d", rng.Intn(3))}}
	}
	u.Object["spec"] = spec
	return u
}

// appMutate makes one valid edit: a label, replicas changed or removed
// (a read copy then leaves the defaulted value out), maxReplicas, owner,
// note set, removed or null, a resource, a volume added, removed or
// resized, or the extra subtree.
func appMutate(rng *rand.Rand, u *unstructured.Unstructured, rmw bool) {
	switch rng.Intn(7) {
	case 0:
		setRandomLabel(rng, u)
	case 1:
		if rng.Intn(3) == 0 {
			unstructured.RemoveNestedField(u.Object, "spec", "replicas")
		} else {
			_ = unstructured.SetNestedField(u.Object, int64(rng.Intn(5)), "spec", "replicas")
		}
	case 2:
		_ = unstructured.SetNestedField(u.Object, []string{"ann", "bob", "cy"}[rng.Intn(3)], "spec", "owner")
	case 3:
		switch rng.Intn(3) {
		case 0:
			unstructured.RemoveNestedField(u.Object, "spec", "note")
		case 1:
			_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("n%d", rng.Intn(3)), "spec", "note")
		default:
			spec, _, _ := unstructured.NestedMap(u.Object, "spec")
			if spec == nil {
				spec = map[string]any{}
			}
			spec["note"] = nil
			u.Object["spec"] = spec
		}
	case 4:
		if rng.Intn(2) == 0 {
			unstructured.RemoveNestedField(u.Object, "spec", "resources")
		} else {
			_ = unstructured.SetNestedField(u.Object, []string{"32Mi", "128Mi"}[rng.Intn(2)], "spec", "resources", "memory")
		}
	case 5:
		appVolumeEdit(rng, u)
	default:
		_ = unstructured.SetNestedField(u.Object, fmt.Sprintf("y%d", rng.Intn(3)), "spec", "extra", "k", "other")
	}
	if rmw && rng.Intn(3) == 0 {
		// A read copy that leaves out the defaulted fields.
		unstructured.RemoveNestedField(u.Object, "spec", "maxReplicas")
		unstructured.RemoveNestedField(u.Object, "spec", "resources")
	}
}

func appVolumeEdit(rng *rand.Rand, u *unstructured.Unstructured) {
	vols, _, _ := unstructured.NestedSlice(u.Object, "spec", "volumes")
	n := fmt.Sprintf("v%d", rng.Intn(4))
	idx := -1
	for i, v := range vols {
		if v.(map[string]any)["name"] == n {
			idx = i
		}
	}
	switch {
	case idx < 0:
		vols = append(vols, map[string]any{"name": n})
	case rng.Intn(2) == 0:
		vols = append(vols[:idx], vols[idx+1:]...)
	default:
		vols[idx].(map[string]any)["size"] = int64(5 + rng.Intn(3))
		delete(vols[idx].(map[string]any), "readOnly")
	}
	_ = unstructured.SetNestedSlice(u.Object, vols, "spec", "volumes")
}

// appInvalidate makes a third of the desired changes something the
// server prunes, refuses or re-defaults, and says how: unknown fields, a
// wrong type, an enum, pattern, minimum or maximum violation, a CEL rule
// broken, the tier changed (the transition rule), replicas null.
func appInvalidate(rng *rand.Rand, u *unstructured.Unstructured) string {
	if rng.Intn(3) != 0 {
		return ""
	}
	set := func(v any, path ...string) { _ = unstructured.SetNestedField(u.Object, v, path...) }
	switch rng.Intn(9) {
	case 0:
		set("red", "spec", "color")
		u.Object["spare"] = "x"
		return "unknown fields"
	case 1:
		set("three", "spec", "replicas")
		return "wrong type"
	case 2:
		set("bronze", "spec", "tier")
		return "enum"
	case 3:
		set("Ann_1", "spec", "owner")
		return "pattern"
	case 4:
		set(int64(11), "spec", "replicas")
		set(int64(20), "spec", "maxReplicas")
		return "maximum"
	case 5:
		set(int64(-1), "spec", "replicas")
		return "minimum"
	case 6:
		set(int64(7), "spec", "replicas")
		set(int64(6), "spec", "maxReplicas")
		return "CEL rule"
	case 7:
		tier, _, _ := unstructured.NestedString(u.Object, "spec", "tier")
		if tier == "gold" {
			set("silver", "spec", "tier")
		} else {
			set("gold", "spec", "tier")
		}
		return "tier changed"
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	spec["replicas"] = nil
	u.Object["spec"] = spec
	return "replicas null"
}

// appGivenPatch returns a patch of a random type for part of the change:
// the labels and spec as a merge patch (removed keys as null, which the
// server re-defaults where a default exists), a strategic merge patch
// (415), replicas and labels as a JSON patch, or the desired object as an
// apply patch.
func appGivenPatch(rng *rand.Rand, live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
	pt, data := crGivenPatch(rng, live, desired, rv)
	if pt != predict.PatchJSON {
		return pt, data
	}
	var ops []map[string]any
	_ = json.Unmarshal(data, &ops)
	if r, ok, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "replicas"); ok {
		ops = append(ops, map[string]any{"op": "add", "path": "/spec/replicas", "value": r})
	}
	if _, ok := desired.Object["spare"]; ok {
		ops = append(ops, map[string]any{"op": "add", "path": "/spare", "value": "x"})
	}
	b, _ := json.Marshal(ops)
	return pt, b
}
