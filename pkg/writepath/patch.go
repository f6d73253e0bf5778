package writepath

import (
	"bytes"
	"encoding/json"
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"net/http"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// unsupportedPatchMsg is the API server's text for a patch type the kind
// does not take (strategic merge patch on a custom resource).
const unsupportedPatchMsg = "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"

// Patch returns the object a patch of type pt of the object namespace/name
// stores, or the API server's error. cur is nil when the object does not
// exist: a server-side apply then creates it (the result has no
// resourceVersion), any other patch is 404. Patches apply to cur, so they
// conflict on a race only when the patch itself sets
// metadata.resourceVersion; without one the write is unconditional.
func (w *Writer) Patch(t *Type, cur *Stored, namespace, name string, pt types.PatchType, data []byte, opts Options) (*unstructured.Unstructured, error) {
	if err := checkSubresource(t, opts.Subresource); err != nil {
		return nil, err
	}
	if pt == types.ApplyPatchType || pt == types.ApplyYAMLPatchType {
		return w.apply(t, cur, namespace, name, data, opts)
	}
	if cur == nil {
		return nil, apierrors.NewNotFound(t.GroupResource(), name)
	}
	doc := cur.JSON
	if doc == nil {
		var err error
		if doc, err = encodeWithRV(cur); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	obj, err := patchDoc(t, doc, pt, data)
	if err != nil {
		return nil, err
	}
	if err := checkName(obj, namespace, name); err != nil {
		return nil, err
	}
	// A patch that sets metadata.resourceVersion is a precondition.
	if err := checkRV(t, obj, cur); err != nil {
		return nil, err
	}
	return w.update(t, cur, obj, opts)
}

// encodeWithRV encodes cur's object carrying its resourceVersion, without
// copying more than its top level and metadata.
func encodeWithRV(cur *Stored) ([]byte, error) {
	top := make(map[string]any, len(cur.Object.Object))
	for k, v := range cur.Object.Object {
		top[k] = v
	}
	md := map[string]any{}
	if m, ok := cur.Object.Object["metadata"].(map[string]any); ok {
		for k, v := range m {
			md[k] = v
		}
	}
	md["resourceVersion"] = cur.ResourceVersion
	top["metadata"] = md
	return json.Marshal(top)
}

// patchDoc applies a patch of type pt to the JSON document doc and decodes
// the result, with the API server's errors.
func patchDoc(t *Type, doc []byte, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	var patched []byte
	var err error
	switch pt {
	case types.JSONPatchType:
		p, derr := jsonpatch.DecodePatch(data)
		if derr != nil {
			return nil, apierrors.NewBadRequest(derr.Error())
		}
		if patched, err = p.Apply(doc); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	case types.MergePatchType:
		if patched, err = jsonpatch.MergePatch(doc, data); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		if t.New == nil {
			// The server's negotiation error: its message names no resource.
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "", unsupportedPatchMsg, 0, false)
		}
		if patched, err = strategicpatch.StrategicMergePatch(doc, data, t.New()); err != nil {
			return nil, strategicPatchError(err)
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unsupported patch type %q", pt))
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(patched); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return obj, nil
}

// strategicPatchError is the API server's answer to a strategic merge
// patch the library refuses (the patch handler's
// interpretStrategicMergePatchError): its known format errors are 400s,
// two are 422s, and any other error is no API status, which the server
// answers as a 500 with no reason (responsewriters.ErrorToAPIStatus). The
// commonest: "The order in patch list ... doesn't match $setElementOrder
// list", when a list's merge key is not unique (the same port on TCP and
// UDP).
func strategicPatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return ServerError(err)
}

// ServerError is the server's answer to an error that carries no API
// status: a 500 with no reason and the error's text
// (responsewriters.ErrorToAPIStatus). A status error is left as it is.
func ServerError(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}

// apply is a server-side apply: the field manager merges the
// configuration into cur (or into nothing, creating the object), then the
// registry's rules follow. Apply conflicts win over a stale
// resourceVersion: the server checks the precondition in storage, after
// the field manager.
func (w *Writer) apply(t *Type, cur *Stored, namespace, name string, data []byte, opts Options) (*unstructured.Unstructured, error) {
	if w.FieldManager == nil {
		// Only a simulation without managedFields runs without one.
		return nil, apierrors.NewBadRequest("server-side apply needs the field manager, which this simulation does not run")
	}
	if opts.FieldManager == "" {
		return nil, apierrors.NewBadRequest("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch")
	}
	cfg, err := decodeApplyConfig(data)
	if err != nil {
		return nil, err
	}
	if t.StatusSubresource {
		// The strategy's reset fields: the main resource ignores status.
		delete(cfg.Object, "status")
	}
	live := managedfields.NewEmpty(t.GVK)
	if cur != nil {
		live = cur.Object
	} else {
		live.SetName(name)
		if t.Namespaced {
			live.SetNamespace(namespace)
		}
	}
	obj, err := w.FieldManager.Apply(t, live, cfg, opts.FieldManager, opts.Force)
	if err != nil {
		return nil, applyError(err)
	}
	// The applier owns the empty maps it sent, but the stored object has
	// none: a built-in kind's is its Go type, a custom resource's metadata
	// is coerced through ObjectMeta when storage decodes it.
	obj = omitEmptyMeta(obj)
	if err := checkName(obj, namespace, name); err != nil {
		return nil, err
	}
	if cur == nil {
		return w.created(t, obj, namespace)
	}
	if cfg.GetResourceVersion() != "" {
		if err := checkRV(t, cfg, cur); err != nil {
			return nil, err
		}
	}
	obj.SetResourceVersion(cur.ResourceVersion)
	// The field manager's defaulter runs on the merged object; nothing
	// decodes it, so nothing is pruned.
	if t.Default != nil {
		t.Default(obj)
	}
	prepareUpdate(t, cur.Object, obj, "")
	w.stampManagedFields(cur.Object, obj)
	if err := validate(t, obj, cur.Object, ""); err != nil {
		return nil, err
	}
	return obj, nil
}

// applyError is the API server's answer when the field manager fails an
// apply: a 500 (an apply configuration with two list items of one key,
// "failed to create typed patch object", is such an error), unless a
// conversion webhook would convert the object (a CannotKnowError).
func applyError(err error) error {
	if ck := cannotConvert(err); ck != nil {
		return ck
	}
	return ServerError(err)
}

// created finishes an apply that creates its object.
func (w *Writer) created(t *Type, obj *unstructured.Unstructured, namespace string) (*unstructured.Unstructured, error) {
	if t.Namespaced {
		obj.SetNamespace(namespace)
	}
	w.prepareCreate(t, obj)
	if t.Default != nil {
		t.Default(obj)
	}
	w.stampManagedFields(nil, obj)
	if err := validate(t, obj, nil, ""); err != nil {
		return nil, err
	}
	return obj, nil
}

// decodeApplyConfig decodes an apply configuration (JSON or YAML), with
// the server's errors.
func decodeApplyConfig(data []byte) (*unstructured.Unstructured, error) {
	js := data
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
	}
	cfg := &unstructured.Unstructured{}
	if err := cfg.UnmarshalJSON(js); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if len(cfg.GetManagedFields()) > 0 {
		return nil, apierrors.NewBadRequest("metadata.managedFields must be nil")
	}
	return cfg, nil
}
