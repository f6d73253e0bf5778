package crd

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Set is the custom resource kinds that some CustomResourceDefinitions
// define, one per served version. It is safe for concurrent use.
type Set struct {
	kinds map[schema.GroupVersionKind]*Kind
}

// Kind is one served version of a CustomResourceDefinition, with what the
// server builds from it to decode and validate its custom resources
// (crdHandler.getOrCreateServingInfoFor).
type Kind struct {
	GVK schema.GroupVersionKind
	// Resource is the plural resource name.
	Resource   string
	Namespaced bool
	// StatusSubresource says the version has a /status subresource.
	StatusSubresource bool

	// cannotKnow says why the rules cannot tell what the server does with
	// a write of this version ("" when they can).
	cannotKnow string
	// structural is the version's structural schema with its defaults
	// pruned (structuraldefaulting.PruneDefaults), as the server keeps it.
	structural      *structuralschema.Structural
	validator       apiservervalidation.SchemaValidator
	statusValidator apiservervalidation.SchemaValidator
	// celValidator runs the x-kubernetes-validations rules; nil: none.
	celValidator *cel.Validator
	scale        *apiextensions.CustomResourceSubresourceScale
}

// Kind returns the kind gvk, or nil when no CRD of the set serves it.
func (s *Set) Kind(gvk schema.GroupVersionKind) *Kind {
	if s == nil {
		return nil
	}
	return s.kinds[gvk]
}

// Len is the number of kinds (served versions) in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.kinds)
}

// clone returns a set of the kinds of s (none for nil), for adding more.
func (s *Set) clone() *Set {
	out := &Set{kinds: map[schema.GroupVersionKind]*Kind{}}
	if s != nil {
		maps.Copy(out.kinds, s.kinds)
	}
	return out
}

// Parse reads a CustomResourceDefinition (apiextensions.k8s.io/v1, YAML
// or JSON) into a Set of its served versions. A document of another kind
// gives an empty set and no error: the caller may read it otherwise (an
// OpenAPI document types objects but carries no CRD). A CRD the API server
// would not serve (a schema that is not structural, no storage version)
// is an error.
func Parse(data []byte) (*Set, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("decoding the schema: %w", err)
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, fmt.Errorf("decoding the schema: %w", err)
	}
	set := &Set{kinds: map[schema.GroupVersionKind]*Kind{}}
	if head.Kind != "CustomResourceDefinition" {
		return set, nil
	}
	if head.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("a CustomResourceDefinition of apiVersion %q: the API server serves %s only", head.APIVersion, apiextensionsv1.SchemeGroupVersion)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(js, crd); err != nil {
		return nil, fmt.Errorf("decoding the CustomResourceDefinition: %w", err)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	if err := set.add(crd); err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
	}
	return set, nil
}

// add adds crd's served versions to the set.
func (s *Set) add(crd *apiextensionsv1.CustomResourceDefinition) error {
	if crd.Spec.Group == "" || crd.Spec.Names.Kind == "" || crd.Spec.Names.Plural == "" {
		return errors.New("spec.group, spec.names.kind and spec.names.plural are required")
	}
	storage := ""
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			storage = v.Name
		}
	}
	if storage == "" {
		return errors.New("no version has storage: true")
	}
	webhook := crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served {
			// The server answers 404: nothing to predict.
			continue
		}
		k, err := newKind(crd, v)
		if err != nil {
			return fmt.Errorf("version %s: %w", v.Name, err)
		}
		if webhook && v.Name != storage {
			k.cannotKnow = fmt.Sprintf("%s is stored as %s through a conversion webhook, which runs only on the cluster", k.GVK.GroupVersion(), schema.GroupVersion{Group: crd.Spec.Group, Version: storage})
		}
		s.kinds[k.GVK] = k
	}
	return nil
}

// newKind builds what the server builds for one version.
func newKind(crd *apiextensionsv1.CustomResourceDefinition, v *apiextensionsv1.CustomResourceDefinitionVersion) (*Kind, error) {
	k := &Kind{
		GVK:        schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind},
		Resource:   crd.Spec.Names.Plural,
		Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil, errors.New("no schema.openAPIV3Schema: apiextensions.k8s.io/v1 requires one")
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema: %w", err)
	}
	props := internal.OpenAPIV3Schema
	s, err := structuralschema.NewStructural(props)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
		return nil, fmt.Errorf("the schema is not structural: %w", errs.ToAggregate())
	}
	// The server does not own s's defaults, so it prunes a copy.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("pruning the defaults: %w", err)
	}
	k.structural = s
	if k.validator, _, err = apiservervalidation.NewSchemaValidator(props); err != nil {
		return nil, err
	}
	if sub := v.Subresources; sub != nil {
		if sub.Status != nil {
			k.StatusSubresource = true
			if st, ok := props.Properties["status"]; ok {
				if k.statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
					return nil, err
				}
			}
		}
		if sub.Scale != nil {
			k.scale = &apiextensions.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, k.scale, nil); err != nil {
				return nil, err
			}
		}
	}
	// Compiles the rules once, as NewStrategy does.
	k.celValidator = cel.NewValidator(s, true, celconfig.PerCallLimit)
	return k, nil
}
