package writepath

import (
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KubernetesVersion is the Kubernetes release whose registry rules the
// write path carries and whose API types and server code the binary links.
const KubernetesVersion = "1.36"

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

// Type is what the write path knows about one kind: the rules of its
// registry strategy. It says nothing about where objects are stored.
type Type struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name, e.g. "deployments".
	Resource   string
	Namespaced bool
	// StatusSubresource makes /status the only way to write .status:
	// main-resource writes keep the stored status, and apply ignores the
	// status of its configuration (the strategy's reset fields).
	StatusSubresource bool
	// AllowUnconditionalUpdate lets an update without resourceVersion
	// overwrite the stored object (last write wins); without it such an
	// update is rejected with 422, as for custom resources.
	AllowUnconditionalUpdate bool
	Generation               GenerationRule
	// New returns the Go type of a built-in kind, whose struct tags carry
	// the strategic-merge-patch metadata; nil for custom resources, which
	// refuse strategic merge patch with 415 as the API server does.
	New func() runtime.Object
	// Decode does to an object in place what the server does when it
	// decodes a request body or the result of a JSON or merge patch: a
	// built-in kind goes through its Go type (unknown fields and nulls
	// dropped) and is defaulted; a custom resource is pruned by its
	// structural schema and defaulted. nil: Default, else nothing.
	Decode func(obj *unstructured.Unstructured)
	// Default fills the kind's defaults into an object in place, as the
	// server's field manager does to the object a server-side apply
	// merged (nothing is pruned there); nil: none.
	Default func(obj *unstructured.Unstructured)
	// Validate returns the server's error for obj written over old (nil on
	// create) through subresource sub ("" or "status") after the field
	// manager: what the storage's allocation or the kind's validation (a
	// 422) refuses; nil: nothing is refused.
	Validate func(obj, old *unstructured.Unstructured, sub string) error
}

// GroupResource returns the type's group and resource, as errors name it.
func (t *Type) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: t.GVK.Group, Resource: t.Resource}
}

func builtin(group, version, kind, resource string, namespaced, status bool, gen GenerationRule, newObj func() runtime.Object) Type {
	gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
	return Type{
		GVK:                      gvk,
		Resource:                 resource,
		Namespaced:               namespaced,
		StatusSubresource:        status,
		AllowUnconditionalUpdate: AllowsUnconditionalUpdate(gvk.GroupKind()),
		Generation:               gen,
		New:                      newObj,
	}
}

// Rules are the API server's own defaulting and validation of the
// built-in kinds it knows, which the write path runs behind Type.Default
// and Type.Validate. Their implementation (pkg/serverrules) links
// k8s.io/kubernetes, whose feature gates bring a command-line flag
// library, so the commands hand it in and the engines do not link it.
type Rules interface {
	// Decode does to obj in place what the server does when it decodes a
	// request body of kind gvk (see Type.Decode).
	Decode(gvk schema.GroupVersionKind, obj *unstructured.Unstructured)
	// Default fills obj's defaults in place, as the server's field
	// manager does after a server-side apply of kind gvk.
	Default(gvk schema.GroupVersionKind, obj *unstructured.Unstructured)
	// Validator returns the validation of kind gvk (see Type.Validate),
	// or nil for kinds the rules do not know.
	Validator(gvk schema.GroupVersionKind) func(obj, old *unstructured.Unstructured, sub string) error
}

// WithRules returns t with the decoding, default and validation of rules for its
// kind, where rules know it; t as it is when rules is nil.
func (t Type) WithRules(rules Rules) Type {
	if rules == nil {
		return t
	}
	if v := rules.Validator(t.GVK); v != nil {
		gvk := t.GVK
		t.Decode = func(obj *unstructured.Unstructured) { rules.Decode(gvk, obj) }
		t.Default = func(obj *unstructured.Unstructured) { rules.Default(gvk, obj) }
		t.Validate = v
	}
	return t
}

// refusesUnconditionalUpdate are the built-in kinds whose registry
// strategy's AllowUnconditionalUpdate is false in Kubernetes 1.36
// (k8s.io/kubernetes/pkg/registry, apiextensions-apiserver and
// kube-aggregator): an update without a resourceVersion gets 422.
var refusesUnconditionalUpdate = map[schema.GroupKind]bool{
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "certificates.k8s.io", Kind: "PodCertificateRequest"}:                     true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:                                     true,
	{Group: "coordination.k8s.io", Kind: "LeaseCandidate"}:                            true,
	{Group: "internal.apiserver.k8s.io", Kind: "StorageVersion"}:                      true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:                                    true,
	{Group: "resource.k8s.io", Kind: "ResourcePoolStatusRequest"}:                     true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:                             true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storagemigration.k8s.io", Kind: "StorageVersionMigration"}:               true,
}

// AllowsUnconditionalUpdate reports whether the registry of a built-in
// kind lets an update without a resourceVersion through (last write
// wins). Custom resources never do (the customresource strategy); ask
// only for built-in kinds.
func AllowsUnconditionalUpdate(gk schema.GroupKind) bool {
	return !refusesUnconditionalUpdate[gk]
}

// BuiltinTypes returns the rules of the registry strategies of the
// built-in kinds the simulator knows, in Kubernetes 1.36, with the
// defaulting and validation of rules (nil: none) for the kinds they know.
func BuiltinTypes(rules Rules) []Type {
	types := []Type{
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
	for i := range types {
		types[i] = types[i].WithRules(rules)
	}
	return types
}

// CustomType returns the rules of a custom resource: no unconditional
// update, generation bumped outside .metadata, no strategic merge patch.
func CustomType(gvk schema.GroupVersionKind, resource string, namespaced, statusSubresource bool) Type {
	return Type{
		GVK:               gvk,
		Resource:          resource,
		Namespaced:        namespaced,
		StatusSubresource: statusSubresource,
		Generation:        GenerationNonMetadata,
	}
}
