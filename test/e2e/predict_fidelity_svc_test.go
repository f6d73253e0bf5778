//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

var predictServiceGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// svcPorts are the ports a Service of the corpus draws from: named, and
// the same port on UDP and TCP (which a strategic merge patch cannot
// express: it merges ports by port alone).
var svcPorts = []map[string]any{
	{"name": "http", "port": int64(80), "targetPort": int64(8080)},
	{"name": "dns-udp", "port": int64(53), "protocol": "UDP"},
	{"name": "dns-tcp", "port": int64(53), "protocol": "TCP"},
	{"name": "metrics", "port": int64(9090)},
}

// svcCorpus generates the Service cases. It has generators of its own, so
// the other cases of a seed stay those they were before Services joined
// the corpus (only fewer of them).
type svcCorpus struct {
	rng *rand.Rand
	ri  dynamic.ResourceInterface
	// Types and Affinity count the desired changes that change the type
	// or the session affinity of a live Service.
	Types, Affinity int
}

func newSvcCorpus(dyn dynamic.Interface, ns string, seed int64) *svcCorpus {
	return &svcCorpus{rng: rand.New(rand.NewSource(seed + 6)), ri: dyn.Resource(predictServiceGVR).Namespace(ns)}
}

// next reports whether a case that is not a custom resource is a Service
// (a fifth of them).
func (sc *svcCorpus) next() bool { return sc.rng.Intn(5) == 0 }

// build writes one Service through 1-4 managers (creates, applies and
// read-modify-write updates) and returns the desired change: a type
// (ClusterIP, NodePort) or session affinity change, a port added, removed
// or retargeted, a label, an internal traffic policy.
func (sc *svcCorpus) build(t *testing.T, ctx context.Context, ns string, i int, invalid *rand.Rand) (fidelityCase, *unstructured.Unstructured, predict.Input) {
	t.Helper()
	rng := sc.rng
	c := fidelityCase{ID: i, Kind: "Service"}
	name := fmt.Sprintf("s%03d", i)
	live, rvs, nManagers := writeByManagers(t, ctx, sc.ri, rng, i, name, func(mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return sc.write(ctx, &c, cur, name, ns, mgr)
	})
	in, desired := drawChange(changeDraw{rng: rng, patches: rng, emptyOneIn: 8,
		seed:    func() *unstructured.Unstructured { return svcSeed(rng, name, ns, "writer") },
		mutate:  func(u *unstructured.Unstructured, _ bool) { svcMutate(rng, u) },
		invalid: func(u *unstructured.Unstructured) string { return invalidate(invalid, "Service", u) },
		given: func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
			return svcGivenPatch(rng, live, desired, rv)
		},
	}, &c, live, rvs, nManagers, ns, name)
	if svcField(live, "type") != svcField(desired, "type") {
		sc.Types++
	}
	if svcField(live, "sessionAffinity") != svcField(desired, "sessionAffinity") {
		sc.Affinity++
	}
	return c, live, in
}

// svcField is a Service's spec field as the server defaults it.
func svcField(u *unstructured.Unstructured, f string) string {
	v, _, _ := unstructured.NestedString(u.Object, "spec", f)
	if v == "" {
		v = map[string]string{"type": "ClusterIP", "sessionAffinity": "None"}[f]
	}
	return v
}

// write makes one write of a Service by mgr over cur: a create or apply
// first, then applies (forced or not) and read-modify-write updates.
func (sc *svcCorpus) write(ctx context.Context, c *fidelityCase, cur *unstructured.Unstructured, name, ns, mgr string) (*unstructured.Unstructured, error) {
	rng := sc.rng
	if cur != nil && rng.Intn(2) == 0 {
		next := cur.DeepCopy()
		svcMutate(rng, next)
		c.Writes = append(c.Writes, mgr+":update")
		return sc.ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
	}
	cfg := svcSeed(rng, name, ns, mgr)
	if cur != nil {
		svcMutate(rng, cfg)
	}
	if cur == nil && rng.Intn(2) == 0 {
		c.Writes = append(c.Writes, mgr+":create")
		return sc.ri.Create(ctx, cfg, metav1.CreateOptions{FieldManager: mgr})
	}
	force := rng.Intn(3) > 0
	c.Writes = append(c.Writes, fmt.Sprintf("%s:apply(force=%v)", mgr, force))
	b, _ := json.Marshal(cfg.Object)
	obj, err := sc.ri.Patch(ctx, name, types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: mgr, Force: &force})
	if err != nil && !force {
		// A conflicting apply without force leaves the object as it was.
		return cur, nil
	}
	return obj, err
}

// svcSeed returns a valid Service manifest whose content depends on rng:
// 1-3 named ports, ClusterIP (often left to the default) or NodePort, a
// session affinity or none.
func svcSeed(rng *rand.Rand, name, ns, mgr string) *unstructured.Unstructured {
	u := seedMeta(rng, "v1", "Service", name, ns, mgr)
	var ports []any
	for _, k := range rng.Perm(len(svcPorts))[:1+rng.Intn(3)] {
		ports = append(ports, copyPort(svcPorts[k]))
	}
	spec := map[string]any{"selector": map[string]any{"app": name}, "ports": ports}
	switch rng.Intn(3) {
	case 0:
		spec["type"] = "NodePort"
	case 1:
		spec["type"] = "ClusterIP"
	}
	switch rng.Intn(4) {
	case 0:
		spec["sessionAffinity"] = "ClientIP"
		if rng.Intn(2) == 0 {
			spec["sessionAffinityConfig"] = map[string]any{"clientIP": map[string]any{"timeoutSeconds": int64(600)}}
		}
	case 1:
		spec["sessionAffinity"] = "None"
	}
	u.Object["spec"] = spec
	return u
}

// svcPortKey is a Service port's key in server-side apply: port and
// protocol (TCP when left out).
func svcPortKey(p map[string]any) string {
	proto, _ := p["protocol"].(string)
	if proto == "" {
		proto = "TCP"
	}
	return fmt.Sprintf("%v/%s", p["port"], proto)
}

func copyPort(p map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		out[k] = v
	}
	return out
}

// svcMutate makes one random edit of a Service: its type, its session
// affinity (a read copy keeps the affinity config, which the server's
// defaulting drops with affinity None), a port added, removed or
// retargeted, its internal traffic policy, or a label.
func svcMutate(rng *rand.Rand, u *unstructured.Unstructured) {
	spec, _ := u.Object["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		u.Object["spec"] = spec
	}
	ports, _ := spec["ports"].([]any)
	switch rng.Intn(6) {
	case 0:
		spec["type"] = []string{"ClusterIP", "NodePort"}[rng.Intn(2)]
	case 1:
		spec["sessionAffinity"] = []string{"ClientIP", "None"}[rng.Intn(2)]
	case 2:
		p := copyPort(svcPorts[rng.Intn(len(svcPorts))])
		for _, q := range ports {
			if qm := q.(map[string]any); qm["name"] == p["name"] || svcPortKey(qm) == svcPortKey(p) {
				return
			}
		}
		spec["ports"] = append(ports, p)
	case 3:
		if len(ports) > 1 {
			k := rng.Intn(len(ports))
			spec["ports"] = append(ports[:k:k], ports[k+1:]...)
		}
	case 4:
		if len(ports) > 0 {
			ports[rng.Intn(len(ports))].(map[string]any)["targetPort"] = int64(8000 + rng.Intn(3))
		}
	case 5:
		if rng.Intn(2) == 0 {
			spec["internalTrafficPolicy"] = []string{"Cluster", "Local"}[rng.Intn(2)]
		} else {
			setRandomLabel(rng, u)
		}
	}
}

// svcGivenPatch returns a patch of a random type that makes the change
// from live to desired as a user would write it by hand: the desired
// Service applied, or a merge, strategic merge or JSON patch of its
// labels, type, session affinity and ports (the strategic one merges ports
// by port, so a port on UDP and TCP is a server error: issue 15, defect 1).
func svcGivenPatch(rng *rand.Rand, live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
	pt := []predict.PatchType{predict.PatchJSON, predict.PatchMerge, predict.PatchStrategic, predict.PatchApply}[rng.Intn(4)]
	spec, _ := desired.Object["spec"].(map[string]any)
	var b []byte
	switch pt {
	case predict.PatchApply:
		b, _ = json.Marshal(desired.Object)
	case predict.PatchJSON:
		ops := []map[string]any{}
		if rv != "" && rng.Intn(2) == 0 {
			ops = append(ops, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
		}
		for _, f := range []string{"type", "sessionAffinity", "ports"} {
			if v, ok := spec[f]; ok {
				ops = append(ops, map[string]any{"op": "add", "path": "/spec/" + f, "value": v})
			}
		}
		b, _ = json.Marshal(ops)
	default:
		patch := map[string]any{"metadata": map[string]any{"labels": desired.GetLabels()}}
		ps := map[string]any{}
		for _, f := range []string{"type", "sessionAffinity", "ports"} {
			if v, ok := spec[f]; ok {
				ps[f] = v
			}
		}
		patch["spec"] = ps
		b, _ = json.Marshal(patch)
	}
	return pt, b
}

// invalidate makes, one desired change in eight (drawn from rng, a
// generator of its own), a manifest the server's validation refuses with
// 422, as the corpus found: a Deployment without containers, with
// a volume mount of no volume, or whose selector does not match its
// template's labels; a Service with several ports and one unnamed. It
// returns what it did, or "".
func invalidate(rng *rand.Rand, kind string, u *unstructured.Unstructured) string {
	if rng.Intn(8) != 0 {
		return ""
	}
	switch kind {
	case "Deployment":
		switch rng.Intn(3) {
		case 0:
			_ = unstructured.SetNestedSlice(u.Object, []any{}, "spec", "template", "spec", "containers")
			return "no containers"
		case 1:
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if len(cs) == 0 {
				return ""
			}
			cs[0].(map[string]any)["volumeMounts"] = []any{map[string]any{"name": "data", "mountPath": "/data"}}
			_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
			return "a volume mount of no volume"
		default:
			_ = unstructured.SetNestedField(u.Object, "other", "spec", "template", "metadata", "labels", "app")
			return "a selector that does not match the template"
		}
	case "Service":
		ports, _, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
		if len(ports) < 2 {
			ports = append(ports, copyPort(svcPorts[3]))
		}
		delete(ports[0].(map[string]any), "name")
		_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
		return "several ports, one unnamed"
	}
	return ""
}
