package apitypes

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// Type is one served resource type.
type Type struct {
	// Resource is the group, version and resource (plural) served.
	Resource   schema.GroupVersionResource
	Kind       string
	Namespaced bool
}

// Name names the type the way kubectl does: deployments.apps, pods.
func (t Type) Name() string { return t.Resource.GroupResource().String() }

// Discovered is what discovery found: the types, and warnings for the groups
// it could not read (an aggregated API that is down, say), whose types are
// then missing.
type Discovered struct {
	Types    []Type
	Warnings []string
}

// Listable returns every type the cluster serves, at its preferred version,
// that can be listed and watched (subresources are left out), sorted by
// group then resource. Cluster-scoped types are returned only when
// clusterScoped is set. A discovery failure of some groups becomes a warning
// beside the types found; a failure of all of them is an error.
//
// A cached discovery client is invalidated first: a stale cache (kubectl
// keeps one for hours) would silently leave out custom resource types
// created since.
func Listable(d discovery.DiscoveryInterface, clusterScoped bool) (Discovered, error) {
	if c, ok := d.(discovery.CachedDiscoveryInterface); ok {
		c.Invalidate()
	}
	lists, err := discovery.ServerPreferredResources(d)
	var out Discovered
	if err != nil {
		var gdf *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &gdf) || len(lists) == 0 {
			return Discovered{}, fmt.Errorf("discovering the served resource types: %w", err)
		}
		groups := make([]string, 0, len(gdf.Groups))
		for gv, e := range gdf.Groups {
			groups = append(groups, fmt.Sprintf("%s (%v)", gv, e))
		}
		sort.Strings(groups)
		out.Warnings = append(out.Warnings, "discovery failed for "+strings.Join(groups, ", ")+"; their types are left out")
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !HasVerbs(r, "list", "watch") || !r.Namespaced && !clusterScoped {
				continue
			}
			out.Types = append(out.Types, Type{Resource: gv.WithResource(r.Name), Kind: r.Kind, Namespaced: r.Namespaced})
		}
	}
	Sort(out.Types)
	return out, nil
}

// Sort orders types by group, then resource.
func Sort(ts []Type) {
	sort.SliceStable(ts, func(i, j int) bool { return Less(ts[i].Resource, ts[j].Resource) })
}

// Less is the order of types in every listing: by group, then resource.
func Less(a, b schema.GroupVersionResource) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	return a.Resource < b.Resource
}

// HasVerbs reports whether r supports every verb.
func HasVerbs(r metav1.APIResource, verbs ...string) bool {
	for _, v := range verbs {
		if !slices.Contains(r.Verbs, v) {
			return false
		}
	}
	return true
}

// CollectionPath is a collection's URL path: /api/v1/namespaces/ns/pods,
// /apis/apps/v1/deployments. namespace "" (or a cluster-scoped type) gives
// the path across all namespaces.
func CollectionPath(t Type, namespace string) string {
	p := "/apis/" + t.Resource.Group + "/" + t.Resource.Version
	if t.Resource.Group == "" {
		p = "/api/" + t.Resource.Version
	}
	if t.Namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	return p + "/" + t.Resource.Resource
}
