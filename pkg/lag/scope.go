package lag

import (
	"errors"
	"reflect"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

// Target is one resource type to scan.
type Target struct {
	// Resource is the group, version and resource (plural) served.
	Resource   schema.GroupVersionResource
	Kind       string
	Namespaced bool
	// Builtin says the type is compiled into client-go (not a custom or an
	// aggregated resource).
	Builtin bool
	// Expected says a controller is known to report observedGeneration for
	// every object of the type (the workload controllers of
	// kube-controller-manager), so an object without one has not been
	// observed yet. For the other types an object without observedGeneration
	// counts only when another object of the same type has one.
	Expected bool
}

// Name names the type the way kubectl does: deployments.apps, pods.
func (t Target) Name() string {
	return t.Resource.GroupResource().String()
}

// expectedObserved are the types whose controller (kube-controller-manager)
// always writes status.observedGeneration.
var expectedObserved = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "Deployment"}:                     true,
	{Group: "apps", Kind: "ReplicaSet"}:                     true,
	{Group: "apps", Kind: "StatefulSet"}:                    true,
	{Group: "apps", Kind: "DaemonSet"}:                      true,
	{Group: "", Kind: "ReplicationController"}:              true,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:          true,
}

// controlPlaneKinds are served by kube-apiserver itself but not compiled
// into client-go's scheme; their status carries no observedGeneration.
var controlPlaneKinds = []schema.GroupKind{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
}

// builtinKinds maps every built-in kind to whether its status has an
// observedGeneration field, from the Go types compiled into client-go. It
// is built on first use, not at start-up: every command of the binary
// would pay for its reflection over the whole scheme.
var builtinKinds = sync.OnceValue(func() map[schema.GroupKind]bool {
	m := map[schema.GroupKind]bool{}
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		gk := gvk.GroupKind()
		m[gk] = m[gk] || hasObservedGeneration(typ)
	}
	for _, gk := range controlPlaneKinds {
		m[gk] = false
	}
	return m
})

func hasObservedGeneration(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	st, ok := t.FieldByName("Status")
	if !ok || st.Type.Kind() != reflect.Struct {
		return false
	}
	_, ok = st.Type.FieldByName("ObservedGeneration")
	return ok
}

// ErrNoTypes is returned when discovery finds nothing to scan.
var ErrNoTypes = errors.New("the cluster serves no resource type that reports an observedGeneration")

// Discover returns the types the cluster serves whose objects can carry an
// observedGeneration: built-in types whose status has one (workloads, Pods,
// PodDisruptionBudgets, ...) and every custom or aggregated type, which may.
// Only types that can be listed and watched are returned; cluster-scoped
// types only when clusterScoped is set (with --all-namespaces). A discovery
// failure of some groups is returned as warnings beside the types found.
//
// Discovery itself is apitypes.Listable's.
func Discover(d discovery.DiscoveryInterface, clusterScoped bool) ([]Target, []string, error) {
	found, err := apitypes.Listable(d, clusterScoped)
	if err != nil {
		return nil, nil, err
	}
	var out []Target
	for _, t := range found.Types {
		lt := NewTarget(t.Resource, t.Kind, t.Namespaced)
		if lt.Builtin && !builtinKinds()[schema.GroupKind{Group: t.Resource.Group, Kind: t.Kind}] {
			continue
		}
		out = append(out, lt)
	}
	if len(out) == 0 {
		return nil, found.Warnings, ErrNoTypes
	}
	return out, found.Warnings, nil
}

// NewTarget describes a served type.
func NewTarget(gvr schema.GroupVersionResource, kind string, namespaced bool) Target {
	gk := schema.GroupKind{Group: gvr.Group, Kind: kind}
	_, builtin := builtinKinds()[gk]
	return Target{Resource: gvr, Kind: kind, Namespaced: namespaced, Builtin: builtin, Expected: expectedObserved[gk]}
}

// SortTargets orders targets by group, then resource.
func SortTargets(ts []Target) {
	sort.SliceStable(ts, func(i, j int) bool { return apitypes.Less(ts[i].Resource, ts[j].Resource) })
}
