package writepath

import (
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/apps"
	k8sappsv1 "k8s.io/kubernetes/pkg/apis/apps/v1"
	"k8s.io/kubernetes/pkg/apis/core"
	k8scorev1 "k8s.io/kubernetes/pkg/apis/core/v1"
)

// The built-in kinds of core/v1 and apps/v1 are defaulted and validated by
// the API server's own code, linked from k8s.io/kubernetes: the v1
// defaulting functions (what the server runs when it decodes a request),
// the conversion to the internal types, and the validation their registry
// strategies call (Validate, ValidateUpdate and the status strategy's
// ValidateUpdate). What the strategies and the storage do around them
// (PrepareForCreate/PrepareForUpdate, a Service's allocated values) is in
// prepare.go and service.go, written from the server's code, since those
// packages would link the whole registry.

// serverScheme holds the v1 and internal types of core and apps with the
// server's defaulting and conversion functions. It is built on first use:
// a command that writes no built-in object does not pay for it.
var serverScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{core.AddToScheme, k8scorev1.AddToScheme, apps.AddToScheme, k8sappsv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // the registrations of a release; they cannot fail
		}
	}
	return s
})

// serverKind is one kind the server's code defaults and validates.
type serverKind struct {
	// validate is the registry strategy's validation of internal objects:
	// old is nil on create; sub is "" or "status".
	validate func(obj, old runtime.Object, sub string) field.ErrorList
	// prepare readies obj (internal) for validation as the storage does
	// before it validates, where the kind needs it (old nil on create),
	// and returns the storage's error, if any.
	prepare func(obj, old runtime.Object) error
}

func isServerKind(gvk schema.GroupVersionKind) bool {
	_, ok := serverKinds[gvk]
	return ok
}

// BuiltinDefaults fills in obj the defaults the API server fills when it
// decodes a request of obj's kind (gvk), in place: the kind's v1
// defaulting functions, run on its Go type. The object goes through the
// Go type as on the server, so fields the type does not have are dropped
// and nulls are gone. Kinds the write path does not know are left alone.
func BuiltinDefaults(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	if !isServerKind(gvk) {
		return
	}
	s := serverScheme()
	typed, err := s.New(gvk)
	if err != nil {
		return
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		// Left as it is: BuiltinValidate reports what cannot be decoded.
		return
	}
	s.Default(typed)
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return
	}
	// A zero creationTimestamp encodes as null; the server's JSON has none.
	dropNullFields(out)
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
	invalid := func(errs field.ErrorList) error { return apierrors.NewInvalid(gvk.GroupKind(), obj.GetName(), errs) }
	n, err := toInternal(gvk, obj)
	if err != nil {
		return invalid(field.ErrorList{field.Invalid(nil, nil, err.Error())})
	}
	var o runtime.Object
	if old != nil {
		if o, err = toInternal(gvk, old); err != nil {
			return invalid(field.ErrorList{field.Invalid(nil, nil, "the stored object: "+err.Error())})
		}
	}
	if k.prepare != nil && sub == "" {
		if err := k.prepare(n, o); err != nil {
			return serverError(err)
		}
	}
	if errs := k.validate(n, o, sub); len(errs) > 0 {
		return invalid(errs)
	}
	return nil
}

// toInternal decodes obj into its v1 Go type and converts it to the
// internal type, as the server does before it validates.
func toInternal(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) (runtime.Object, error) {
	s := serverScheme()
	typed, err := s.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, err
	}
	internal, err := s.New(gvk.GroupKind().WithVersion(runtime.APIVersionInternal))
	if err != nil {
		return nil, err
	}
	if err := s.Convert(typed, internal, nil); err != nil {
		return nil, err
	}
	return internal, nil
}
