package apiserver

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	upstream "k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// ManagedFields is the FieldManager that runs the API server's own field
// manager in process (pkg/managedfields.FieldManager, shared with predict):
// the built-in schema for built-in kinds, a deduced schema (every list
// atomic, every map granular, as the server does for custom resources
// without a structural schema) for the others.
type ManagedFields struct {
	byGVK map[schema.GroupVersionKind]*managedfields.FieldManager
}

var _ FieldManager = (*ManagedFields)(nil)

// NewManagedFields returns the in-process field manager.
func NewManagedFields() *ManagedFields {
	return &ManagedFields{byGVK: map[schema.GroupVersionKind]*managedfields.FieldManager{}}
}

func (m *ManagedFields) forType(t *TypeInfo) (*managedfields.FieldManager, error) {
	if fm, ok := m.byGVK[t.GVK]; ok {
		return fm, nil
	}
	tc := managedfields.BuiltinTypeConverter()
	if !managedfields.IsBuiltin(t.GVK) {
		tc = upstream.NewDeducedTypeConverter()
	}
	fm, err := managedfields.NewFieldManager(tc, t.GVK)
	if err != nil {
		return nil, err
	}
	m.byGVK[t.GVK] = fm
	return fm, nil
}

// Update implements FieldManager.
func (m *ManagedFields) Update(t *TypeInfo, subresource string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	fm, err := m.forType(t)
	if err != nil {
		return nil, err
	}
	if live == nil {
		live = managedfields.NewEmpty(t.GVK)
	}
	return fm.Update(live, obj, manager, subresource)
}

// Apply implements FieldManager.
func (m *ManagedFields) Apply(t *TypeInfo, _ string, live, applied *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	fm, err := m.forType(t)
	if err != nil {
		return nil, err
	}
	if live == nil {
		live = managedfields.NewEmpty(t.GVK)
	}
	return fm.Apply(live, applied, manager, force)
}
