package predict

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// fieldValidation=Strict, which kubectl's apply, replace and edit send:
// the API server refuses a request body, or the object a merge or
// strategic merge patch makes, with fields its kind does not declare
// (the default, Warn, drops them with a warning). The handlers' own
// checks (k8s.io/apiserver's create, update and patch handlers, and
// apiextensions-apiserver's decoder for custom resources) run before the
// registry, so the refusal comes before not-found and conflicts: a
// create or update is 400, a patch 422.

// strictBody returns the API server's 400 for a create or update body
// obj that Strict refuses, nil when it takes it (or w does not ask).
func (e *offlineExecutor) strictBody(obj *unstructured.Unstructured, w Write) error {
	if w.FieldValidation != metav1.FieldValidationStrict {
		return nil
	}
	unknown, err := e.unknownFields(obj.Object)
	if err != nil || len(unknown) == 0 {
		return err
	}
	kind := e.t.GVK.Kind
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", kind, e.t.GVK.Version, kind, runtime.NewStrictDecodingError(unknown)))
}

// strictPatch returns the API server's 422 for a JSON merge or strategic
// merge patch that Strict refuses, nil when it takes it (or w does not
// ask, or the object does not exist: 404 comes first for a patch). The
// handler names the patch as the server has it: a strategic merge patch
// as the Go map it decoded, a merge patch by the object it made.
func (e *offlineExecutor) strictPatch(pt types.PatchType, data []byte, w Write) error {
	if w.FieldValidation != metav1.FieldValidationStrict || e.live == nil {
		return nil
	}
	var value string
	var unknown []error
	var err error
	switch {
	case pt == types.StrategicMergePatchType && e.t.New != nil:
		value, unknown, err = e.strictStrategic(data)
	case pt == types.MergePatchType:
		value, unknown, err = e.strictMerge(data)
	}
	if err != nil || len(unknown) == 0 {
		return err
	}
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), value, runtime.NewStrictDecodingError(unknown).Error()),
	})
}

// strictStrategic is the strategic merge patch handler's strict check:
// the patch merged into live's map, then converted to the Go type with
// unknown fields returned. A patch that does not merge is not its to
// answer.
func (e *offlineExecutor) strictStrategic(data []byte) (string, []error, error) {
	var patch, live map[string]any
	if _, err := sjson.UnmarshalStrict(data, &patch); err != nil {
		return "", nil, nil
	}
	// The merge changes the map it merges into: live's own, decoded.
	if err := json.Unmarshal(e.stored.JSON, &live); err != nil {
		return "", nil, err
	}
	merged, err := strategicpatch.StrategicMergeMapPatch(live, patch, e.t.New())
	if err != nil {
		return "", nil, nil
	}
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(merged, e.t.New(), true)
	se, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return "", nil, nil
	}
	return fmt.Sprintf("%+v", patch), se.Errors(), nil
}

// strictMerge is the JSON merge patch handler's strict check: the object
// the patch makes of live, decoded strictly.
func (e *offlineExecutor) strictMerge(data []byte) (string, []error, error) {
	js, err := jsonpatch.MergePatch(e.stored.JSON, data)
	var patched map[string]any
	if err != nil || json.Unmarshal(js, &patched) != nil {
		return "", nil, nil
	}
	unknown, err := e.unknownFields(patched)
	return string(js), unknown, err
}

// unknownFielder is implemented by rules that name a custom resource's
// unknown fields as the server's decoder does (crd.Rules); false for
// kinds they do not know.
type unknownFielder interface {
	UnknownFields(gvk schema.GroupVersionKind, obj map[string]any) ([]string, bool)
}

// unknownFields returns the fields of obj that its kind does not declare,
// as the server's strict decoding names them: a built-in kind's through
// its Go type (the decoder the server runs), a custom resource's through
// its CRD's rules (apiextensions-apiserver's pruning), else through its
// schema (the first one the type converter meets).
func (e *offlineExecutor) unknownFields(obj map[string]any) ([]error, error) {
	if e.fielder != nil && e.t.New == nil {
		if paths, known := e.fielder.UnknownFields(e.t.GVK, obj); known {
			out := make([]error, len(paths))
			for i, p := range paths {
				out[i] = fmt.Errorf("unknown field %q", p)
			}
			return out, nil
		}
	}
	if e.t.New != nil {
		js, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		strict, err := sjson.UnmarshalStrict(js, e.t.New())
		if err != nil {
			// Not the strict check's to answer: the write path refuses
			// what does not decode.
			return nil, nil
		}
		return strict, nil
	}
	// A copy of the top level: obj may be a request's, which others share.
	u := &unstructured.Unstructured{Object: maps.Clone(obj)}
	u.SetGroupVersionKind(e.t.GVK)
	_, err := e.tc.ObjectToTyped(u)
	var ve typed.ValidationErrors
	if !errors.As(err, &ve) {
		return nil, nil
	}
	var out []error
	for _, v := range ve {
		if v.ErrorMessage == "field not declared in schema" {
			out = append(out, fmt.Errorf("unknown field %q", strings.TrimPrefix(v.Path, ".")))
		}
	}
	return out, nil
}
