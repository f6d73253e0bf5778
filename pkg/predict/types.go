package predict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// Method is one way to write an object (writepath.Method). predict
// reports eight of them; their constants are repeated here so callers of
// predict need not import writepath.
type Method = writepath.Method

// The write methods predict reports, in the order they are reported.
const (
	// Update is a PUT carrying the resourceVersion the writer last read.
	Update = writepath.Update
	// UpdateNoRV is a PUT without resourceVersion: last write wins.
	UpdateNoRV = writepath.UpdateNoRV
	// JSONPatch is an RFC 6902 patch: given, or generated from the writer's
	// base with index-based list operations and test operations.
	JSONPatch = writepath.JSONPatch
	// MergePatch is an RFC 7386 merge patch without precondition.
	MergePatch = writepath.MergePatch
	// MergePatchRV is a merge patch carrying metadata.resourceVersion, the
	// optimistic lock of controller-runtime's MergeFromWithOptimisticLock.
	MergePatchRV = writepath.MergePatchRV
	// StrategicMergePatch is Kubernetes' strategic merge patch (built-in
	// types only).
	StrategicMergePatch = writepath.StrategicMergePatch
	// Apply is a server-side apply without force.
	Apply = writepath.Apply
	// ApplyForce is a server-side apply with force=true.
	ApplyForce = writepath.ApplyForce
	// ClientApply is kubectl's client-side apply (kubectl apply without
	// --server-side): the three-way patch kubectl computes, or a create.
	ClientApply = writepath.ClientApply
)

// AllMethods lists every HTTP write method in report order: what "all"
// selects. kubectl's verbs (ClientApply) are asked for by name.
var AllMethods = []Method{Update, UpdateNoRV, JSONPatch, MergePatch, MergePatchRV, StrategicMergePatch, Apply, ApplyForce}

// reportOrder lists every method predict reports, in report order: the
// HTTP methods, then kubectl's verbs.
var reportOrder = append(slices.Clone(AllMethods), KubectlVerbs...)

// Each method name selects that method alone: "apply" is the non-forced
// apply only, "update" the PUT with a resourceVersion only. Several methods
// at once are asked for by listing them or by a family, whose name says it
// is one ("all-apply"). json, merge and strategic are the --type spellings
// of json-patch, merge-patch and strategic-merge-patch.

// methodFamilies maps the family names --method accepts to their methods.
var methodFamilies = map[string][]Method{
	"all":             AllMethods,
	"all-update":      {Update, UpdateNoRV},
	"all-merge-patch": {MergePatch, MergePatchRV},
	"all-apply":       {Apply, ApplyForce},
	"kubectl":         KubectlVerbs,
}

// methodAliases are other names of single methods.
var methodAliases = map[string]Method{
	"json":      JSONPatch,
	"merge":     MergePatch,
	"strategic": StrategicMergePatch,
}

// MethodNames lists the names --method accepts, for help and completion:
// the families, then each method.
func MethodNames() []string {
	names := []string{"all", "all-update", "all-merge-patch", "all-apply", "kubectl"}
	for _, m := range reportOrder {
		names = append(names, string(m))
	}
	return names
}

// ParseMethods turns --method values (method names such as "apply" or
// "update-no-rv", and families such as "all-apply", comma separated) into
// methods in report order. No value means all.
func ParseMethods(names []string) ([]Method, error) {
	want := map[Method]bool{}
	for _, n := range names {
		for _, part := range strings.Split(n, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			ms, err := parseMethod(part)
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				want[m] = true
			}
		}
	}
	if len(want) == 0 {
		return AllMethods, nil
	}
	var out []Method
	for _, m := range reportOrder {
		if want[m] {
			out = append(out, m)
		}
	}
	return out, nil
}

func parseMethod(name string) ([]Method, error) {
	if ms, ok := methodFamilies[name]; ok {
		return ms, nil
	}
	if m, ok := methodAliases[name]; ok {
		return []Method{m}, nil
	}
	// The method's own name, or another spelling of it
	// (update-unconditional); the write path knows methods predict does
	// not report (update-status).
	if m, ok := writepath.ParseMethod(name); ok && slices.Contains(AllMethods, m) {
		return []Method{m}, nil
	}
	if m := Method(name); slices.Contains(reportOrder, m) {
		return []Method{m}, nil
	}
	return nil, fmt.Errorf("unknown method %q: use %s", name, strings.Join(MethodNames(), ", "))
}

// Verdict is what a method would do.
type Verdict string

// The verdicts.
const (
	// OK: the write succeeds and no other manager loses a field.
	OK Verdict = "ok"
	// Conflict: 409, the resourceVersion precondition fails.
	Conflict Verdict = "conflict"
	// ApplyConflict: 409, server-side apply conflicts with other owners.
	ApplyConflict Verdict = "apply-conflict"
	// Invalid: the server rejects the request (422, 415, 400): a failed
	// JSON patch test, strategic merge patch on a custom resource, ...
	Invalid Verdict = "invalid"
	// Clobber: the write succeeds but overwrites or removes fields other
	// managers own: the silent lost update.
	Clobber Verdict = "clobber"
	// NotFound: the object does not exist, so only apply (a create) works.
	NotFound Verdict = "not-found"
	// ServerError: the server fails this one request with a 500 that is
	// no outage (a handler error, not the storage's InternalError): the
	// same request fails every time, so a retry cannot succeed. The known
	// case is a strategic merge patch whose list merge key is not unique
	// (the same port on TCP and UDP).
	ServerError Verdict = "server-error"
	// Unknown: the offline engine does not run the API server's rules
	// for this object (a kind it has no rules for, a kind this build does
	// not know, an aggregated API), so it cannot tell whether the server
	// would refuse the write or store other values; the reason says
	// which. Only verdicts the server decides before those rules stay
	// known: conflict, apply-conflict, not-found and the refusals of the
	// request itself. A custom resource whose CRD was not given is unknown
	// too (the write path's CannotKnowError).
	Unknown Verdict = "unknown"
)

// ObjectRef names an object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Source is where the desired object was read from (file:line).
	Source string `json:"source,omitempty"`
}

// String names the object as kubectl does: Deployment default/web.
func (r ObjectRef) String() string {
	n := r.Name
	if r.Namespace != "" {
		n = r.Namespace + "/" + n
	}
	return r.Kind + " " + n
}

// Result is the prediction for one object.
type Result struct {
	Object ObjectRef `json:"object"`
	// Engine is "server" (dry run) or "offline".
	Engine string `json:"engine"`
	// FieldManager is the writer's manager name.
	FieldManager string `json:"fieldManager"`
	// LiveResourceVersion is the object's current resourceVersion ("" when
	// it does not exist).
	LiveResourceVersion string `json:"liveResourceVersion,omitempty"`
	// BaseResourceVersion is what the writer last read, from the manifest
	// or --base-rv; when neither gives one, the live resourceVersion (a
	// fresh read).
	BaseResourceVersion string `json:"baseResourceVersion,omitempty"`
	// BaseAssumed is true when BaseResourceVersion was taken from the live
	// object.
	BaseAssumed bool `json:"baseAssumed,omitempty"`
	// Stale is true when the base resourceVersion differs from the live one.
	Stale bool `json:"stale"`
	// Rules says which of the API server's rules the offline engine ran
	// on the object's writes, or why it ran none; "" for the server
	// engine, whose dry runs run them all.
	Rules   string         `json:"rules,omitempty"`
	Methods []MethodResult `json:"methods"`
	// Secrets says the result went through pkg/redact: the printer
	// refuses a Secret's result without it.
	Secrets redact.Stamp `json:"-"`
}

// CheckSecrets returns an error unless the result of a Secret went
// through pkg/redact (redact.Guarded).
func (r Result) CheckSecrets() error {
	if !redact.IsSecretKind(r.Object.APIVersion, r.Object.Kind) {
		return nil
	}
	return r.Secrets.Require(r.Object.String())
}

// Worst returns the most severe verdict among the methods. Unknown ranks
// just above ok: a method known to fail says more than one nobody could
// judge.
func (r Result) Worst() Verdict {
	rank := map[Verdict]int{OK: 0, Unknown: 1, NotFound: 2, Invalid: 3, ServerError: 4, Clobber: 5, ApplyConflict: 6, Conflict: 7}
	worst := OK
	for _, m := range r.Methods {
		if rank[m.Verdict] > rank[worst] {
			worst = m.Verdict
		}
	}
	return worst
}

// MethodResult is what one method would do.
type MethodResult struct {
	Method Method `json:"method"`
	// Manager is the field manager of one of kubectl's verbs (its
	// default, or --field-manager); "" for the HTTP methods, which write
	// with Result.FieldManager.
	Manager string  `json:"manager,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Reason explains the verdict in one line.
	Reason string `json:"reason,omitempty"`
	// Code is the HTTP status the server would answer with (200 on success).
	Code int `json:"code"`
	// Conflicts are the fields an apply conflicts on and their owners.
	Conflicts []managedfields.Conflict `json:"conflicts,omitempty"`
	// Clobbered are the fields other managers would lose, per manager.
	Clobbered []Ownership `json:"clobbered,omitempty"`
	// OwnershipChanges are the fields each manager gains or loses.
	OwnershipChanges []OwnershipChange `json:"ownershipChanges,omitempty"`
	// Changed are the fields whose value would change.
	Changed []FieldChange `json:"changed,omitempty"`
	// NoOp is true when the write would store identical bytes: the
	// resourceVersion would not move.
	NoOp bool `json:"noOp,omitempty"`
	// GenerationBumped is true when metadata.generation would increase.
	GenerationBumped bool `json:"generationBumped"`
	// Request is the patch that was sent (empty for updates, which send
	// the desired object completed with the base's system metadata).
	Request string `json:"request,omitempty"`
	// ClientApply is what kubectl's client-side apply computed and sent
	// (client-apply only).
	ClientApply *ClientApplyResult `json:"clientApply,omitempty"`
	// CSAUpgrade is what the move to server-side apply does to an object
	// last applied client-side (apply and apply-force of a manifest).
	CSAUpgrade *CSAUpgrade `json:"csaUpgrade,omitempty"`
}

// Ownership is a manager and some fields.
type Ownership struct {
	Manager     string   `json:"manager"`
	Operation   string   `json:"operation"`
	Subresource string   `json:"subresource,omitempty"`
	Fields      []string `json:"fields"`
}

// OwnershipChange is the fields one managedFields entry gains and loses.
type OwnershipChange struct {
	Manager     string   `json:"manager"`
	Operation   string   `json:"operation"`
	Subresource string   `json:"subresource,omitempty"`
	Gained      []string `json:"gained,omitempty"`
	Lost        []string `json:"lost,omitempty"`
}

// FieldChange is one changed field.
type FieldChange struct {
	Path string `json:"path"`
	// Change is added, modified or removed.
	Change string `json:"change"`
}
