//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// kindGen generates the objects of one kind of the kinds corpus (#29):
// seed makes a valid manifest that leaves defaulted fields out as often
// as not (a fixed part for name, such as a Job's immutable template, so
// that later writes by other managers stay valid), edit makes a valid
// edit that setup writes may make too, change an edit of a desired change
// that may touch an immutable field, and invalid a value the server's
// validation refuses (saying which).
type kindGen struct {
	gvr        schema.GroupVersionResource
	apiVersion string
	kind       string
	seed       func(rng *rand.Rand, u *unstructured.Unstructured)
	edit       func(rng *rand.Rand, u *unstructured.Unstructured)
	change     func(rng *rand.Rand, u *unstructured.Unstructured) string
	invalid    func(rng *rand.Rand, u *unstructured.Unstructured) string
}

// kindsCorpus generates the cases of Jobs, CronJobs, HPAs (autoscaling/v2),
// Ingresses, PDBs and Leases. Its generators are its own, so the other
// cases of a seed stay those they were before these kinds joined (only
// fewer of them).
type kindsCorpus struct {
	rng  *rand.Rand
	dyn  dynamic.Interface
	gens []kindGen
	// Immutable counts the desired changes that touch an immutable field,
	// Invalid those made invalid.
	Immutable, Invalid int
}

func newKindsCorpus(dyn dynamic.Interface, seed int64) *kindsCorpus {
	return &kindsCorpus{rng: rand.New(rand.NewSource(seed + 8)), dyn: dyn,
		gens: []kindGen{jobGen(), cronJobGen(), hpaGen(), ingressGen(), pdbGen(), leaseGen()}}
}

// next reports whether a case that is neither a custom resource nor a
// Service is one of these kinds (two in five).
func (kc *kindsCorpus) next() bool { return kc.rng.Intn(5) < 2 }

// build writes one object through 1-4 managers (creates, applies and
// read-modify-write updates) and returns the desired change and the
// object's resource.
func (kc *kindsCorpus) build(t *testing.T, ctx context.Context, ns string, i int) (fidelityCase, *unstructured.Unstructured, predict.Input, dynamic.ResourceInterface) {
	t.Helper()
	rng := kc.rng
	g := kc.gens[rng.Intn(len(kc.gens))]
	c := fidelityCase{ID: i, Kind: g.kind}
	name := fmt.Sprintf("k%03d", i)
	ri := kc.dyn.Resource(g.gvr).Namespace(ns)
	seed := func(mgr string) *unstructured.Unstructured {
		u := seedMeta(rng, g.apiVersion, g.kind, name, ns, mgr)
		g.seed(rng, u)
		return u
	}
	live, rvs, nManagers := writeByManagers(t, ctx, ri, rng, i, name, func(mgr string, cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return kc.write(ctx, ri, g, &c, cur, seed(mgr), mgr)
	})
	invalidDraw := func(u *unstructured.Unstructured) string {
		if rng.Intn(6) != 0 {
			return ""
		}
		kc.Invalid++
		return g.invalid(rng, u)
	}
	in, _ := drawChange(changeDraw{rng: rng, patches: rng, emptyOneIn: 8,
		seed: func() *unstructured.Unstructured { return seed("writer") },
		mutate: func(u *unstructured.Unstructured, _ bool) {
			if rng.Intn(4) == 0 && g.change != nil {
				if what := g.change(rng, u); what != "" {
					kc.Immutable++
					c.Desired += " (" + what + ")"
				}
				return
			}
			g.edit(rng, u)
		},
		invalid: invalidDraw,
		given:   kindsGivenPatch(rng),
	}, &c, live, rvs, nManagers, ns, name)
	return c, live, in, ri
}

// write makes one write by mgr over cur: a create or apply of cfg first,
// then applies (forced or not) of an edited cfg and read-modify-write
// updates.
func (kc *kindsCorpus) write(ctx context.Context, ri dynamic.ResourceInterface, g kindGen, c *fidelityCase, cur, cfg *unstructured.Unstructured, mgr string) (*unstructured.Unstructured, error) {
	rng := kc.rng
	if cur != nil && rng.Intn(2) == 0 {
		next := cur.DeepCopy()
		g.edit(rng, next)
		c.Writes = append(c.Writes, mgr+":update")
		return ri.Update(ctx, next, metav1.UpdateOptions{FieldManager: mgr})
	}
	if cur != nil {
		g.edit(rng, cfg)
	}
	if cur == nil && rng.Intn(2) == 0 {
		c.Writes = append(c.Writes, mgr+":create")
		return ri.Create(ctx, cfg, metav1.CreateOptions{FieldManager: mgr})
	}
	force := rng.Intn(3) > 0
	c.Writes = append(c.Writes, fmt.Sprintf("%s:apply(force=%v)", mgr, force))
	b, _ := json.Marshal(cfg.Object)
	obj, err := ri.Patch(ctx, cfg.GetName(), types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: mgr, Force: &force})
	if err != nil && !force {
		// A conflicting apply without force leaves the object as it was.
		return cur, nil
	}
	return obj, err
}

// kindsGivenPatch returns a patch of a random type that makes the change
// from live to desired as a user would write it by hand: the desired
// object applied, a merge or strategic merge patch of its labels (a
// removed one as null) and spec, or a JSON patch that adds its labels and
// replaces its spec, testing the resourceVersion first when rv is set.
func kindsGivenPatch(rng *rand.Rand) func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
	return func(live, desired *unstructured.Unstructured, rv string) (predict.PatchType, []byte) {
		pt := []predict.PatchType{predict.PatchJSON, predict.PatchMerge, predict.PatchStrategic, predict.PatchApply}[rng.Intn(4)]
		spec, hasSpec := desired.Object["spec"]
		var v any
		switch pt {
		case predict.PatchApply:
			v = desired.Object
		case predict.PatchJSON:
			ops := []map[string]any{}
			if rv != "" && rng.Intn(2) == 0 {
				ops = append(ops, map[string]any{"op": "test", "path": "/metadata/resourceVersion", "value": rv})
			}
			labels := desired.GetLabels()
			for _, k := range slices.Sorted(maps.Keys(labels)) {
				ops = append(ops, map[string]any{"op": "add", "path": "/metadata/labels/" + k, "value": labels[k]})
			}
			if hasSpec {
				ops = append(ops, map[string]any{"op": "replace", "path": "/spec", "value": spec})
			}
			v = ops
		default:
			patch := map[string]any{"metadata": map[string]any{"labels": patchLabels(rng, live, desired)}}
			if hasSpec {
				patch["spec"] = spec
			}
			v = patch
		}
		b, _ := json.Marshal(v)
		return pt, b
	}
}

// set sets a field of u, creating the maps on the way.
func set(u *unstructured.Unstructured, v any, path ...string) {
	_ = unstructured.SetNestedField(u.Object, v, path...)
}

// sometimes sets a field of u half of the time, and leaves it out (to the
// server's default, where it has one) otherwise.
func sometimes(rng *rand.Rand, u *unstructured.Unstructured, v any, path ...string) {
	if rng.Intn(2) == 0 {
		set(u, v, path...)
	}
}

// podTemplate is a pod template whose image depends on name only, so
// that every write of one Job carries the same (immutable) template; the
// restart policy, the pull policy and the termination message path are
// left to the server's defaults as often as not.
func podTemplate(rng *rand.Rand, name, restart string) map[string]any {
	c := map[string]any{"name": "main", "image": fmt.Sprintf("registry.example/%s:1", name)}
	u := &unstructured.Unstructured{Object: map[string]any{"c": c}}
	sometimes(rng, u, "IfNotPresent", "c", "imagePullPolicy")
	sometimes(rng, u, "/dev/termination-log", "c", "terminationMessagePath")
	spec := map[string]any{"restartPolicy": restart, "containers": []any{c}}
	return map[string]any{"spec": spec}
}

func jobGen() kindGen {
	return kindGen{
		gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, apiVersion: "batch/v1", kind: "Job",
		seed: func(rng *rand.Rand, u *unstructured.Unstructured) {
			set(u, podTemplate(rng, u.GetName(), "Never"), "spec", "template")
			// Always set: without parallelism (and completions) the
			// defaults set completions, which is immutable, so that a
			// manager that applies it after one that did not is refused.
			set(u, int64(1+rng.Intn(3)), "spec", "parallelism")
			sometimes(rng, u, int64(6), "spec", "backoffLimit")
			sometimes(rng, u, "NonIndexed", "spec", "completionMode")
		},
		edit: func(rng *rand.Rand, u *unstructured.Unstructured) {
			switch rng.Intn(4) {
			case 0:
				set(u, int64(1+rng.Intn(4)), "spec", "parallelism")
			case 1:
				set(u, int64(60*(1+rng.Intn(5))), "spec", "activeDeadlineSeconds")
			case 2:
				set(u, int64(100*(1+rng.Intn(3))), "spec", "ttlSecondsAfterFinished")
			default:
				setRandomLabel(rng, u)
			}
		},
		change: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
				if len(cs) == 0 {
					return ""
				}
				cs[0].(map[string]any)["image"] = "registry.example/other:2"
				_ = unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers")
				return "the template's image, immutable"
			}
			set(u, int64(2+rng.Intn(3)), "spec", "completions")
			return "completions, immutable"
		},
		invalid: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				set(u, int64(-1), "spec", "parallelism")
				return "parallelism -1"
			}
			set(u, "Always", "spec", "template", "spec", "restartPolicy")
			return "restartPolicy Always"
		},
	}
}

// schedules are valid cron schedules.
var schedules = []string{"*/5 * * * *", "0 * * * *", "30 2 * * 1", "@hourly"}

func cronJobGen() kindGen {
	return kindGen{
		gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, apiVersion: "batch/v1", kind: "CronJob",
		seed: func(rng *rand.Rand, u *unstructured.Unstructured) {
			set(u, schedules[rng.Intn(len(schedules))], "spec", "schedule")
			set(u, podTemplate(rng, u.GetName(), "OnFailure"), "spec", "jobTemplate", "spec", "template")
			sometimes(rng, u, "Allow", "spec", "concurrencyPolicy")
			sometimes(rng, u, int64(3), "spec", "successfulJobsHistoryLimit")
			sometimes(rng, u, int64(1), "spec", "failedJobsHistoryLimit")
			sometimes(rng, u, false, "spec", "suspend")
		},
		edit: func(rng *rand.Rand, u *unstructured.Unstructured) {
			switch rng.Intn(5) {
			case 0:
				set(u, schedules[rng.Intn(len(schedules))], "spec", "schedule")
			case 1:
				set(u, []string{"Allow", "Forbid", "Replace"}[rng.Intn(3)], "spec", "concurrencyPolicy")
			case 2:
				set(u, int64(rng.Intn(5)), "spec", "failedJobsHistoryLimit")
			case 3:
				set(u, rng.Intn(2) == 0, "spec", "suspend")
			default:
				setRandomLabel(rng, u)
			}
		},
		invalid: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				set(u, "61 * * * *", "spec", "schedule")
				return "a schedule with minute 61"
			}
			set(u, "Sometimes", "spec", "concurrencyPolicy")
			return "concurrencyPolicy Sometimes"
		},
	}
}

func hpaGen() kindGen {
	return kindGen{
		gvr: schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}, apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler",
		seed: func(rng *rand.Rand, u *unstructured.Unstructured) {
			set(u, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": u.GetName()}, "spec", "scaleTargetRef")
			sometimes(rng, u, int64(1+rng.Intn(2)), "spec", "minReplicas")
			set(u, int64(3+rng.Intn(4)), "spec", "maxReplicas")
			if rng.Intn(2) == 0 {
				set(u, []any{cpuMetric(int64(50 + 10*rng.Intn(4)))}, "spec", "metrics")
			}
		},
		edit: func(rng *rand.Rand, u *unstructured.Unstructured) {
			switch rng.Intn(4) {
			case 0:
				set(u, int64(3+rng.Intn(4)), "spec", "maxReplicas")
			case 1:
				set(u, int64(1+rng.Intn(2)), "spec", "minReplicas")
			case 2:
				set(u, []any{cpuMetric(int64(50 + 10*rng.Intn(4)))}, "spec", "metrics")
			default:
				setRandomLabel(rng, u)
			}
		},
		invalid: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				set(u, int64(5), "spec", "minReplicas")
				set(u, int64(2), "spec", "maxReplicas")
				return "minReplicas 5 > maxReplicas 2"
			}
			set(u, int64(0), "spec", "minReplicas")
			return "minReplicas 0"
		},
	}
}

func cpuMetric(utilization int64) map[string]any {
	return map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
		"target": map[string]any{"type": "Utilization", "averageUtilization": utilization}}}
}

// ingressPath is one path of an Ingress rule.
func ingressPath(path, pathType string, port int64) map[string]any {
	return map[string]any{"path": path, "pathType": pathType,
		"backend": map[string]any{"service": map[string]any{"name": "web", "port": map[string]any{"number": port}}}}
}

func ingressGen() kindGen {
	paths := func(rng *rand.Rand) []any {
		var out []any
		for k, p := range []string{"/", "/api", "/static"}[:1+rng.Intn(3)] {
			out = append(out, ingressPath(p, []string{"Prefix", "Exact", "ImplementationSpecific"}[(k+rng.Intn(3))%3], int64(80+rng.Intn(2))))
		}
		return out
	}
	return kindGen{
		gvr: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, apiVersion: "networking.k8s.io/v1", kind: "Ingress",
		seed: func(rng *rand.Rand, u *unstructured.Unstructured) {
			set(u, []any{map[string]any{"host": u.GetName() + ".example", "http": map[string]any{"paths": paths(rng)}}}, "spec", "rules")
			sometimes(rng, u, "nginx", "spec", "ingressClassName")
		},
		edit: func(rng *rand.Rand, u *unstructured.Unstructured) {
			switch rng.Intn(3) {
			case 0:
				set(u, []any{map[string]any{"host": u.GetName() + ".example", "http": map[string]any{"paths": paths(rng)}}}, "spec", "rules")
			case 1:
				set(u, []string{"nginx", "traefik"}[rng.Intn(2)], "spec", "ingressClassName")
			default:
				setRandomLabel(rng, u)
			}
		},
		invalid: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				set(u, []any{map[string]any{"host": "a.example", "http": map[string]any{"paths": []any{ingressPath("/", "Regex", 80)}}}}, "spec", "rules")
				return "pathType Regex"
			}
			set(u, []any{map[string]any{"host": "a.example", "http": map[string]any{"paths": []any{ingressPath("api", "Prefix", 80)}}}}, "spec", "rules")
			return "a Prefix path without a leading slash"
		},
	}
}

func pdbGen() kindGen {
	// budget sets the budget: minAvailable or maxUnavailable, by name, so
	// that managers that apply different values never set both.
	budget := func(rng *rand.Rand, u *unstructured.Unstructured) {
		field := "minAvailable"
		if n := u.GetName(); n[len(n)-1]%2 == 1 {
			field = "maxUnavailable"
		}
		set(u, []any{int64(1 + rng.Intn(2)), "50%"}[rng.Intn(2)], "spec", field)
	}
	return kindGen{
		gvr: schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, apiVersion: "policy/v1", kind: "PodDisruptionBudget",
		seed: func(rng *rand.Rand, u *unstructured.Unstructured) {
			set(u, map[string]any{"matchLabels": map[string]any{"app": u.GetName()}}, "spec", "selector")
			budget(rng, u)
			sometimes(rng, u, "IfHealthyBudget", "spec", "unhealthyPodEvictionPolicy")
		},
		edit: func(rng *rand.Rand, u *unstructured.Unstructured) {
			switch rng.Intn(3) {
			case 0:
				budget(rng, u)
			case 1:
				set(u, []string{"IfHealthyBudget", "AlwaysAllow"}[rng.Intn(2)], "spec", "unhealthyPodEvictionPolicy")
			default:
				setRandomLabel(rng, u)
			}
		},
		invalid: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				set(u, int64(1), "spec", "minAvailable")
				set(u, int64(1), "spec", "maxUnavailable")
				return "minAvailable and maxUnavailable"
			}
			spec, _, _ := unstructured.NestedMap(u.Object, "spec")
			delete(spec, "maxUnavailable")
			u.Object["spec"] = spec
			set(u, "150%", "spec", "minAvailable")
			return "minAvailable 150%"
		},
	}
}

func leaseGen() kindGen {
	return kindGen{
		gvr: schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}, apiVersion: "coordination.k8s.io/v1", kind: "Lease",
		seed: func(rng *rand.Rand, u *unstructured.Unstructured) {
			set(u, fmt.Sprintf("holder-%d", rng.Intn(3)), "spec", "holderIdentity")
			sometimes(rng, u, int64(15*(1+rng.Intn(3))), "spec", "leaseDurationSeconds")
			sometimes(rng, u, int64(rng.Intn(4)), "spec", "leaseTransitions")
		},
		edit: func(rng *rand.Rand, u *unstructured.Unstructured) {
			switch rng.Intn(4) {
			case 0:
				set(u, fmt.Sprintf("holder-%d", rng.Intn(3)), "spec", "holderIdentity")
			case 1:
				set(u, int64(15*(1+rng.Intn(3))), "spec", "leaseDurationSeconds")
			case 2:
				set(u, fmt.Sprintf("2026-11-27T10:%02d:00.000000Z", rng.Intn(60)), "spec", "renewTime")
			default:
				setRandomLabel(rng, u)
			}
		},
		invalid: func(rng *rand.Rand, u *unstructured.Unstructured) string {
			if rng.Intn(2) == 0 {
				set(u, int64(0), "spec", "leaseDurationSeconds")
				return "leaseDurationSeconds 0"
			}
			set(u, int64(-1), "spec", "leaseTransitions")
			return "leaseTransitions -1"
		},
	}
}
