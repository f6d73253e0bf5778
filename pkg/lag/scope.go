package lag

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes/scheme"
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
// observedGeneration field, from the Go types compiled into client-go.
var builtinKinds = func() map[schema.GroupKind]bool {
	m := map[schema.GroupKind]bool{}
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		gk := gvk.GroupKind()
		m[gk] = m[gk] || hasObservedGeneration(typ)
	}
	for _, gk := range controlPlaneKinds {
		m[gk] = false
	}
	return m
}()

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
// A cached discovery client is invalidated first: a stale cache (kubectl
// keeps one for hours) would silently leave out custom resource types
// created since.
func Discover(d discovery.DiscoveryInterface, clusterScoped bool) ([]Target, []string, error) {
	if c, ok := d.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
	lists, err := discovery.ServerPreferredResources(d)
	var warnings []string
	if err != nil {
		var gdf *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gdf) || len(lists) == 0 {
			return nil, nil, fmt.Errorf("discovering the served resource types: %w", err)
		}
		groups := make([]string, 0, len(gdf.Groups))
		for gv, e := range gdf.Groups {
			groups = append(groups, fmt.Sprintf("%s (%v)", gv, e))
		}
		sort.Strings(groups)
		warnings = append(warnings, "discovery failed for "+strings.Join(groups, ", ")+"; their types are not scanned")
	}
	var out []Target
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r, "list", "watch") {
				continue
			}
			if !r.Namespaced && !clusterScoped {
				continue
			}
			t := NewTarget(gv.WithResource(r.Name), r.Kind, r.Namespaced)
			if t.Builtin && !builtinKinds[schema.GroupKind{Group: gv.Group, Kind: r.Kind}] {
				continue
			}
			out = append(out, t)
		}
	}
	SortTargets(out)
	if len(out) == 0 {
		return nil, warnings, ErrNoTypes
	}
	return out, warnings, nil
}

// NewTarget describes a served type.
func NewTarget(gvr schema.GroupVersionResource, kind string, namespaced bool) Target {
	gk := schema.GroupKind{Group: gvr.Group, Kind: kind}
	_, builtin := builtinKinds[gk]
	return Target{Resource: gvr, Kind: kind, Namespaced: namespaced, Builtin: builtin, Expected: expectedObserved[gk]}
}

// SortTargets orders targets by group, then resource.
func SortTargets(ts []Target) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ts[i].Resource, ts[j].Resource
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Resource < b.Resource
	})
}

func hasVerbs(r metav1.APIResource, verbs ...string) bool {
	for _, v := range verbs {
		found := false
		for _, have := range r.Verbs {
			if have == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
