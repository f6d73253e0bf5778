package crd

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateScaleSpec is the validator's ValidateScaleSpec: with a /scale
// subresource, the spec's replicas must be an int32 that is not negative.
func (k *Kind) validateScaleSpec(obj *unstructured.Unstructured) field.ErrorList {
	if k.scale == nil {
		return nil
	}
	return validateReplicas(obj, k.scale.SpecReplicasPath)
}

// validateScaleStatus is the validator's ValidateScaleStatus: the status
// replicas as the spec's, and the label selector a string.
func (k *Kind) validateScaleStatus(obj *unstructured.Unstructured) field.ErrorList {
	if k.scale == nil {
		return nil
	}
	errs := validateReplicas(obj, k.scale.StatusReplicasPath)
	if p := k.scale.LabelSelectorPath; p != nil {
		sel, _, err := unstructured.NestedString(obj.Object, strings.Split(strings.TrimPrefix(*p, "."), ".")...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*p), sel, err.Error()))
		}
	}
	return errs
}

func validateReplicas(obj *unstructured.Unstructured, path string) field.ErrorList {
	n, _, err := unstructured.NestedInt64(obj.Object, strings.Split(strings.TrimPrefix(path, "."), ".")...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, err.Error())}
	case n < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}
