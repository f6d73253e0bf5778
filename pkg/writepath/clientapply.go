package writepath

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/jsonmergepatch"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	kubectlutil "k8s.io/kubectl/pkg/util"
)

// LastAppliedAnnotation is the annotation in which kubectl apply keeps the
// configuration it applied last.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// ErrThreeWayPatch is kubectl apply failing before it sends anything: the
// three-way patch cannot be made (a custom resource renamed, a list of
// lists, ...).
var ErrThreeWayPatch = errors.New("kubectl fails before sending anything: creating the three-way patch")

// ClientApplyRequest is the patch kubectl apply (client side) sends.
type ClientApplyRequest struct {
	// PatchType is strategic for kinds kubectl's scheme has, else merge.
	PatchType types.PatchType
	// Patch is the three-way patch; "{}" means kubectl sends nothing.
	Patch []byte
	// Original is the live object's last-applied annotation (nil when it
	// has none), Modified the manifest with its new annotation, both as
	// kubectl encodes them.
	Original, Modified []byte
}

// ClientApplyPatch computes, with kubectl's own code, the patch kubectl apply
// sends to bring live to the manifest desired: the modified configuration
// with the annotation (GetModifiedConfiguration), then the three-way patch
// of the annotation's configuration, the modified configuration and live
// (strategicpatch.CreateThreeWayMergePatch with the Go type's patch
// metadata, else jsonmergepatch.CreateThreeWayJSONMergePatch, which may
// not change apiVersion, kind or name), --overwrite on as kubectl
// defaults. desired is not changed. An error wrapping ErrThreeWayPatch is
// kubectl's own failure.
func ClientApplyPatch(live, desired *unstructured.Unstructured) (ClientApplyRequest, error) {
	var r ClientApplyRequest
	var err error
	if r.Modified, err = kubectlutil.GetModifiedConfiguration(desired.DeepCopy(), true, unstructured.UnstructuredJSONScheme); err != nil {
		return r, err
	}
	current, err := runtime.Encode(unstructured.UnstructuredJSONScheme, live)
	if err != nil {
		return r, err
	}
	if r.Original, err = kubectlutil.GetOriginalConfiguration(live); err != nil {
		return r, err
	}
	r.PatchType, r.Patch, err = threeWayPatch(live, r.Original, r.Modified, current)
	if err != nil {
		return r, fmt.Errorf("%w: %v", ErrThreeWayPatch, err)
	}
	return r, nil
}

// threeWayPatch is kubectl's patchSimple without the OpenAPI lookups.
func threeWayPatch(live *unstructured.Unstructured, original, modified, current []byte) (types.PatchType, []byte, error) {
	typed, err := scheme.Scheme.New(live.GroupVersionKind())
	if err == nil {
		meta, err := strategicpatch.NewPatchMetaFromStruct(typed)
		if err != nil {
			return "", nil, err
		}
		p, err := strategicpatch.CreateThreeWayMergePatch(original, modified, current, meta, true)
		return types.StrategicMergePatchType, p, err
	}
	if !runtime.IsNotRegisteredError(err) {
		return "", nil, err
	}
	p, err := jsonmergepatch.CreateThreeWayJSONMergePatch(original, modified, current,
		mergepatch.RequireKeyUnchanged("apiVersion"), mergepatch.RequireKeyUnchanged("kind"), mergepatch.RequireMetadataKeyUnchanged("name"))
	if mergepatch.IsPreconditionFailed(err) {
		err = errors.New("at least one of apiVersion, kind and name was changed")
	}
	return types.MergePatchType, p, err
}

// ClientApplyCreate is the object kubectl apply creates when the manifest's
// object does not exist: the annotation set, then nulls pruned (so that
// the annotation is the one an update apply of the same manifest stores),
// the resourceVersion cleared. desired is not changed.
func ClientApplyCreate(desired *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj := desired.DeepCopy()
	if err := kubectlutil.CreateApplyAnnotation(obj, unstructured.UnstructuredJSONScheme); err != nil {
		return nil, err
	}
	pruneNulls(obj.Object)
	obj.SetResourceVersion("")
	return obj, nil
}

// pruneNulls drops null values from maps, at every depth, as kubectl's
// apply does before a create.
func pruneNulls(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e == nil {
				delete(v, k)
			} else {
				pruneNulls(e)
			}
		}
	case []any:
		for _, e := range v {
			pruneNulls(e)
		}
	}
}
