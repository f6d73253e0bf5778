package writepath

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// FieldManager maintains metadata.managedFields the way the API server's
// field manager does. ManagedFields runs the server's own in process; a
// Writer without one leaves managedFields alone and refuses server-side
// apply.
type FieldManager interface {
	// Update records a non-apply write of obj over live by manager. live is
	// an empty object of the kind on create. Neither is modified.
	Update(t *Type, subresource string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error)
	// Apply merges the applied configuration into live (empty on create)
	// as server-side apply does, returning the 409 with
	// FieldManagerConflict causes on conflicts unless force is set.
	Apply(t *Type, live, applied *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error)
}

// ManagedFields is the FieldManager that runs the API server's own field
// manager in process (pkg/managedfields.FieldManager), one per kind. It is
// safe for concurrent use.
type ManagedFields struct {
	tc managedfields.TypeConverter

	// mu guards byGVK.
	mu    sync.Mutex
	byGVK map[schema.GroupVersionKind]*managedfields.FieldManager
}

var _ FieldManager = (*ManagedFields)(nil)

// NewManagedFields returns the in-process field manager typing objects
// with tc. A nil tc is managedfields.DefaultTypeConverter: built-in kinds
// typed by the built-in schema, others as custom resources whose metadata
// is ObjectMeta and whose other fields are deduced (every list atomic,
// every map granular), as the server types a custom resource whose schema
// keeps unknown fields.
func NewManagedFields(tc managedfields.TypeConverter) *ManagedFields {
	return &ManagedFields{tc: tc, byGVK: map[schema.GroupVersionKind]*managedfields.FieldManager{}}
}

// For returns the field manager of kind gvk, made on first use.
func (m *ManagedFields) For(gvk schema.GroupVersionKind) (*managedfields.FieldManager, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if fm, ok := m.byGVK[gvk]; ok {
		return fm, nil
	}
	tc := m.tc
	if tc == nil {
		tc = managedfields.DefaultTypeConverter()
	}
	fm, err := managedfields.NewFieldManager(tc, gvk)
	if err != nil {
		return nil, err
	}
	m.byGVK[gvk] = fm
	return fm, nil
}

// Update implements FieldManager.
func (m *ManagedFields) Update(t *Type, subresource string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	fm, err := m.For(t.GVK)
	if err != nil {
		return nil, err
	}
	return fm.Update(live, obj, manager, subresource)
}

// Apply implements FieldManager.
func (m *ManagedFields) Apply(t *Type, live, applied *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	fm, err := m.For(t.GVK)
	if err != nil {
		return nil, err
	}
	return fm.Apply(live, applied, manager, force)
}
