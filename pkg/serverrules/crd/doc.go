// Package crd runs apiextensions-apiserver's own handling of custom
// resources in process, for the CustomResourceDefinitions given: what the
// server does when it decodes a request body or a stored object (metadata
// coerced through ObjectMeta, unknown fields pruned by the structural
// schema, nulls of non-nullable fields without a default dropped, the
// schema's defaults filled in) and what the customresource registry
// strategies validate (ObjectMeta, the OpenAPI schema with ratcheting,
// embedded resources, list-type invariants, x-kubernetes-validations CEL
// rules with oldSelf on update, the /status strategy's rules).
//
// The strategies (apiextensions-apiserver/pkg/registry/customresource) and
// the request codec (pkg/apiserver) are not linked: they bring the
// apiserver's storage and handler stack. Their few lines of glue around
// the schema packages are written here from their code; every rule itself
// runs on the upstream packages (pkg/apiserver/schema/..., pkg/apiserver/
// validation).
//
// Example: a CRD whose spec.size has default 1 and type integer. A
// request with spec: {size: null, color: red} where color is not in the
// schema decodes to spec: {size: 1}; spec: {size: "big"} is refused with
// the server's 422, `Gadget.example.com "g" is invalid: spec.size: Invalid
// value: "string": spec.size in body must be of type integer: "string"`.
//
// It does not convert between versions: a version that is not the
// storage version of a CRD with a conversion webhook is reported as
// unknown (writepath.CannotKnow), not guessed.
//
// Its Rules are serverrules.Rules with these custom resources: the
// commands hand them to the engines, which never link the API server's
// code. The schema packages bring k8s.io/component-base (feature gates,
// metrics), and with it the flag libraries spf13/pflag and spf13/cobra
// (component-base/cli/flag): besides pkg/cmd, pkg/serverrules and this
// package are the only ones in pkg/ that link them (hack/imports_test.go
// holds it so).
package crd
