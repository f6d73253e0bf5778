package crd

import (
	"context"
	"encoding/json"
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// CannotKnow says why the rules cannot tell what the server does with a
// write of this kind ("" when they can).
func (k *Kind) CannotKnow() string { return k.cannotKnow }

// Decode does to obj, in place, what the server's codec does to a custom
// resource it decodes from a request body or from storage
// (unstructuredSchemaCoercer.apply, then unstructuredDefaulter): metadata
// goes through ObjectMeta (unknown and empty fields dropped), fields the
// structural schema does not have are pruned (x-kubernetes-preserve-
// unknown-fields keeps them; embedded resources keep their metadata),
// nulls of non-nullable fields without a default are dropped, embedded
// ObjectMeta is coerced, and the schema's defaults are filled in (also
// where the value is null and the field not nullable). Objects of another
// kind are left alone. Metadata the server could not decode (a label that
// is a number) is left as it is, for validation to refuse.
func (k *Kind) Decode(obj map[string]any) {
	if apiVersion, _ := obj["apiVersion"].(string); apiVersion != k.GVK.GroupVersion().String() {
		return
	}
	if kind, _ := obj["kind"].(string); kind != k.GVK.Kind {
		return
	}
	meta, foundMeta, _, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{})
	if err != nil {
		foundMeta = false
	}
	structuralpruning.Prune(obj, k.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, k.structural)
	if ferr := schemaobjectmeta.Coerce(nil, obj, k.structural, false, false); ferr != nil {
		// The server's decoder fails (400); validation refuses the same.
		return
	}
	if foundMeta {
		_ = schemaobjectmeta.SetObjectMeta(obj, meta)
	}
	structuraldefaulting.Default(obj, k.structural)
}

// UnknownFields returns the fields of obj the server's decoder finds
// unknown, in its order (unstructuredSchemaCoercer.apply with
// returnUnknownFieldPaths, which fieldValidation=Strict refuses):
// ObjectMeta's, then those pruning removes (sorted), then embedded
// ObjectMeta's. obj is left as it is.
func (k *Kind) UnknownFields(obj map[string]any) []string {
	js, err := json.Marshal(obj)
	var cp map[string]any
	if err != nil || json.Unmarshal(js, &cp) != nil {
		return nil
	}
	_, _, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(cp, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(cp, k.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(cp, k.structural)
	ferr, coerced := schemaobjectmeta.CoerceWithOptions(nil, cp, k.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if ferr != nil {
		return unknown
	}
	return append(unknown, coerced...)
}

// Default fills the schema's defaults into obj in place, as the field
// manager's defaulter (unstructuredDefaulter) does to the object a
// server-side apply merged: nothing is pruned there, and a null without a
// default stays for validation to judge.
func (k *Kind) Default(obj map[string]any) {
	structuraldefaulting.Default(obj, k.structural)
}

// Validate returns what the customresource registry strategies refuse in
// obj, written over old (nil on create) through subresource sub ("" or
// "status"): the strategy's Validate on create, ValidateUpdate on update
// (with ratcheting: an unchanged invalid value stays allowed), the status
// strategy's ValidateUpdate on /status. Errors are in the server's order
// and words.
func (k *Kind) Validate(obj, old *unstructured.Unstructured, sub string) field.ErrorList {
	if errs := k.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	if old == nil {
		return k.validateCreate(obj)
	}
	co := common.NewCorrelatedObject(obj.Object, old.Object, &model.Structural{Structural: k.structural})
	var errs field.ErrorList
	errs = append(errs, metavalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))...)
	if sub == "status" {
		if status, ok := obj.Object["status"]; ok {
			errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old.Object["status"], k.statusValidator,
				apiservervalidation.WithRatcheting(co.Key("status")))...)
		}
		errs = append(errs, k.validateScaleStatus(obj)...)
		if newErrs := structurallisttype.ValidateListSetsAndMaps(nil, k.structural, obj.Object); len(newErrs) > 0 {
			if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, k.structural, old.Object); len(oldErrs) == 0 {
				errs = append(errs, newErrs...)
			}
		}
		return k.validateRules(errs, obj, old, co)
	}
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj.Object, old.Object, k.validator, apiservervalidation.WithRatcheting(co))...)
	errs = append(errs, k.validateScaleSpec(obj)...)
	errs = append(errs, k.validateScaleStatus(obj)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj.Object, k.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, k.structural, old.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, k.structural, obj.Object)...)
	}
	return k.validateRules(errs, obj, old, co)
}

// validateCreate is the strategy's Validate.
func (k *Kind) validateCreate(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, metavalidation.ValidateObjectMetaAccessor(obj, k.Namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj.Object, k.validator)...)
	errs = append(errs, k.validateScaleSpec(obj)...)
	errs = append(errs, k.validateScaleStatus(obj)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj.Object, k.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, k.structural, obj.Object)...)
	return k.validateRules(errs, obj, nil, nil)
}

// validateRules runs the x-kubernetes-validations rules after errs, as
// the strategies do: not at all when errs has one that blocks them
// (hasBlockingErr), with oldSelf from old on update.
func (k *Kind) validateRules(errs field.ErrorList, obj, old *unstructured.Unstructured, co *common.CorrelatedObject) field.ErrorList {
	if k.celValidator == nil {
		return errs
	}
	if blocking(errs) {
		return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
	}
	var oldObj any
	var opts []cel.Option
	if old != nil {
		oldObj = old.Object
		opts = append(opts, cel.WithRatcheting(co))
	}
	celErrs, _ := k.celValidator.Validate(context.Background(), nil, k.structural, obj.Object, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return append(errs, celErrs...)
}

// blocking is the strategy's hasBlockingErr: OpenAPI errors after which
// the CEL rules are not run.
func blocking(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// validateTypeMeta is the validator's ValidateTypeMeta.
func (k *Kind) validateTypeMeta(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if obj.GetKind() != k.GVK.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), obj.GetKind(), fmt.Sprintf("must be %v", k.GVK.Kind)))
	}
	if want := k.GVK.Group + "/" + k.GVK.Version; obj.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), obj.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}
