package writepath

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// optimisticLockErrorMsg is the API server's text for an update whose
// resourceVersion is not the stored one (registry/generic/registry/store.go).
const optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// Writer runs writes the way the API server's handlers and registry do,
// short of storage. Its fields are optional; a Writer is safe for
// concurrent use when its FieldManager and functions are.
type Writer struct {
	// FieldManager maintains managedFields; nil leaves them alone and
	// refuses server-side apply.
	FieldManager FieldManager
	// Now stamps the creationTimestamp of created objects and the time of
	// the managedFields entries a write changes (the simulator's virtual
	// clock); nil leaves both to the field manager, which stamps entries
	// with the wall clock, and sets no creationTimestamp.
	Now func() time.Time
	// NewUID returns the uid of a created object; nil sets none.
	NewUID func() types.UID
}

// Stored is the current state of an object, as storage hands it to a
// write.
type Stored struct {
	// Object is the stored object. The write path never modifies it, and
	// ignores its metadata.resourceVersion.
	Object *unstructured.Unstructured
	// ResourceVersion is the object's resourceVersion.
	ResourceVersion string
	// JSON is Object with its resourceVersion as JSON, the document
	// patches apply to; nil: encoded when a patch needs it.
	JSON []byte
}

// Options are the options of a write request.
type Options struct {
	// FieldManager names the writer in managedFields. The real default is
	// the user agent up to the first "/".
	FieldManager string
	// Subresource is "" or "status".
	Subresource string
	// Force takes conflicting fields in server-side apply.
	Force bool
}

// Create returns the object a create of obj stores (resourceVersion
// empty), or the API server's error. It takes ownership of obj.
func (w *Writer) Create(t *Type, obj *unstructured.Unstructured, opts Options) (*unstructured.Unstructured, error) {
	if err := checkMeta(t, obj); err != nil {
		return nil, err
	}
	obj = omitEmptyMeta(obj)
	dropNulls(t, obj.Object)
	w.prepareCreate(t, obj)
	decode(t, obj)
	if w.FieldManager != nil {
		var err error
		if obj, err = w.updateManagedFields(t, opts.Subresource, managedfields.NewEmpty(t.GVK), obj, opts.FieldManager); err != nil {
			return nil, err
		}
		w.stampManagedFields(nil, obj)
	}
	if err := validate(t, obj, nil, ""); err != nil {
		return nil, err
	}
	return obj, nil
}

// Update returns the object an update (PUT) of obj over cur stores, or
// the API server's error: 404 when cur is nil, 409 when obj's
// resourceVersion is not cur's, 422 without one where the type refuses
// unconditional updates. The result carries cur's resourceVersion. Update
// takes ownership of obj: the caller must not use it afterwards.
func (w *Writer) Update(t *Type, cur *Stored, obj *unstructured.Unstructured, opts Options) (*unstructured.Unstructured, error) {
	if err := checkSubresource(t, opts.Subresource); err != nil {
		return nil, err
	}
	if err := checkMeta(t, obj); err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, apierrors.NewNotFound(t.GroupResource(), obj.GetName())
	}
	if err := checkRV(t, obj, cur); err != nil {
		return nil, err
	}
	return w.update(t, cur, obj, opts)
}

// update is the part of every non-apply write after its preconditions.
func (w *Writer) update(t *Type, cur *Stored, obj *unstructured.Unstructured, opts Options) (*unstructured.Unstructured, error) {
	obj = omitEmptyMeta(obj)
	dropNulls(t, obj.Object)
	if obj.GetNamespace() == "" {
		// The request's namespace, as rest.BeforeUpdate fills it in.
		if ns := cur.Object.GetNamespace(); ns != "" {
			obj.SetNamespace(ns)
		}
	}
	if obj.GetResourceVersion() != cur.ResourceVersion {
		obj.SetResourceVersion(cur.ResourceVersion)
	}
	// The request body (or the patched object) is decoded whole, /status
	// writes too; the status strategy then takes only .status from it.
	decode(t, obj)
	prepareUpdate(t, cur.Object, obj, opts.Subresource)
	if w.FieldManager != nil {
		var err error
		if obj, err = w.updateManagedFields(t, opts.Subresource, cur.Object, obj, opts.FieldManager); err != nil {
			return nil, err
		}
		w.stampManagedFields(cur.Object, obj)
	}
	if err := validate(t, obj, cur.Object, opts.Subresource); err != nil {
		return nil, err
	}
	return obj, nil
}

// decode does to obj what the server's decoding of a request body does
// (t.Decode), else fills in the kind's defaults (t.Default).
func decode(t *Type, obj *unstructured.Unstructured) {
	switch {
	case t.Decode != nil:
		t.Decode(obj)
	case t.Default != nil:
		t.Default(obj)
	}
}

// updateManagedFields records a non-apply write of obj over live in
// managedFields, as the handlers do (FieldManager.UpdateNoErrors): when
// the field manager fails (a custom resource whose value has the wrong
// type cannot be typed by its schema) the write goes on with no
// managedFields, and validation answers for the value.
func (w *Writer) updateManagedFields(t *Type, sub string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	out, err := w.FieldManager.Update(t, sub, live, obj, manager)
	if err := cannotConvert(err); err != nil {
		return nil, err
	}
	if err != nil {
		obj.SetManagedFields(nil)
		return obj, nil
	}
	return out, nil
}

// cannotConvert returns a *CannotKnowError when err is the field
// manager's *managedfields.ConversionError (a conversion webhook would
// convert the object), else nil.
func cannotConvert(err error) error {
	var ce *managedfields.ConversionError
	if errors.As(err, &ce) {
		return &CannotKnowError{Reason: ce.Error()}
	}
	return nil
}

// dropNulls removes the null fields of a built-in kind's object (t.New
// set), in place, at any depth: the API server decodes a request body, and
// the result of a JSON or strategic merge patch, into the kind's Go type,
// where null leaves a field unset, so it is defaulted afterwards and the
// field manager never sees it. A strategic merge patch made by kubectl
// leaves such nulls in a list item it adds (a port's "protocol": null,
// which the server then defaults to TCP). Null items of a list are left
// alone; a custom resource keeps its nulls.
func dropNulls(t *Type, m map[string]any) {
	if t.New == nil {
		return
	}
	DropNullFields(m)
}

// DropNullFields removes the null fields of the maps in v, in place, at
// any depth (null items of a list stay): what decoding into a Go type does.
func DropNullFields(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
				continue
			}
			DropNullFields(e)
		}
	case []any:
		for _, e := range v {
			DropNullFields(e)
		}
	}
}

// omitEmptyMeta drops from obj what the API server drops when it decodes
// a request body (a create, an update, or the result of a JSON or merge
// patch): ObjectMeta's empty labels, annotations, finalizers and
// ownerReferences (omitempty). A built-in kind's body is decoded into its
// Go type; a custom resource's metadata goes through ObjectMeta and back
// too (apiextensions-apiserver's objectmeta coercion, which the decoder of
// custom resources runs). They are gone from the stored object and from
// what the field manager compares, so an empty map in a request takes no
// field from its owner. An apply configuration is not decoded that way:
// its applier owns the empty map it sends.
func omitEmptyMeta(obj *unstructured.Unstructured) *unstructured.Unstructured {
	md, ok := obj.Object["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	var drop []string
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		switch v := md[k].(type) {
		case map[string]any:
			if len(v) == 0 {
				drop = append(drop, k)
			}
		case []any:
			if len(v) == 0 {
				drop = append(drop, k)
			}
		}
	}
	if len(drop) == 0 {
		return obj
	}
	// Copies of the top level and metadata: the caller's object stays.
	return &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(obj.Object, drop...)}
}

func checkSubresource(t *Type, sub string) error {
	switch sub {
	case "":
		return nil
	case "status":
		if t.StatusSubresource {
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: t.GVK.Group, Resource: t.Resource + "/" + sub}, "")
}

func checkMeta(t *Type, obj *unstructured.Unstructured) error {
	if obj.GetName() == "" {
		return apierrors.NewInvalid(t.GVK.GroupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if t.Namespaced && obj.GetNamespace() == "" {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// checkName is the patch handler's check that a patch left the object's
// name and namespace as the URL says.
func checkName(obj *unstructured.Unstructured, namespace, name string) error {
	if n := obj.GetName(); n != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	if ns := obj.GetNamespace(); namespace != "" && ns != "" && ns != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the URL (%s)", ns, namespace))
	}
	return nil
}

// checkRV is the resourceVersion precondition of the registry's Update.
// Without a resourceVersion the write is unconditional where the type
// allows it.
func checkRV(t *Type, obj *unstructured.Unstructured, cur *Stored) error {
	rvs := obj.GetResourceVersion()
	if rvs == "" {
		if !t.AllowUnconditionalUpdate {
			qualifiedKind := schema.GroupKind{Group: t.GVK.Group, Kind: t.Resource}
			return apierrors.NewInvalid(qualifiedKind, obj.GetName(), field.ErrorList{field.Invalid(field.NewPath("metadata").Child("resourceVersion"), int64(0), "must be specified for an update")})
		}
		return nil
	}
	rv, err := strconv.ParseInt(rvs, 10, 64)
	if err != nil || rv <= 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", rvs))
	}
	if stored, err := strconv.ParseInt(cur.ResourceVersion, 10, 64); err != nil || rv != stored {
		return Conflict(t, obj.GetName())
	}
	return nil
}

// Conflict is the API server's 409 for a failed resourceVersion
// precondition.
func Conflict(t *Type, name string) error {
	return apierrors.NewConflict(t.GroupResource(), name, errors.New(optimisticLockErrorMsg))
}

func validate(t *Type, obj, old *unstructured.Unstructured, sub string) error {
	if t.Validate == nil {
		return nil
	}
	return t.Validate(obj, old, sub)
}

// stampManagedFields sets the time of the managedFields entries whose
// fields the write changed to Now, and keeps the stored entries as they
// are when no entry changed (the field manager may have reordered entries
// with equal times), so the write stays a no-op, as on the server.
func (w *Writer) stampManagedFields(old, obj *unstructured.Unstructured) {
	if w.Now == nil {
		return
	}
	entries := obj.GetManagedFields()
	if len(entries) == 0 {
		return
	}
	type id struct{ m, op, av, sub string }
	prev := map[id]metav1.ManagedFieldsEntry{}
	if old != nil {
		for _, e := range old.GetManagedFields() {
			prev[id{e.Manager, string(e.Operation), e.APIVersion, e.Subresource}] = e
		}
	}
	now := metav1.NewTime(w.Now().UTC().Truncate(time.Second))
	same := old != nil && len(entries) == len(prev)
	for i, e := range entries {
		p, ok := prev[id{e.Manager, string(e.Operation), e.APIVersion, e.Subresource}]
		if ok && p.FieldsV1 != nil && e.FieldsV1 != nil && string(p.FieldsV1.Raw) == string(e.FieldsV1.Raw) {
			entries[i].Time = p.Time
		} else {
			entries[i].Time = &now
			same = false
		}
	}
	if same {
		obj.SetManagedFields(old.GetManagedFields())
		return
	}
	obj.SetManagedFields(entries)
}
