package predict

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// optimisticLockErrorMsg is the API server's message for a failed
// resourceVersion precondition.
const optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// Offline builds offline executors. It caches one field manager per kind,
// so predicting many objects stays cheap. It is safe for concurrent use.
type Offline struct {
	tc managedfields.TypeConverter

	// mu guards fms.
	mu  sync.Mutex
	fms map[schema.GroupVersionKind]*managedfields.FieldManager
}

// NewOffline returns an offline engine typing objects with tc (nil: the
// built-in schema).
func NewOffline(tc managedfields.TypeConverter) *Offline {
	if tc == nil {
		tc = managedfields.BuiltinTypeConverter()
	}
	return &Offline{tc: tc, fms: map[schema.GroupVersionKind]*managedfields.FieldManager{}}
}

func (o *Offline) fieldManager(gvk schema.GroupVersionKind) (*managedfields.FieldManager, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if fm, ok := o.fms[gvk]; ok {
		return fm, nil
	}
	fm, err := managedfields.NewFieldManager(o.tc, gvk)
	if err != nil {
		return nil, err
	}
	o.fms[gvk] = fm
	return fm, nil
}

// Executor returns the executor for one object: live is its current state
// with managedFields (nil when it does not exist), gvk its kind.
func (o *Offline) Executor(gvk schema.GroupVersionKind, name string, live *unstructured.Unstructured) (Executor, error) {
	fm, err := o.fieldManager(gvk)
	if err != nil {
		return nil, err
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	e := &offlineExecutor{fm: fm, gvk: gvk, gr: gvr.GroupResource(), name: name, live: live}
	if live == nil {
		return e, nil
	}
	rideAlong := managedFieldsRideAlong(live)
	// All of live as JSON is needed only by patches that see managedFields
	// and by failing ones: it is made on first use, unless only encoding
	// it can tell whether it encodes at all.
	if !rideAlong || !encodes(live.Object["metadata"].(map[string]any)["managedFields"]) {
		if _, err := e.liveJSON(); err != nil {
			return nil, err
		}
	}
	if rideAlong {
		bare := &unstructured.Unstructured{Object: withoutMeta(live.Object, "managedFields")}
		if e.bareJS, err = bare.MarshalJSON(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// liveJSON returns live as JSON, encoding it on first use.
func (e *offlineExecutor) liveJSON() ([]byte, error) {
	e.liveOnce.Do(func() { e.liveJS, e.liveErr = e.live.MarshalJSON() })
	return e.liveJS, e.liveErr
}

// encodes reports whether v certainly encodes as JSON: it holds only the
// types JSON decodes to, and no NaN or infinity. (Then the first error in
// encoding all of live, if any, is the same as in encoding it without v.)
func encodes(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if !encodes(e) {
				return false
			}
		}
	case []any:
		for _, e := range t {
			if !encodes(e) {
				return false
			}
		}
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	case nil, string, bool, int64:
	default:
		return false
	}
	return true
}

// managedFieldsRideAlong reports whether live's managedFields are ones the
// field manager reads the same from live whether a write carries a copy of
// them or none at all: a list of entries, not absent, not empty and not the
// single empty entry that asks the server to reset them. Patches that
// cannot see them then run on live without them (bareJS), which is the
// larger part of a small object's JSON.
func managedFieldsRideAlong(live *unstructured.Unstructured) bool {
	md, _ := live.Object["metadata"].(map[string]any)
	items, _ := md["managedFields"].([]any)
	switch len(items) {
	case 0:
		return false
	case 1:
		// A named manager makes the entry non-empty.
		first, _ := items[0].(map[string]any)
		name, _ := first["manager"].(string)
		return name != ""
	}
	return true
}

// patchSeesManagedFields reports whether a JSON patch (decoded as ops) or
// a strategic merge patch may read or write metadata.managedFields, or
// replace, test, move or copy one of its parents. It says false only when
// it is sure: a JSON patch whose paths all lie elsewhere, or a strategic
// merge patch without directives at the top or in metadata whose metadata,
// if any, is an object without managedFields. Such a patch gives the same
// object with or without them. (Merge patches are checked by mergeBare.)
func patchSeesManagedFields(pt types.PatchType, data []byte, ops jsonpatch.Patch) bool {
	switch pt {
	case types.JSONPatchType:
		for _, op := range ops {
			for _, k := range []string{"path", "from"} {
				raw := op[k]
				if raw == nil {
					// Absent (or null): the operation fails if it needs it.
					continue
				}
				p, ok := jsonString(*raw)
				if !ok || pointerSeesManagedFields(p) {
					return true
				}
			}
		}
		return false
	case types.StrategicMergePatchType:
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil || top == nil || hasDirective(top) {
			return true
		}
		raw, ok := top["metadata"]
		if !ok {
			return false
		}
		var md map[string]json.RawMessage
		if json.Unmarshal(raw, &md) != nil || md == nil || hasDirective(md) {
			return true
		}
		_, ok = md["managedFields"]
		return ok
	}
	return true
}

// pointerSeesManagedFields reports whether JSON pointer p (as the JSON
// patch library reads it: the part before the first "/" is ignored) is the
// whole document, metadata, or at or under metadata.managedFields. Neither
// name has characters that escape, so the names compare as written.
func pointerSeesManagedFields(p string) bool {
	_, rest, ok := strings.Cut(p, "/")
	if !ok {
		return true
	}
	first, rest, ok := strings.Cut(rest, "/")
	if first != "metadata" {
		return false
	}
	if !ok {
		return true
	}
	second, _, _ := strings.Cut(rest, "/")
	return second == "managedFields"
}

// jsonString decodes a JSON string, without the decoder when it has no
// escapes.
func jsonString(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// hasDirective reports whether a strategic merge patch map holds a
// directive ($patch, $retainKeys, $setElementOrder/..., $deleteFromPrimitiveList/...).
func hasDirective(m map[string]json.RawMessage) bool {
	for k := range m {
		if strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

// offlineExecutor replays the API server's handling of writes to one
// object in process.
type offlineExecutor struct {
	fm   *managedfields.FieldManager
	gvk  schema.GroupVersionKind
	gr   schema.GroupResource
	name string
	live *unstructured.Unstructured
	// liveJS is live as JSON, made on first use (see liveJSON).
	liveOnce sync.Once
	liveJS   []byte
	liveErr  error
	// bareJS is live as JSON without managedFields, for the patches that
	// cannot see them; nil unless managedFieldsRideAlong(live).
	bareJS []byte
	// bareObj is bareJS decoded, made on first use by a merge patch.
	bareOnce sync.Once
	bareObj  map[string]any
	bareErr  error

	// applyMu guards applied.
	applyMu sync.Mutex
	applied map[applyKey]applyResult

	// mu guards memo.
	mu sync.Mutex
	// memo holds the results of update, shared by methods that merge to
	// the same object. Callers must not modify the returned objects.
	memo []memoEntry
}

var _ Executor = (*offlineExecutor)(nil)

func (e *offlineExecutor) Engine() string { return "offline" }

func (e *offlineExecutor) Live(context.Context) (*unstructured.Unstructured, error) {
	if e.live == nil {
		return nil, apierrors.NewNotFound(e.gr, e.name)
	}
	// Not a copy: Predict only reads it, and copying it (managedFields
	// and all) was one of the larger allocations of a prediction.
	return e.live, nil
}

func (e *offlineExecutor) conflict() error {
	return apierrors.NewConflict(e.gr, e.name, errors.New(optimisticLockErrorMsg))
}

func (e *offlineExecutor) Update(_ context.Context, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	if e.live == nil {
		return nil, apierrors.NewNotFound(e.gr, e.name)
	}
	obj = obj.DeepCopy()
	if rv := obj.GetResourceVersion(); rv != "" && rv != e.live.GetResourceVersion() {
		return nil, e.conflict()
	}
	obj.SetResourceVersion(e.live.GetResourceVersion())
	e.beforeUpdate(obj)
	applyDefaults(e.gvk, obj)
	return e.update(obj, manager)
}

func (e *offlineExecutor) Patch(_ context.Context, pt types.PatchType, data []byte, manager string, force bool) (*unstructured.Unstructured, error) {
	if pt == types.ApplyPatchType {
		return e.apply(data, manager, force)
	}
	if e.live == nil {
		return nil, apierrors.NewNotFound(e.gr, e.name)
	}
	// A patch that cannot see managedFields runs on live without them, and
	// the patched object then carries none: the field manager reads live's,
	// as it would read the copy the patched object would carry. Updates
	// and patches that merge to the same object then also share the field
	// manager's run (see update). Errors can quote the document, so a
	// failing patch runs again on all of live for the server's words.
	var ops jsonpatch.Patch
	if pt == types.JSONPatchType {
		var err error
		if ops, err = jsonpatch.DecodePatch(data); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	var obj *unstructured.Unstructured
	switch {
	case e.bareJS == nil:
	case pt == types.MergePatchType:
		obj = e.mergeBare(data)
	case !patchSeesManagedFields(pt, data, ops):
		obj, _ = e.patchDoc(e.bareJS, pt, data, ops)
	}
	if obj == nil {
		liveJS, err := e.liveJSON()
		if err != nil {
			return nil, err
		}
		if obj, err = e.patchDoc(liveJS, pt, data, ops); err != nil {
			return nil, err
		}
	}
	// The patched object carries the resourceVersion the patch left in it:
	// the live one unless the patch set another (an optimistic lock).
	if obj.GetResourceVersion() != e.live.GetResourceVersion() {
		return nil, e.conflict()
	}
	e.beforeUpdate(obj)
	applyDefaults(e.gvk, obj)
	return e.update(obj, manager)
}

// mergeBare applies a merge patch to live without managedFields, in
// memory: no document to decode, patch and encode again. It returns nil
// when the patch is not an object, may see managedFields (its metadata, if
// any, is not an object without them), or leaves no kind (the server's
// error quotes the document).
func (e *offlineExecutor) mergeBare(data []byte) *unstructured.Unstructured {
	var patch map[string]any
	if utiljson.Unmarshal(data, &patch) != nil || patch == nil {
		return nil
	}
	if md, ok := patch["metadata"]; ok {
		m, isMap := md.(map[string]any)
		if !isMap {
			return nil
		}
		if _, ok := m["managedFields"]; ok {
			return nil
		}
	}
	e.bareOnce.Do(func() {
		// Decoded from JSON, the values have the types the patched
		// document's decode would give them.
		e.bareErr = utiljson.Unmarshal(e.bareJS, &e.bareObj)
	})
	if e.bareErr != nil {
		return nil
	}
	obj := &unstructured.Unstructured{Object: mergeInto(runtime.DeepCopyJSON(e.bareObj), patch)}
	if obj.GetKind() == "" {
		return nil
	}
	return obj
}

// mergeInto applies the JSON merge patch patch to doc in place and returns
// doc, with the rules of the library the API server uses
// (gopkg.in/evanphx/json-patch.v4 MergePatch) on decoded values: null
// removes a key, an object merges into an object, and any other value
// replaces the old one; a value put where there was none, null or no
// object loses the nulls of its objects, also of objects in lists, but a
// value that replaces an object keeps them.
func mergeInto(doc, patch map[string]any) map[string]any {
	for k, v := range patch {
		if v == nil {
			delete(doc, k)
			continue
		}
		cur, isObj := doc[k].(map[string]any)
		if !isObj {
			doc[k] = pruneNulls(v)
			continue
		}
		if p, ok := v.(map[string]any); ok {
			mergeInto(cur, p)
		} else {
			doc[k] = v
		}
	}
	return doc
}

// pruneNulls drops the null members of v's objects, at any depth, and
// returns v. Nulls in lists stay.
func pruneNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
			} else {
				pruneNulls(e)
			}
		}
	case []any:
		for _, e := range t {
			pruneNulls(e)
		}
	}
	return v
}

// patchDoc applies a patch of type pt to doc and decodes the result, with
// the API server's errors. A JSON patch comes decoded as ops (applying it
// does not change it).
func (e *offlineExecutor) patchDoc(doc []byte, pt types.PatchType, data []byte, ops jsonpatch.Patch) (*unstructured.Unstructured, error) {
	var patched []byte
	switch pt {
	case types.JSONPatchType:
		var err error
		patched, err = ops.Apply(doc)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	case types.MergePatchType:
		var err error
		patched, err = jsonpatch.MergePatch(doc, data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		typed, err := scheme.Scheme.New(e.gvk)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "patch", e.gr, e.name,
				"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", 0, false)
		}
		patched, err = strategicpatch.StrategicMergePatch(doc, data, typed)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	default:
		return nil, fmt.Errorf("offline: unsupported patch type %q", pt)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(patched); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return obj, nil
}

// apply runs a server-side apply. Apply and apply-force of the same
// configuration share work: when the apply without force succeeds, the
// forced one has nothing to force and gives the same result.
func (e *offlineExecutor) apply(data []byte, manager string, force bool) (*unstructured.Unstructured, error) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	key := applyKey{data: string(data), manager: manager}
	if e.applied == nil {
		e.applied = map[applyKey]applyResult{}
	}
	plain, ok := e.applied[key]
	if !ok {
		if plain.cfg, plain.err = decodeApplyConfig(data); plain.err == nil {
			plain.out, plain.err = e.unsafeApply(plain.cfg, manager, false)
		}
		e.applied[key] = plain
	}
	if !force || plain.err == nil || plain.cfg == nil {
		return plain.out, plain.err
	}
	return e.unsafeApply(plain.cfg, manager, true)
}

type applyKey struct{ data, manager string }

type applyResult struct {
	// cfg is the decoded configuration, nil when it does not decode; a
	// forced apply after a failed one reuses it (applying does not change
	// it).
	cfg *unstructured.Unstructured
	out *unstructured.Unstructured
	err error
}

// decodeApplyConfig decodes an apply configuration (JSON or YAML), with
// the server's errors.
func decodeApplyConfig(data []byte) (*unstructured.Unstructured, error) {
	js := data
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		var err error
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
		}
	}
	cfg := &unstructured.Unstructured{}
	if err := cfg.UnmarshalJSON(js); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if len(cfg.GetManagedFields()) > 0 {
		return nil, apierrors.NewBadRequest("metadata.managedFields must be nil")
	}
	return cfg, nil
}

// unsafeApply does one apply of cfg; it is called with applyMu held.
func (e *offlineExecutor) unsafeApply(cfg *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	live := e.live
	if live == nil {
		live = managedfields.NewEmpty(e.gvk)
	}
	if live != e.live || hasStatus(e.live) {
		// The main resource ignores status when a status subresource
		// exists (the server's reset fields).
		delete(cfg.Object, "status")
	}
	out, err := e.fm.Apply(live, cfg, manager, force)
	if err != nil {
		return nil, err
	}
	// The server defaults the merged object; ownership was settled before.
	applyDefaults(e.gvk, out)
	if e.live == nil {
		if msg := validate(e.gvk, out); msg != "" {
			return nil, apierrors.NewInvalid(e.gvk.GroupKind(), e.name, field.ErrorList{field.Invalid(nil, nil, msg)})
		}
		return out, nil
	}
	// The server checks the resourceVersion precondition in storage, after
	// the field manager: apply conflicts win over a stale resourceVersion.
	if rv := cfg.GetResourceVersion(); rv != "" && rv != e.live.GetResourceVersion() {
		return nil, e.conflict()
	}
	out.SetResourceVersion(e.live.GetResourceVersion())
	e.beforeUpdate(out)
	return e.finish(out)
}

// update runs the field manager over the merged object, remembering the
// answer: most methods of one prediction merge to the same object (an
// update and a merge patch of the same change), and the field manager is
// the expensive part.
func (e *offlineExecutor) update(obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range e.memo {
		if m.manager == manager && jsonEqual(m.in.Object, obj.Object) {
			return m.out, m.err
		}
	}
	out, err := e.fm.Update(e.live, obj, manager, "")
	if err == nil {
		out, err = e.finish(out)
	}
	e.memo = append(e.memo, memoEntry{in: obj, manager: manager, out: out, err: err})
	return out, err
}

type memoEntry struct {
	in      *unstructured.Unstructured
	manager string
	out     *unstructured.Unstructured
	err     error
}

func hasStatus(u *unstructured.Unstructured) bool {
	if u == nil {
		return false
	}
	_, ok := u.Object["status"]
	return ok
}

// beforeUpdate does what the registry does to every update: system
// metadata comes from the stored object, and the main resource cannot
// change status when the kind has a status subresource (assumed when the
// live object has a status).
func (e *offlineExecutor) beforeUpdate(obj *unstructured.Unstructured) {
	if obj.GetUID() == "" {
		obj.SetUID(e.live.GetUID())
	}
	if ts := e.live.GetCreationTimestamp(); !ts.IsZero() {
		obj.SetCreationTimestamp(ts)
	}
	if g, found, _ := unstructured.NestedInt64(e.live.Object, "metadata", "generation"); found {
		_ = unstructured.SetNestedField(obj.Object, g, "metadata", "generation")
	} else {
		unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
	}
	if st, ok := e.live.Object["status"]; ok {
		obj.Object["status"] = st
	}
}

// finish bumps generation the way the kind's strategy does and keeps the
// stored object when nothing changed (the server skips identical writes).
func (e *offlineExecutor) finish(out *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if msg := validate(e.gvk, out); msg != "" {
		return nil, apierrors.NewInvalid(e.gvk.GroupKind(), e.name, field.ErrorList{field.Invalid(nil, nil, msg)})
	}
	if g, found, _ := unstructured.NestedInt64(e.live.Object, "metadata", "generation"); found && bumpsGeneration(e.gvk, e.live, out) {
		_ = unstructured.SetNestedField(out.Object, g+1, "metadata", "generation")
	}
	if sameStored(e.live, out) {
		return e.live.DeepCopy(), nil
	}
	return out, nil
}

// bumpsGeneration tells whether a write from before to after bumps
// metadata.generation: Deployments on spec or annotation changes, other
// kinds that track generation on any change outside metadata and status.
func bumpsGeneration(gvk schema.GroupVersionKind, before, after *unstructured.Unstructured) bool {
	if gvk.Group == "apps" && gvk.Kind == "Deployment" {
		return !jsonEqual(before.Object["spec"], after.Object["spec"]) ||
			!jsonEqual(before.GetAnnotations(), after.GetAnnotations())
	}
	keys := map[string]bool{}
	for k := range before.Object {
		keys[k] = true
	}
	for k := range after.Object {
		keys[k] = true
	}
	for k := range keys {
		switch k {
		case "metadata", "status", "apiVersion", "kind":
			continue
		}
		if !jsonEqual(before.Object[k], after.Object[k]) {
			return true
		}
	}
	return false
}
