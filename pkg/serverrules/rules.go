package serverrules

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// serverKind is one kind the server's code defaults and validates: its
// v1 Go type, its generated defaulting and conversion functions (called
// directly: a scheme of core and apps would cost every prediction 1.5 ms
// to build) and its registry strategies' validation.
type serverKind struct {
	newV1 func() runtime.Object
	// defaults is the kind's SetObjectDefaults function.
	defaults func(runtime.Object)
	// toInternal converts a v1 object to the internal type, fromInternal
	// back.
	toInternal   func(runtime.Object) (runtime.Object, error)
	fromInternal func(runtime.Object) (runtime.Object, error)
	// validate is the registry strategy's validation of internal objects:
	// old is nil on create; sub is "" or "status".
	validate func(obj, old runtime.Object, sub string) field.ErrorList
	// prepare readies obj (internal) for validation as the storage does
	// before it validates, where the kind needs it (old nil on create),
	// and returns the storage's error, if any.
	prepare func(obj, old runtime.Object) error
}

// serverKindOf makes the serverKind of v1 type V and internal type I, with
// the conversions between them. defaults is nil for kinds the server does
// not default.
func serverKindOf[V, I any](defaults func(*V), convert func(*V, *I, conversion.Scope) error, back func(*I, *V, conversion.Scope) error,
	validate func(obj, old *I, sub string) field.ErrorList) serverKind {
	return serverKind{
		newV1: func() runtime.Object { return any(new(V)).(runtime.Object) },
		defaults: func(o runtime.Object) {
			if defaults != nil {
				defaults(o.(any).(*V))
			}
		},
		toInternal: func(o runtime.Object) (runtime.Object, error) {
			in := new(I)
			err := convert(o.(any).(*V), in, nil)
			return any(in).(runtime.Object), err
		},
		fromInternal: func(o runtime.Object) (runtime.Object, error) {
			out := new(V)
			err := back(o.(any).(*I), out, nil)
			return any(out).(runtime.Object), err
		},
		validate: func(obj, old runtime.Object, sub string) field.ErrorList {
			var o *I
			if old != nil {
				o = old.(any).(*I)
			}
			return validate(obj.(any).(*I), o, sub)
		},
	}
}

// Rules are the API server's defaulting and validation (writepath.Rules)
// of the built-in kinds of serverKinds. The custom resources of CRDs are
// crd.Rules', which add them to these.
type Rules struct{}

var _ writepath.Rules = Rules{}

// Decode is BuiltinDefaults: the server decodes a request of a built-in
// kind through its Go type, which its defaults fill.
func (Rules) Decode(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	BuiltinDefaults(gvk, obj)
}

// Default is BuiltinDefaults, as the field manager fills them after a
// server-side apply.
func (Rules) Default(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	BuiltinDefaults(gvk, obj)
}

// Validator is BuiltinValidator.
func (Rules) Validator(gvk schema.GroupVersionKind) func(obj, old *unstructured.Unstructured, sub string) error {
	return BuiltinValidator(gvk)
}

// BuiltinDefaults does in place what the API server does to obj of kind
// gvk between decoding a request and storing it: the kind's v1 defaulting
// functions run on its Go type, which is converted to the internal type
// and back to v1, as the server converts it to its internal version and
// encodes it for storage and the reply. The object goes through the Go
// types as on the server, so fields the type does not have are dropped,
// nulls are gone, and the conversions' rewrites happen: a Secret's
// stringData is merged into data, a pod spec's serviceAccount becomes its
// serviceAccountName (see docs/predict.md for the list). Kinds the write
// path does not know are left alone.
func BuiltinDefaults(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	k, ok := serverKinds[gvk]
	if !ok {
		return
	}
	typed := k.newV1()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		// Left as it is: BuiltinValidate reports what cannot be decoded.
		return
	}
	k.defaults(typed)
	if internal, err := k.toInternal(typed); err == nil {
		// A conversion that fails leaves the defaulted object: validation
		// reports the error.
		if v1, err := k.fromInternal(internal); err == nil {
			// The conversions leave the type's apiVersion and kind out.
			v1.GetObjectKind().SetGroupVersionKind(typed.GetObjectKind().GroupVersionKind())
			typed = v1
		}
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return
	}
	// A zero creationTimestamp encodes as null; the server's JSON has none.
	writepath.DropNullFields(out)
	obj.Object = out
}

// BuiltinValidate returns the API server's error for obj of kind gvk
// written over old (the stored object, nil on create) through subresource
// sub ("" or "status"): what the storage refuses before it validates (a
// Service's duplicate node port, a 500), what the kind's validation
// refuses (a 422), or nil. Kinds the write path does not know are not
// validated.
func BuiltinValidate(gvk schema.GroupVersionKind, obj, old *unstructured.Unstructured, sub string) error {
	k, ok := serverKinds[gvk]
	if !ok {
		return nil
	}
	return k.check(gvk, obj, old, sub, func(old *unstructured.Unstructured) (runtime.Object, error) { return toInternal(k, old) })
}

// BuiltinValidator returns BuiltinValidate for kind gvk, or nil for kinds
// the write path does not know, converting the stored object once while
// it is given the same one: every method of a prediction writes over the
// same live object, which the write path never changes. It is safe for
// concurrent use.
func BuiltinValidator(gvk schema.GroupVersionKind) func(obj, old *unstructured.Unstructured, sub string) error {
	k, ok := serverKinds[gvk]
	if !ok {
		return nil
	}
	var mu sync.Mutex
	var last *unstructured.Unstructured
	var lastInternal runtime.Object
	var lastErr error
	stored := func(old *unstructured.Unstructured) (runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if old != last {
			last = old
			lastInternal, lastErr = toInternal(k, old)
		}
		return lastInternal, lastErr
	}
	return func(obj, old *unstructured.Unstructured, sub string) error {
		return k.check(gvk, obj, old, sub, stored)
	}
}

// check is BuiltinValidate with the stored object's internal form from
// stored, which neither preparation nor validation changes.
func (k serverKind) check(gvk schema.GroupVersionKind, obj, old *unstructured.Unstructured, sub string, stored func(*unstructured.Unstructured) (runtime.Object, error)) error {
	invalid := func(errs field.ErrorList) error { return apierrors.NewInvalid(gvk.GroupKind(), obj.GetName(), errs) }
	n, err := toInternal(k, obj)
	if err != nil {
		return invalid(field.ErrorList{field.Invalid(nil, nil, err.Error())})
	}
	var o runtime.Object
	if old != nil {
		if o, err = stored(old); err != nil {
			return invalid(field.ErrorList{field.Invalid(nil, nil, "the stored object: "+err.Error())})
		}
	}
	if k.prepare != nil && sub == "" {
		if err := k.prepare(n, o); err != nil {
			return writepath.ServerError(err)
		}
	}
	if errs := k.validate(n, o, sub); len(errs) > 0 {
		return invalid(errs)
	}
	return nil
}

// toInternal decodes obj into its v1 Go type and converts it to the
// internal type, as the server does before it validates.
func toInternal(k serverKind, obj *unstructured.Unstructured) (runtime.Object, error) {
	typed := k.newV1()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, err
	}
	return k.toInternal(typed)
}
