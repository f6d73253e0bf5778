package predict

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

// redactResult stamps res and, when the object is a Secret and show is
// false, hashes the Secret values in what the result prints and in err:
// the requests (patches and apply bodies, which may set or test values)
// and the reasons and errors the server or a library wrote, which may
// quote them. The values it looks for are those of the desired object,
// the writer's base, the live object and the given patch. The rest of a
// result holds paths and counts, never values.
func redactResult(show bool, in Input, live *unstructured.Unstructured, res Result, err error) (Result, error) {
	r := redact.New(show)
	res.Secrets = r.Stamp()
	if show || !isSecret(in, live) {
		return res, err
	}
	for _, u := range []*unstructured.Unstructured{in.Desired, in.Base, live} {
		if u != nil {
			r.Remember(u.Object)
		}
	}
	if in.Patch != nil {
		r.Patch(requestType(in.PatchType == PatchJSON), in.Patch)
	}
	// Every request first: each remembers the values it holds, which the
	// reasons may quote.
	for i := range res.Methods {
		m := &res.Methods[i]
		if m.Request != "" {
			m.Request = string(r.Patch(requestType(m.Method == JSONPatch), []byte(m.Request)))
		}
		if ca := m.ClientApply; ca != nil && ca.LastApplied != "" {
			// The annotation is the Secret's manifest: a partial object.
			c := *ca
			c.LastApplied = string(r.Patch(types.MergePatchType, []byte(c.LastApplied)))
			m.ClientApply = &c
		}
	}
	for i := range res.Methods {
		m := &res.Methods[i]
		m.Request, m.Reason = r.String(m.Request), r.String(m.Reason)
	}
	return res, r.Error(err)
}

// requestType is the patch type Redactor.Patch needs: a JSON patch, or a
// partial object (merge, strategic merge and apply patches alike).
func requestType(jsonPatch bool) types.PatchType {
	if jsonPatch {
		return types.JSONPatchType
	}
	return types.MergePatchType
}

// isSecret reports whether the prediction is about a Secret: what the
// input names, or the objects it carries.
func isSecret(in Input, live *unstructured.Unstructured) bool {
	if redact.IsSecretKind(in.Ref.APIVersion, in.Ref.Kind) {
		return true
	}
	for _, u := range []*unstructured.Unstructured{in.Desired, in.Base, live} {
		if u != nil && redact.IsSecret(u.Object) {
			return true
		}
	}
	return false
}
