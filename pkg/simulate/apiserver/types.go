package apiserver

import (
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GenerationRule says when an update bumps metadata.generation. The rules
// are the registry strategies' (PrepareForUpdate) of each type.
type GenerationRule int

// The generation rules.
const (
	// GenerationNone: the type has no generation (ConfigMap, Lease, ...).
	GenerationNone GenerationRule = iota
	// GenerationSpec: a change of .spec bumps it (ReplicaSet, StatefulSet,
	// DaemonSet, Pod).
	GenerationSpec
	// GenerationSpecAndAnnotations: a change of .spec or of the annotations
	// bumps it (Deployment).
	GenerationSpecAndAnnotations
	// GenerationNonMetadata: a change anywhere outside .metadata (and outside
	// .status when the status subresource is on) bumps it (custom resources).
	GenerationNonMetadata
)

// TypeInfo is what the simulated API server knows about one kind: where its
// objects live in the store and which registry strategy rules apply.
type TypeInfo struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, e.g. "deployments".
	Resource   string
	Namespaced bool
	// KeyPrefix is the registry prefix of the resource without the trailing
	// slash: "/registry/deployments" for built-ins (the API server stores
	// them without their group), "/registry/<group>/<resource>" for custom
	// resources.
	KeyPrefix string
	// StatusSubresource makes /status the only way to write .status, and
	// main-resource writes ignore .status.
	StatusSubresource bool
	// AllowUnconditionalUpdate lets an update without resourceVersion
	// overwrite the stored object (last write wins); without it such an
	// update is rejected with 422, as for custom resources.
	AllowUnconditionalUpdate bool
	Generation               GenerationRule
	// New returns the Go type of a built-in kind, whose struct tags carry
	// the strategic-merge-patch metadata; nil for custom resources, which
	// refuse strategic merge patch as the API server does.
	New func() runtime.Object
}

// GroupResource returns the type's group and resource, as errors name it.
func (t *TypeInfo) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: t.GVK.Group, Resource: t.Resource}
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

func builtin(group, version, kind, resource string, namespaced, status bool, gen GenerationRule, newObj func() runtime.Object) *TypeInfo {
	return &TypeInfo{
		GVK:                      schema.GroupVersionKind{Group: group, Version: version, Kind: kind},
		Resource:                 resource,
		Namespaced:               namespaced,
		KeyPrefix:                "/registry/" + resource,
		StatusSubresource:        status,
		AllowUnconditionalUpdate: true,
		Generation:               gen,
		New:                      newObj,
	}
}

// BuiltinTypes returns the built-in kinds the simulator knows, with the
// rules of their registry strategies in Kubernetes 1.36.
func BuiltinTypes() []*TypeInfo {
	return []*TypeInfo{
		builtin("", "v1", "ConfigMap", "configmaps", true, false, GenerationNone, func() runtime.Object { return &corev1.ConfigMap{} }),
		builtin("", "v1", "Secret", "secrets", true, false, GenerationNone, func() runtime.Object { return &corev1.Secret{} }),
		builtin("", "v1", "Pod", "pods", true, true, GenerationSpec, func() runtime.Object { return &corev1.Pod{} }),
		builtin("", "v1", "Service", "services", true, true, GenerationNone, func() runtime.Object { return &corev1.Service{} }),
		builtin("", "v1", "ResourceQuota", "resourcequotas", true, true, GenerationNone, func() runtime.Object { return &corev1.ResourceQuota{} }),
		builtin("", "v1", "Namespace", "namespaces", false, true, GenerationNone, func() runtime.Object { return &corev1.Namespace{} }),
		builtin("apps", "v1", "Deployment", "deployments", true, true, GenerationSpecAndAnnotations, func() runtime.Object { return &appsv1.Deployment{} }),
		builtin("apps", "v1", "ReplicaSet", "replicasets", true, true, GenerationSpec, func() runtime.Object { return &appsv1.ReplicaSet{} }),
		builtin("apps", "v1", "StatefulSet", "statefulsets", true, true, GenerationSpec, func() runtime.Object { return &appsv1.StatefulSet{} }),
		builtin("apps", "v1", "DaemonSet", "daemonsets", true, true, GenerationSpec, func() runtime.Object { return &appsv1.DaemonSet{} }),
		builtin("coordination.k8s.io", "v1", "Lease", "leases", true, false, GenerationNone, func() runtime.Object { return &coordinationv1.Lease{} }),
	}
}

// CustomType returns the TypeInfo of a custom resource: stored under its
// group, no unconditional update, generation bumped outside .metadata.
func CustomType(gvk schema.GroupVersionKind, resource string, namespaced, statusSubresource bool) *TypeInfo {
	return &TypeInfo{
		GVK:               gvk,
		Resource:          resource,
		Namespaced:        namespaced,
		KeyPrefix:         "/registry/" + gvk.Group + "/" + resource,
		StatusSubresource: statusSubresource,
		Generation:        GenerationNonMetadata,
	}
}

// Registry maps kinds to their TypeInfo.
type Registry struct {
	byGVK map[schema.GroupVersionKind]*TypeInfo
	byGK  map[schema.GroupKind]*TypeInfo
}

// NewRegistry returns a registry of the built-in types plus extra.
func NewRegistry(extra ...*TypeInfo) (*Registry, error) {
	r := &Registry{byGVK: map[schema.GroupVersionKind]*TypeInfo{}, byGK: map[schema.GroupKind]*TypeInfo{}}
	for _, t := range append(BuiltinTypes(), extra...) {
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
