package predict

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// ClientApplyManager is the field manager kubectl apply (client side)
// sends unless --field-manager says otherwise.
const ClientApplyManager = "kubectl-client-side-apply"

// LastAppliedAnnotation is the annotation in which kubectl apply keeps the
// configuration it applied last.
const LastAppliedAnnotation = writepath.LastAppliedAnnotation

// The client-side apply actions.
const (
	// ActionCreate: the object does not exist; kubectl creates it with
	// the annotation.
	ActionCreate = "create"
	// ActionPatch: kubectl sends the three-way patch.
	ActionPatch = "patch"
	// ActionUnchanged: the three-way patch is empty; kubectl sends nothing
	// and prints "unchanged".
	ActionUnchanged = "unchanged"
)

// ClientApplyResult is what kubectl's client-side apply computed and sent.
type ClientApplyResult struct {
	// Action is create, patch or unchanged.
	Action string `json:"action"`
	// PatchType is the patch kubectl sends: strategic (built-in kinds) or
	// merge (custom resources and kinds kubectl has no Go type of).
	PatchType PatchType `json:"patchType,omitempty"`
	// AnnotationMissing says the live object has no last-applied
	// annotation: kubectl warns, computes the patch from the live object
	// and the manifest alone (deleting nothing) and adds the annotation.
	AnnotationMissing bool `json:"annotationMissing,omitempty"`
	// Warning is what kubectl prints on stderr, if anything.
	Warning string `json:"warning,omitempty"`
	// Deleted are the fields the three-way merge deletes because they left
	// the manifest: in the last-applied configuration, not in the
	// manifest, and removed (or re-defaulted) by the write.
	Deleted []string `json:"deleted,omitempty"`
	// LastApplied is what the annotation becomes.
	LastApplied string `json:"lastApplied,omitempty"`
}

// noAnnotationWarning is kubectl's warning for an object without the
// annotation (k8s.io/kubectl/pkg/cmd/apply warningNoLastAppliedConfigAnnotation).
const noAnnotationWarning = "Warning: resource %[1]s is missing the %[2]s annotation which is required by %[3]s apply. %[3]s apply should only be used on resources created declaratively by either %[3]s create --save-config or %[3]s apply. The missing annotation will be patched automatically."

// clientApplyPlan is what kubectl computed before it sends anything: the
// result so far, and the configurations the deletions are told from.
type clientApplyPlan struct {
	result             ClientApplyResult
	original, modified *unstructured.Unstructured
}

// clientApplyRequest computes the request kubectl apply sends for the
// manifest desired against live (nil: it does not exist), with kubectl's
// own functions: the modified configuration with the annotation
// (GetModifiedConfiguration), then a create, or the three-way patch of the
// annotation's configuration, the manifest and the live object
// (strategicpatch.CreateThreeWayMergePatch with the Go type's patch
// metadata, or jsonmergepatch.CreateThreeWayJSONMergePatch for kinds
// without a Go type), overwrite on as kubectl's --overwrite defaults.
func clientApplyRequest(cfg Config, in Input, live *unstructured.Unstructured) (request, error) {
	rq := request{method: ClientApply, manager: cfg.FieldManager, validation: cfg.kubectlValidation()}
	if rq.manager == "" {
		rq.manager = ClientApplyManager
	}
	if in.Desired == nil {
		rq.skip, rq.skipVerdict = "kubectl apply needs a manifest (-f), not a patch", Invalid
		return rq, nil
	}
	desired := in.Desired.DeepCopy()
	if desired.GetNamespace() == "" && in.Ref.Namespace != "" {
		// kubectl's builder sets the default namespace on a namespaced object.
		desired.SetNamespace(in.Ref.Namespace)
	}
	plan := &clientApplyPlan{}
	rq.clientApply = plan
	if live == nil {
		return clientApplyCreate(rq, desired)
	}
	car, err := writepath.ClientApplyPatch(live, desired)
	if errors.Is(err, writepath.ErrThreeWayPatch) {
		rq.skip, rq.skipVerdict = err.Error(), Invalid
		return rq, nil
	} else if err != nil {
		return rq, err
	}
	original, modified := car.Original, car.Modified
	rq.pt, rq.data = car.PatchType, car.Patch
	plan.result.Action = ActionPatch
	if original == nil {
		plan.result.AnnotationMissing = true
		plan.result.Warning = fmt.Sprintf(noAnnotationWarning, objectName(live), LastAppliedAnnotation, "kubectl")
	}
	plan.result.PatchType = PatchMerge
	if rq.pt == types.StrategicMergePatchType {
		plan.result.PatchType = PatchStrategic
	}
	if plan.original, err = configObject(original); err == nil {
		plan.modified, err = configObject(modified)
	}
	if err != nil {
		return rq, err
	}
	plan.modified.SetAnnotations(withoutLastApplied(plan.modified.GetAnnotations()))
	if string(rq.data) == "{}" {
		plan.result.Action = ActionUnchanged
		plan.result.LastApplied = live.GetAnnotations()[LastAppliedAnnotation]
		rq.skip, rq.skipVerdict = "kubectl sends nothing: the three-way patch is empty (kubectl prints unchanged)", OK
	}
	return rq, nil
}

// clientApplyCreate is kubectl apply's create: the annotation set, nulls
// pruned (after the annotation, so that it is the one an update apply of
// the same manifest stores), the resourceVersion cleared.
func clientApplyCreate(rq request, desired *unstructured.Unstructured) (request, error) {
	obj, err := writepath.ClientApplyCreate(desired)
	if err != nil {
		return rq, err
	}
	rq.create = obj
	rq.clientApply.result.Action = ActionCreate
	rq.clientApply.result.LastApplied = obj.GetAnnotations()[LastAppliedAnnotation]
	return rq, nil
}

// objectName names the object as kubectl's warning does (resource/name).
func objectName(live *unstructured.Unstructured) string {
	gvr, _ := meta.UnsafeGuessKindToResource(live.GroupVersionKind())
	return gvr.GroupResource().String() + "/" + live.GetName()
}

// configObject decodes a configuration kubectl holds as JSON; nil stays
// nil.
func configObject(js []byte) (*unstructured.Unstructured, error) {
	if js == nil {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, err
	}
	return u, nil
}

func withoutLastApplied(a map[string]string) map[string]string {
	delete(a, LastAppliedAnnotation)
	if len(a) == 0 {
		return nil
	}
	return a
}

// finish completes the client-side apply's result from the write's
// outcome: what the annotation became, and which of the fields that left
// the manifest the write removed or changed.
func (p *clientApplyPlan) finish(tc managedfields.TypeConverter, mr *MethodResult, after *unstructured.Unstructured) {
	r := p.result
	mr.ClientApply = &r
	if after != nil && r.Action != ActionUnchanged {
		r.LastApplied = after.GetAnnotations()[LastAppliedAnnotation]
	}
	if p.original == nil || len(mr.Changed) == 0 {
		return
	}
	orig, mod := fieldSet(tc, p.original), fieldSet(tc, p.modified)
	if orig == nil || mod == nil {
		return
	}
	left := map[string]bool{}
	orig.Difference(mod).Leaves().Iterate(func(fp fieldpath.Path) { left[fp.String()] = true })
	for _, c := range mr.Changed {
		if left[c.Path] {
			r.Deleted = append(r.Deleted, c.Path)
		}
	}
	sort.Strings(r.Deleted)
}

// fieldSet is the set of fields u sets, typed as the changed fields are.
func fieldSet(tc managedfields.TypeConverter, u *unstructured.Unstructured) *fieldpath.Set {
	t := newTypedObject(tc, u)
	v := t.schema
	if v == nil {
		v = t.deduced()
	}
	if v == nil {
		return nil
	}
	s, err := v.ToFieldSet()
	if err != nil {
		return nil
	}
	return s
}
