package apiserver

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// TypeInfo is what the simulated API server knows about one kind: the
// rules of its registry strategy (writepath.Type) and where its objects
// live in the store.
type TypeInfo struct {
	writepath.Type
	// KeyPrefix is the registry prefix of the resource without the trailing
	// slash: "/registry/deployments" for built-ins (the API server stores
	// them without their group), "/registry/<group>/<resource>" for custom
	// resources.
	KeyPrefix string
}

// Key returns the registry key of one object.
func (t *TypeInfo) Key(namespace, name string) string {
	if t.Namespaced {
		return t.KeyPrefix + "/" + namespace + "/" + name
	}
	return t.KeyPrefix + "/" + name
}

// ListPrefix returns the key prefix of a list in namespace ("" = all).
func (t *TypeInfo) ListPrefix(namespace string) string {
	if t.Namespaced && namespace != "" {
		return t.KeyPrefix + "/" + namespace + "/"
	}
	return t.KeyPrefix + "/"
}

// BuiltinTypes returns the built-in kinds the simulator knows
// (writepath.BuiltinTypes, with rules), stored under /registry/<resource>.
func BuiltinTypes(rules writepath.Rules) []*TypeInfo {
	var out []*TypeInfo
	for _, t := range writepath.BuiltinTypes(rules) {
		out = append(out, &TypeInfo{Type: t, KeyPrefix: "/registry/" + t.Resource})
	}
	return out
}

// CustomType returns the TypeInfo of a custom resource
// (writepath.CustomType), stored under its group.
func CustomType(gvk schema.GroupVersionKind, resource string, namespaced, statusSubresource bool) *TypeInfo {
	return &TypeInfo{
		Type:      writepath.CustomType(gvk, resource, namespaced, statusSubresource),
		KeyPrefix: "/registry/" + gvk.Group + "/" + resource,
	}
}

// Registry maps kinds to their TypeInfo.
type Registry struct {
	byGVK map[schema.GroupVersionKind]*TypeInfo
	byGK  map[schema.GroupKind]*TypeInfo
}

// NewRegistry returns a registry of the built-in types, with the
// defaulting and validation of rules (nil: none), plus extra.
func NewRegistry(rules writepath.Rules, extra ...*TypeInfo) (*Registry, error) {
	r := &Registry{byGVK: map[schema.GroupVersionKind]*TypeInfo{}, byGK: map[schema.GroupKind]*TypeInfo{}}
	for _, t := range append(BuiltinTypes(rules), extra...) {
		if _, dup := r.byGK[t.GVK.GroupKind()]; dup {
			return nil, fmt.Errorf("kind %s is declared twice", t.GVK.GroupKind())
		}
		r.byGVK[t.GVK] = t
		r.byGK[t.GVK.GroupKind()] = t
	}
	return r, nil
}

// Lookup returns the type of gvk, or an error naming the known kinds.
func (r *Registry) Lookup(gvk schema.GroupVersionKind) (*TypeInfo, error) {
	if t, ok := r.byGVK[gvk]; ok {
		return t, nil
	}
	if t, ok := r.byGK[gvk.GroupKind()]; ok {
		return nil, fmt.Errorf("no kind %q is registered for version %q in group %q: use %s", gvk.Kind, gvk.Version, gvk.Group, t.GVK.GroupVersion())
	}
	return nil, fmt.Errorf("unknown kind %s: known kinds are %s (declare custom resources under types)", gvk.GroupKind(), strings.Join(r.kinds(), ", "))
}

func (r *Registry) kinds() []string {
	var ks []string
	for gk := range r.byGK {
		ks = append(ks, gk.String())
	}
	sort.Strings(ks)
	return ks
}
