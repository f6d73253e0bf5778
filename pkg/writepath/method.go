package writepath

// Method is one way a client writes an object. predict reports what each
// would do; the simulator's writers use one each.
type Method string

// The write methods.
const (
	// Update is a PUT carrying the resourceVersion the writer last read
	// (409 on a race).
	Update Method = "update"
	// UpdateNoRV is a PUT without resourceVersion: last write wins, or 422
	// for kinds that refuse unconditional updates (custom resources).
	// Scenarios may spell it update-unconditional.
	UpdateNoRV Method = "update-no-rv"
	// UpdateStatus is Update on the status subresource.
	UpdateStatus Method = "update-status"
	// JSONPatch is an RFC 6902 patch.
	JSONPatch Method = "json-patch"
	// JSONPatchTest is a JSON patch guarded by a test operation on the
	// value read: 422 on a race.
	JSONPatchTest Method = "json-patch-test"
	// MergePatch is an RFC 7386 merge patch without precondition (never
	// 409).
	MergePatch Method = "merge-patch"
	// MergePatchRV is a merge patch carrying metadata.resourceVersion, the
	// optimistic lock of controller-runtime's MergeFromWithOptimisticLock.
	MergePatchRV Method = "merge-patch-rv"
	// StrategicMergePatch is Kubernetes' strategic merge patch (built-in
	// types only).
	StrategicMergePatch Method = "strategic-merge-patch"
	// Apply is a server-side apply without force (409 on field conflicts).
	Apply Method = "apply"
	// ApplyForce is a server-side apply with force=true.
	ApplyForce Method = "apply-force"
	// ClientApply is kubectl's client-side apply: the client computes a
	// three-way patch from the last-applied-configuration annotation, the
	// live object and the manifest, and sends it as a strategic merge
	// patch (a JSON merge patch for custom resources) without
	// resourceVersion, or creates the object (ClientApplyPatch,
	// ClientApplyCreate). The write path sees only that patch or create.
	ClientApply Method = "client-apply"
)

// Methods lists every write method.
var Methods = []Method{Update, UpdateNoRV, UpdateStatus, MergePatch, MergePatchRV, StrategicMergePatch, JSONPatch, JSONPatchTest, Apply, ApplyForce, ClientApply}

// UpdateUnconditional is the scenario spelling of UpdateNoRV, accepted
// wherever a method is named.
const UpdateUnconditional = "update-unconditional"

// ParseMethod returns the method a name spells: its own name, or
// update-unconditional for UpdateNoRV.
func ParseMethod(name string) (Method, bool) {
	switch m := Method(name); m {
	case Update, UpdateNoRV, UpdateStatus, JSONPatch, JSONPatchTest, MergePatch, MergePatchRV, StrategicMergePatch, Apply, ApplyForce, ClientApply:
		return m, true
	case UpdateUnconditional:
		return UpdateNoRV, true
	}
	return "", false
}

// IsApply reports whether the method is a server-side apply.
func (m Method) IsApply() bool { return m == Apply || m == ApplyForce }
