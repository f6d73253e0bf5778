package predict

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// kubectl's verbs: what a user's usual command sends, each with kubectl's
// default field manager (--field-manager overrides it, as each kubectl
// command's flag does). ClientApply is one of them.
const (
	// ServerSideApply is kubectl apply --server-side: a server-side apply
	// of the manifest by "kubectl", without force.
	ServerSideApply Method = "server-side-apply"
	// Replace is kubectl replace -f: a PUT of the manifest as it is, with
	// its resourceVersion, or the live one when it has none (kubectl reads
	// it first).
	Replace Method = "replace"
	// Edit is kubectl edit saving the manifest's changes (and keeping the
	// last-applied annotation it showed): a two-way strategic merge patch
	// (a JSON merge patch for custom resources) from the object read to
	// the one saved.
	Edit Method = "edit"
	// KubectlPatch is kubectl patch --type json|merge|strategic with the
	// patch given.
	KubectlPatch Method = "patch"
)

// KubectlVerbs lists kubectl's verbs in report order: what --method
// kubectl selects (patch only goes with a given patch, the others with a
// manifest).
var KubectlVerbs = []Method{ClientApply, ServerSideApply, Replace, Edit, KubectlPatch}

// verbManagers are kubectl's default field managers of its verbs.
var verbManagers = map[Method]string{
	ClientApply:     ClientApplyManager,
	ServerSideApply: KubectlApplyManager,
	Replace:         "kubectl-replace",
	Edit:            "kubectl-edit",
	KubectlPatch:    "kubectl-patch",
}

// verbManager is the manager a verb writes with.
func verbManager(cfg Config, m Method) string {
	if cfg.FieldManager != "" {
		return cfg.FieldManager
	}
	return verbManagers[m]
}

// verbRequest builds the request of one of kubectl's verbs for a
// manifest; ok is false for the methods that are no verb of a manifest.
func verbRequest(cfg Config, in Input, live *unstructured.Unstructured, pb *patchBuilder, m Method) (request, bool, error) {
	rq := request{method: m, manager: verbManager(cfg, m), validation: cfg.kubectlValidation()}
	switch m {
	case ServerSideApply:
		rq.pt, rq.config = types.ApplyPatchType, in.Desired
		b, err := json.Marshal(jsonvalue.WithoutMeta(in.Desired.Object, "managedFields"))
		rq.data = b
		return rq, true, err
	case Replace:
		rv := in.Desired.GetResourceVersion()
		if rv == "" && live != nil {
			rv = live.GetResourceVersion()
		}
		rq.obj = withResourceVersion(in.Desired, rv)
		return rq, true, nil
	case Edit:
		if live == nil {
			rq.skip, rq.skipVerdict = "kubectl edit needs the object: it does not exist", NotFound
			return rq, true, nil
		}
		epb := &patchBuilder{base: pb.base, full: keepLastApplied(pb.full, live), desired: pb.desired, rv: pb.rv}
		err := epb.encode()
		if err == nil {
			err = editPatch(epb, &rq)
		}
		return rq, true, err
	}
	// kubectl patch needs a given patch: a manifest has none.
	return rq, false, nil
}

// editPatch is kubectl edit's patch from the object read to the one
// saved: two-way strategic merge patch where kubectl has the kind's Go
// type, else a JSON merge patch; none at all when nothing changed.
func editPatch(pb *patchBuilder, rq *request) error {
	var err error
	if managedfields.IsBuiltin(pb.desired.GroupVersionKind()) {
		rq.pt = types.StrategicMergePatchType
		rq.data, err = strategicPatch(pb.fromJS, pb.toJS, pb.desired)
	} else {
		rq.pt = types.MergePatchType
		rq.data, err = pb.mergePatch()
	}
	if err == nil && string(rq.data) == "{}" {
		rq.skip, rq.skipVerdict = "kubectl edit sends nothing: the object saved is the one read (kubectl prints skipped)", OK
	}
	return err
}

// givenPatchVerb is kubectl patch with a given patch of type pt.
func givenPatchVerb(cfg Config, in Input) request {
	rq := request{method: KubectlPatch, manager: verbManager(cfg, KubectlPatch), data: in.Patch}
	switch in.PatchType {
	case PatchJSON:
		rq.pt = types.JSONPatchType
	case PatchMerge:
		rq.pt = types.MergePatchType
	case PatchStrategic:
		rq.pt = types.StrategicMergePatchType
	default:
		rq.skip, rq.skipVerdict = fmt.Sprintf("kubectl patch takes --type json, merge or strategic, not %s (kubectl apply --server-side sends an apply)", in.PatchType), Invalid
	}
	return rq
}

// onlyVerbs reports whether every method is one of kubectl's verbs.
func onlyVerbs(ms []Method) bool {
	for _, m := range ms {
		if _, ok := verbManagers[m]; !ok {
			return false
		}
	}
	return len(ms) > 0
}

// keepLastApplied is the object saved in kubectl edit: the manifest's
// changes, and the last-applied annotation the editor showed, which no
// manifest carries and a user leaves alone.
func keepLastApplied(full, live *unstructured.Unstructured) *unstructured.Unstructured {
	la, ok := live.GetAnnotations()[LastAppliedAnnotation]
	if !ok {
		return full
	}
	if _, has := full.GetAnnotations()[LastAppliedAnnotation]; has {
		return full
	}
	out := &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(full.Object)}
	a := map[string]string{}
	for k, v := range full.GetAnnotations() {
		a[k] = v
	}
	a[LastAppliedAnnotation] = la
	out.SetAnnotations(a)
	return out
}
