package managedfields

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// DefaultTypeConverter returns the type converter used when no schema is
// given: built-in kinds are typed by the built-in schema, and any other
// kind as a custom resource whose CustomResourceDefinition says nothing
// of its fields (x-kubernetes-preserve-unknown-fields at the root): its
// metadata is ObjectMeta, as the API server types it for every custom
// resource (finalizers a set, ownerReferences keyed by uid), and the rest
// is deduced (maps granular, lists atomic). It is safe for concurrent use.
func DefaultTypeConverter() TypeConverter {
	return defaultTC
}

var defaultTC = &defaultConverter{kinds: map[schema.GroupVersionKind]*SchemaTypeConverter{}}

// defaultConverter is DefaultTypeConverter. It builds one converter per
// custom kind on first use and keeps it: structured-merge-diff compares
// and merges only values typed by the same schema pointer.
type defaultConverter struct {
	// mu guards kinds.
	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*SchemaTypeConverter
}

var _ TypeConverter = (*defaultConverter)(nil)

// ObjectToTyped implements TypeConverter.
func (c *defaultConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	if IsBuiltin(gvk) {
		return BuiltinTypeConverter().ObjectToTyped(obj, opts...)
	}
	tc, err := c.custom(gvk)
	if err != nil {
		return nil, err
	}
	return tc.ObjectToTyped(obj, opts...)
}

// TypedToObject implements TypeConverter.
func (c *defaultConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	return BuiltinTypeConverter().TypedToObject(v)
}

// custom returns the converter of custom kind gvk: the schema the server
// builds from a CRD version without openAPIV3Schema fields.
func (c *defaultConverter) custom(gvk schema.GroupVersionKind) (*SchemaTypeConverter, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tc, ok := c.kinds[gvk]; ok {
		return tc, nil
	}
	tc, err := crdConverter(gvk.Group, gvk.Kind, false, []crdVersion{{Name: gvk.Version}})
	if err != nil {
		return nil, err
	}
	c.kinds[gvk] = tc
	return tc, nil
}
