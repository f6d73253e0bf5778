package crd

import (
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// Rules are the API server's rules for the built-in kinds
// (serverrules.Rules) and for the custom resources of CRDs, whose
// decoding (pruning, defaults) and validation run on
// apiextensions-apiserver's code: the writepath.Rules predict --offline
// and simulate run.
type Rules struct {
	serverrules.Rules
	// CRDs are the custom resource kinds (Parse); nil: none.
	CRDs *Set
}

var _ writepath.Rules = Rules{}

// WithSchema returns the rules with the custom resource kinds of schema,
// the bytes of predict --schema: a CustomResourceDefinition's served
// versions (Parse), none for an OpenAPI document.
func WithSchema(schema []byte) (Rules, error) {
	return Rules{}.withSchemas(schema)
}

// WithSchemas returns r with the custom resource kinds of schemas (one
// document each, see the package's WithSchema) added to those it has, for
// the commands, which hold r as a writepath.Rules (predict --schema). An
// error is a *SchemaError saying which document.
func (r Rules) WithSchemas(schemas ...[]byte) (writepath.Rules, error) {
	return r.withSchemas(schemas...)
}

func (r Rules) withSchemas(schemas ...[]byte) (Rules, error) {
	// One new set for them all: r's may be another Rules' too.
	set := r.CRDs.clone()
	for i, s := range schemas {
		crds, err := Parse(s)
		if err != nil {
			return Rules{}, &SchemaError{Index: i, Err: err}
		}
		maps.Copy(set.kinds, crds.kinds)
	}
	r.CRDs = set
	return r, nil
}

// SchemaError is the error of one of the documents given to WithSchemas.
type SchemaError struct {
	Index int
	Err   error
}

func (e *SchemaError) Error() string { return e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }

// Document is the index of the document.
func (e *SchemaError) Document() int { return e.Index }

// Decode is what the server's codec does to a custom resource of r.CRDs
// it decodes (Kind.Decode): unknown fields pruned, then defaults filled;
// serverrules.Rules.Decode for the other kinds.
func (r Rules) Decode(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	r.fill(gvk, obj, (*Kind).Decode, r.Rules.Decode)
}

// Default is, for a kind of r.CRDs, its schema's defaults (Kind.Default),
// as the field manager fills them after a server-side apply;
// serverrules.Rules.Default for the other kinds.
func (r Rules) Default(gvk schema.GroupVersionKind, obj *unstructured.Unstructured) {
	r.fill(gvk, obj, (*Kind).Default, r.Rules.Default)
}

// fill runs fn, Decode or Default, of kind gvk on obj where gvk is a kind
// of r.CRDs whose writes the rules can know (none where they cannot), and
// builtin, the same of the built-in kinds' rules, where it is no kind of
// r.CRDs.
func (r Rules) fill(gvk schema.GroupVersionKind, obj *unstructured.Unstructured, fn func(*Kind, map[string]any), builtin func(schema.GroupVersionKind, *unstructured.Unstructured)) {
	if k := r.CRDs.Kind(gvk); k != nil {
		if k.CannotKnow() == "" {
			fn(k, obj.Object)
		}
		return
	}
	builtin(gvk, obj)
}

// UnknownFields returns, for a kind of r.CRDs whose writes the rules can
// know, the fields of obj the server's decoder finds unknown
// (Kind.UnknownFields); false for other kinds.
func (r Rules) UnknownFields(gvk schema.GroupVersionKind, obj map[string]any) ([]string, bool) {
	k := r.CRDs.Kind(gvk)
	if k == nil || k.CannotKnow() != "" {
		return nil, false
	}
	return k.UnknownFields(obj), true
}

// Validator is, for a kind of r.CRDs, the customresource strategies'
// validation (Kind.Validate) as a 422, or for a kind whose writes the
// rules cannot know a *writepath.CannotKnowError;
// serverrules.Rules.Validator for the other kinds.
func (r Rules) Validator(gvk schema.GroupVersionKind) func(obj, old *unstructured.Unstructured, sub string) error {
	k := r.CRDs.Kind(gvk)
	if k == nil {
		return r.Rules.Validator(gvk)
	}
	if reason := k.CannotKnow(); reason != "" {
		return func(_, _ *unstructured.Unstructured, _ string) error {
			return &writepath.CannotKnowError{Reason: reason}
		}
	}
	return func(obj, old *unstructured.Unstructured, sub string) error {
		if errs := k.Validate(obj, old, sub); len(errs) > 0 {
			return apierrors.NewInvalid(gvk.GroupKind(), obj.GetName(), errs)
		}
		return nil
	}
}
