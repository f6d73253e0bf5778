package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/mvcc"
)

// OptimisticLockErrorMsg is the API server's text for an update whose
// resourceVersion is not the stored one (registry/generic/registry/store.go).
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// FieldManager maintains metadata.managedFields the way the API server's
// field manager does. The simulator passes an adapter over the in-process
// field manager of pkg/managedfields; a nil FieldManager leaves
// managedFields alone (and makes server-side apply unavailable).
type FieldManager interface {
	// Update records a non-apply write of obj over live by manager. live is
	// nil on create.
	Update(t *TypeInfo, subresource string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error)
	// Apply merges the applied configuration into live (nil when the object
	// does not exist yet) as server-side apply does, returning the 409 with
	// FieldManagerConflict causes on conflicts unless force is set.
	Apply(t *TypeInfo, subresource string, live, applied *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error)
}

// Config configures a Server.
type Config struct {
	// KV is the revision store: the embedded one or a real etcd.
	KV mvcc.WatchKV
	// Registry knows the kinds; nil means the built-in kinds only.
	Registry *Registry
	// FieldManager maintains managedFields; nil leaves them alone.
	FieldManager FieldManager
	// Now is the clock of creationTimestamp and managedFields times; the
	// simulator injects virtual time. nil means a fixed epoch.
	Now func() time.Time
	// Exclusive says the server is the only writer of its keys, so its
	// cache of the latest objects is authoritative and reads of the latest
	// state skip the store. Never set it over a shared (real) etcd.
	Exclusive bool
	// KeyPrefix is prepended to every registry key, to keep a simulation
	// apart from anything else in a real etcd ("" for the embedded store).
	KeyPrefix string
}

// Server is the API server's write and read path over a revision store:
// registry keys, resourceVersion = mod_revision, optimistic concurrency,
// no-op detection, generation, the status subresource, the four patch
// types, list and watch. It is not safe for concurrent use: the simulator
// drives it from one event loop.
type Server struct {
	kv   mvcc.WatchKV
	reg  *Registry
	fm   FieldManager
	now  func() time.Time
	uids uint64
	// exclusive: see Config.Exclusive.
	exclusive bool
	prefix    string
	// lastNoOp is whether the last successful write was skipped.
	lastNoOp bool

	// cache holds the decoded latest state of every key written or read
	// through this server, so the hot path does not decode JSON; it is
	// checked against the store's mod_revision on every read.
	cache map[string]*stored
}

type stored struct {
	modRev int64
	raw    []byte // the stored bytes (no resourceVersion)
	obj    map[string]any
}

// New returns a server over cfg.KV.
func New(cfg Config) (*Server, error) {
	if cfg.KV == nil {
		return nil, errors.New("apiserver: Config.KV is required")
	}
	reg := cfg.Registry
	if reg == nil {
		var err error
		if reg, err = NewRegistry(); err != nil {
			return nil, err
		}
	}
	now := cfg.Now
	if now == nil {
		epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now = func() time.Time { return epoch }
	}
	return &Server{kv: cfg.KV, reg: reg, fm: cfg.FieldManager, now: now, exclusive: cfg.Exclusive, prefix: cfg.KeyPrefix, cache: map[string]*stored{}}, nil
}

// LastWriteWasNoOp reports whether the last successful write changed
// nothing and was skipped without a new revision.
func (s *Server) LastWriteWasNoOp() bool { return s.lastNoOp }

// key returns the store key of an object.
func (s *Server) key(t *TypeInfo, namespace, name string) string {
	return s.prefix + t.Key(namespace, name)
}

// Registry returns the server's kinds.
func (s *Server) Registry() *Registry { return s.reg }

// KV returns the store under the server.
func (s *Server) KV() mvcc.WatchKV { return s.kv }

// WriteOptions are the options of a write request.
type WriteOptions struct {
	// FieldManager names the writer in managedFields. The real default is
	// the user agent up to the first "/"; the simulator always sets it.
	FieldManager string
	// Subresource is "" or "status".
	Subresource string
}

func (s *Server) typeOf(obj *unstructured.Unstructured) (*TypeInfo, error) {
	t, err := s.reg.Lookup(obj.GroupVersionKind())
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return t, nil
}

// Type returns the TypeInfo of gvk as a BadRequest error when unknown.
func (s *Server) Type(gvk schema.GroupVersionKind) (*TypeInfo, error) {
	t, err := s.reg.Lookup(gvk)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return t, nil
}

// current returns the latest stored state of key, or nil.
func (s *Server) current(ctx context.Context, key string) (*stored, error) {
	if s.exclusive {
		if c, ok := s.cache[key]; ok {
			return c, nil
		}
	}
	res, err := s.kv.Range(ctx, key, mvcc.RangeOptions{})
	if err != nil {
		return nil, err
	}
	if len(res.KVs) == 0 {
		delete(s.cache, key)
		return nil, nil
	}
	kv := res.KVs[0]
	if c, ok := s.cache[key]; ok && c.modRev == kv.ModRevision {
		return c, nil
	}
	obj, err := decode(kv.Value)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("decoding %s: %w", key, err))
	}
	c := &stored{modRev: kv.ModRevision, raw: kv.Value, obj: obj}
	s.cache[key] = c
	return c, nil
}

func decode(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// withRV returns a deep copy of obj carrying resourceVersion rev.
func withRV(obj map[string]any, rev int64) *unstructured.Unstructured {
	m := copyMap(obj)
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		m["metadata"] = md
	}
	md["resourceVersion"] = strconv.FormatInt(rev, 10)
	return &unstructured.Unstructured{Object: m}
}

// copyMap deep-copies a JSON object (runtime.DeepCopyJSON without its
// checks: the server only stores values it decoded or built).
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return copyMap(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = copyValue(it)
		}
		return out
	default:
		// Strings, numbers, bools and nil are immutable.
		return v
	}
}

// shallowWithRV returns obj with resourceVersion rev, copying only the top
// level and metadata: the result of a write shares the rest with the
// server's cache and must be deep-copied before it is modified.
func shallowWithRV(obj map[string]any, rev int64) *unstructured.Unstructured {
	top := make(map[string]any, len(obj))
	for k, v := range obj {
		top[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(md)+1)
		for k, v := range md {
			m[k] = v
		}
		top["metadata"] = m
	}
	u := &unstructured.Unstructured{Object: top}
	u.SetResourceVersion(strconv.FormatInt(rev, 10))
	return u
}

func runtimeDeepCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

// Get returns the latest state of one object (resourceVersion "" semantics:
// a consistent read).
func (s *Server) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return s.get(ctx, gvk, namespace, name, withRV)
}

// GetShared is Get for a caller that changes the object only copy-on-write:
// the top level and metadata are its own, every other map and list is
// shared with the server's cache and must be copied before it is changed.
// The simulator's writers use it to skip a deep copy per read.
func (s *Server) GetShared(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	return s.get(ctx, gvk, namespace, name, shallowWithRV)
}

// get reads the latest state of one object and hands it out through
// present, which decides how much of the cached object the caller gets.
func (s *Server) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, present func(map[string]any, int64) *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, err
	}
	c, err := s.current(ctx, s.key(t, namespace, name))
	if err != nil {
		return nil, storageError(t, name, err)
	}
	if c == nil {
		return nil, apierrors.NewNotFound(t.GroupResource(), name)
	}
	return present(c.obj, c.modRev), nil
}

// GetAt returns one object as it was at revision rev (resourceVersion=rev
// with resourceVersionMatch=Exact): 410 Gone when rev was compacted.
func (s *Server) GetAt(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, rev int64) (*unstructured.Unstructured, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, err
	}
	res, err := s.kv.Range(ctx, s.key(t, namespace, name), mvcc.RangeOptions{Rev: rev})
	if err != nil {
		return nil, storageError(t, name, err)
	}
	if len(res.KVs) == 0 {
		return nil, apierrors.NewNotFound(t.GroupResource(), name)
	}
	obj, err := decode(res.KVs[0].Value)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return withRV(obj, res.KVs[0].ModRevision), nil
}

// storageError turns store errors into the API server's status errors.
func storageError(t *TypeInfo, name string, err error) error {
	switch {
	case errors.Is(err, mvcc.ErrCompacted):
		return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	case errors.Is(err, mvcc.ErrFutureRev):
		return apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %s", err), 1)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return err
	}
	return apierrors.NewInternalError(err)
}

// Create stores a new object. The name must be set (no generateName) and
// resourceVersion must be empty.
func (s *Server) Create(ctx context.Context, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	t, err := s.typeOf(obj)
	if err != nil {
		return nil, err
	}
	if obj.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	if err := s.checkMeta(t, obj); err != nil {
		return nil, err
	}
	key := s.key(t, obj.GetNamespace(), obj.GetName())
	obj = obj.DeepCopy()
	s.prepareCreate(t, obj)
	if s.fm != nil {
		if obj, err = s.fm.Update(t, opts.Subresource, nil, obj, opts.FieldManager); err != nil {
			return nil, err
		}
		setManagedTimes(nil, obj, s.now())
	}
	return s.commit(ctx, t, key, nil, obj)
}

func (s *Server) checkMeta(t *TypeInfo, obj *unstructured.Unstructured) error {
	if obj.GetName() == "" {
		return apierrors.NewInvalid(t.GVK.GroupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	}
	if t.Namespaced && obj.GetNamespace() == "" {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

func (s *Server) prepareCreate(t *TypeInfo, obj *unstructured.Unstructured) {
	s.uids++
	obj.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", s.uids)))
	obj.SetCreationTimestamp(metav1.NewTime(s.now()))
	obj.SetResourceVersion("")
	if t.Generation != GenerationNone {
		obj.SetGeneration(1)
	} else {
		unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
	}
	if t.StatusSubresource {
		// PrepareForCreate resets status for types with a status
		// subresource: only /status writes set it.
		unstructured.RemoveNestedField(obj.Object, "status")
	}
}

// commit writes obj under key unless it equals the stored bytes, guarded by
// the stored mod_revision (OptimisticPut). cur is nil for a create.
func (s *Server) commit(ctx context.Context, t *TypeInfo, key string, cur *stored, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	m, rev, err := s.commitRV(ctx, t, key, cur, obj)
	if err != nil {
		return nil, err
	}
	return shallowWithRV(m, rev), nil
}

// commitRV is commit without building the returned object.
func (s *Server) commitRV(ctx context.Context, t *TypeInfo, key string, cur *stored, obj *unstructured.Unstructured) (map[string]any, int64, error) {
	obj.SetResourceVersion("")
	raw, err := encode(obj.Object)
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	var guard int64
	if cur != nil {
		if bytes.Equal(raw, cur.raw) {
			// A write that changes nothing is skipped: the RV stays.
			s.lastNoOp = true
			return cur.obj, cur.modRev, nil
		}
		guard = cur.modRev
	}
	var rev int64
	if s.exclusive && cur != nil {
		// The cache is authoritative, so the stored mod_revision is guard:
		// the compare of OptimisticPut holds, and a plain put (one
		// revision, like the txn) is enough.
		res, err := s.kv.Put(ctx, key, raw, mvcc.PutOptions{})
		if err != nil {
			return nil, 0, storageError(t, obj.GetName(), err)
		}
		rev = res.Header.Revision
	} else {
		res, err := s.kv.Txn(ctx, mvcc.Txn{
			Compare: []mvcc.Compare{mvcc.ModRevision(key, mvcc.Equal, guard)},
			Success: []mvcc.Op{mvcc.OpPutKV(key, raw, mvcc.PutOptions{})},
		})
		if err != nil {
			return nil, 0, storageError(t, obj.GetName(), err)
		}
		if !res.Succeeded {
			delete(s.cache, key)
			if cur == nil {
				return nil, 0, apierrors.NewAlreadyExists(t.GroupResource(), obj.GetName())
			}
			return nil, 0, apierrors.NewConflict(t.GroupResource(), obj.GetName(), errors.New(OptimisticLockErrorMsg))
		}
		rev = res.Header.Revision
	}
	s.cache[key] = &stored{modRev: rev, raw: raw, obj: obj.Object}
	s.lastNoOp = false
	return obj.Object, rev, nil
}

// Update replaces an object (PUT). With a resourceVersion it is a
// compare-and-swap that fails with 409 when the object moved on; without
// one it overwrites if the type allows unconditional updates, else 422.
// Update takes ownership of obj: the caller must not use it afterwards
// (the simulator's hot path saves a deep copy this way).
func (s *Server) Update(ctx context.Context, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	m, rev, err := s.update(ctx, obj, opts)
	if err != nil {
		return nil, err
	}
	return shallowWithRV(m, rev), nil
}

// UpdateRV is Update returning only the resourceVersion of the result: the
// simulator's hot path, which does not look at the object.
func (s *Server) UpdateRV(ctx context.Context, obj *unstructured.Unstructured, opts WriteOptions) (int64, error) {
	_, rev, err := s.update(ctx, obj, opts)
	return rev, err
}

func (s *Server) update(ctx context.Context, obj *unstructured.Unstructured, opts WriteOptions) (map[string]any, int64, error) {
	t, err := s.typeOf(obj)
	if err != nil {
		return nil, 0, err
	}
	if err := s.checkSubresource(t, opts.Subresource); err != nil {
		return nil, 0, err
	}
	if err := s.checkMeta(t, obj); err != nil {
		return nil, 0, err
	}
	key := s.key(t, obj.GetNamespace(), obj.GetName())
	cur, err := s.current(ctx, key)
	if err != nil {
		return nil, 0, storageError(t, obj.GetName(), err)
	}
	if cur == nil {
		return nil, 0, apierrors.NewNotFound(t.GroupResource(), obj.GetName())
	}
	if err := s.checkRV(t, obj, cur); err != nil {
		return nil, 0, err
	}
	return s.updateFromRV(ctx, t, key, cur, obj, opts)
}

func (s *Server) checkSubresource(t *TypeInfo, sub string) error {
	switch sub {
	case "":
		return nil
	case "status":
		if t.StatusSubresource {
			return nil
		}
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: t.GVK.Group, Resource: t.Resource + "/" + sub}, "")
}

// checkRV is the precondition of store.go Update.
func (s *Server) checkRV(t *TypeInfo, obj *unstructured.Unstructured, cur *stored) error {
	rvs := obj.GetResourceVersion()
	if rvs == "" {
		if !t.AllowUnconditionalUpdate {
			qualifiedKind := schema.GroupKind{Group: t.GVK.Group, Kind: t.Resource}
			return apierrors.NewInvalid(qualifiedKind, obj.GetName(), field.ErrorList{field.Invalid(field.NewPath("metadata").Child("resourceVersion"), int64(0), "must be specified for an update")})
		}
		return nil
	}
	rv, err := strconv.ParseInt(rvs, 10, 64)
	if err != nil || rv <= 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", rvs))
	}
	if rv != cur.modRev {
		return apierrors.NewConflict(t.GroupResource(), obj.GetName(), errors.New(OptimisticLockErrorMsg))
	}
	return nil
}

// updateFrom applies the strategy rules to obj over cur and commits it.
func (s *Server) updateFrom(ctx context.Context, t *TypeInfo, key string, cur *stored, obj *unstructured.Unstructured, opts WriteOptions) (*unstructured.Unstructured, error) {
	m, rev, err := s.updateFromRV(ctx, t, key, cur, obj, opts)
	if err != nil {
		return nil, err
	}
	return shallowWithRV(m, rev), nil
}

func (s *Server) updateFromRV(ctx context.Context, t *TypeInfo, key string, cur *stored, obj *unstructured.Unstructured, opts WriteOptions) (map[string]any, int64, error) {
	old := &unstructured.Unstructured{Object: cur.obj}
	s.prepareUpdate(t, old, obj, opts.Subresource)
	if s.fm != nil {
		live := withRV(cur.obj, cur.modRev)
		var err error
		if obj, err = s.fm.Update(t, opts.Subresource, live, obj, opts.FieldManager); err != nil {
			return nil, 0, err
		}
		setManagedTimes(old, obj, s.now())
	}
	return s.commitRV(ctx, t, key, cur, obj)
}

// prepareUpdate is the registry's PrepareForUpdate plus BeforeUpdate:
// immutable metadata, the status subresource split and generation.
func (s *Server) prepareUpdate(t *TypeInfo, old, obj *unstructured.Unstructured, sub string) {
	// uid and creationTimestamp are immutable: copy the stored values.
	om, _ := old.Object["metadata"].(map[string]any)
	nm, _ := obj.Object["metadata"].(map[string]any)
	if nm == nil {
		nm = map[string]any{}
		obj.Object["metadata"] = nm
	}
	for _, k := range []string{"uid", "creationTimestamp"} {
		if v, ok := om[k]; ok {
			nm[k] = v
		} else {
			delete(nm, k)
		}
	}
	if sub == "status" {
		// The status strategy takes only .status from the request.
		st, hasStatus := obj.Object["status"]
		fresh := runtimeDeepCopy(old.Object)
		if hasStatus {
			fresh["status"] = st
		} else {
			delete(fresh, "status")
		}
		if mf, ok := obj.Object["metadata"].(map[string]any)["managedFields"]; ok {
			fresh["metadata"].(map[string]any)["managedFields"] = mf
		}
		obj.Object = fresh
		return
	}
	if t.StatusSubresource {
		if st, ok := old.Object["status"]; ok {
			obj.Object["status"] = runtime2(st)
		} else {
			delete(obj.Object, "status")
		}
	}
	gen := old.GetGeneration()
	if t.Generation == GenerationNone {
		unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
		return
	}
	bump := false
	switch t.Generation {
	case GenerationSpec:
		bump = !reflect.DeepEqual(old.Object["spec"], obj.Object["spec"])
	case GenerationSpecAndAnnotations:
		bump = !reflect.DeepEqual(old.Object["spec"], obj.Object["spec"]) || !reflect.DeepEqual(old.GetAnnotations(), obj.GetAnnotations())
	case GenerationNonMetadata:
		for k, v := range obj.Object {
			if k == "metadata" || k == "apiVersion" || k == "kind" || (k == "status" && t.StatusSubresource) {
				continue
			}
			if !reflect.DeepEqual(old.Object[k], v) {
				bump = true
			}
		}
		for k := range old.Object {
			if _, ok := obj.Object[k]; !ok && k != "metadata" && !(k == "status" && t.StatusSubresource) {
				bump = true
			}
		}
	}
	if bump {
		gen++
	}
	obj.SetGeneration(gen)
}

func runtime2(v any) any {
	return runtimeDeepCopy(map[string]any{"v": v})["v"]
}

// Patch changes an object with one of the four patch types. Patches are
// applied to the latest state on the server, so they never conflict on an
// RV race unless the patch itself carries metadata.resourceVersion.
// An apply patch on a missing object creates it.
func (s *Server) Patch(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, pt types.PatchType, data []byte, opts PatchOptions) (*unstructured.Unstructured, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, err
	}
	if err := s.checkSubresource(t, opts.Subresource); err != nil {
		return nil, err
	}
	key := s.key(t, namespace, name)
	cur, err := s.current(ctx, key)
	if err != nil {
		return nil, storageError(t, name, err)
	}
	if pt == types.ApplyPatchType || pt == types.ApplyYAMLPatchType {
		return s.apply(ctx, t, key, cur, namespace, name, data, opts)
	}
	if cur == nil {
		return nil, apierrors.NewNotFound(t.GroupResource(), name)
	}
	live := withRV(cur.obj, cur.modRev)
	liveJS, err := json.Marshal(live.Object)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var patched []byte
	switch pt {
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(data)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if patched, err = p.Apply(liveJS); err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
	case types.MergePatchType:
		if patched, err = jsonpatch.MergePatch(liveJS, data); err != nil {
			if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			return nil, apierrors.NewBadRequest(err.Error())
		}
	case types.StrategicMergePatchType:
		if t.New == nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnsupportedMediaType, "", schema.GroupResource{}, "",
				"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", 0, false)
		}
		if patched, err = strategicpatch.StrategicMergePatch(liveJS, data, t.New()); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unsupported patch type %q", pt))
	}
	m, err := decode(patched)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	obj := &unstructured.Unstructured{Object: m}
	if obj.GetName() != name || obj.GetNamespace() != namespace {
		return nil, apierrors.NewBadRequest("the name and namespace of the object may not change in a patch")
	}
	// A patch that sets metadata.resourceVersion is a precondition.
	if err := s.checkRV(t, obj, cur); err != nil {
		return nil, err
	}
	return s.updateFrom(ctx, t, key, cur, obj, opts.WriteOptions)
}

// PatchOptions are the options of a patch request.
type PatchOptions struct {
	WriteOptions
	// Force takes conflicting fields in server-side apply.
	Force bool
}

func (s *Server) apply(ctx context.Context, t *TypeInfo, key string, cur *stored, namespace, name string, data []byte, opts PatchOptions) (*unstructured.Unstructured, error) {
	if s.fm == nil {
		return nil, apierrors.NewBadRequest("server-side apply needs the field manager, which this simulation does not run")
	}
	if opts.FieldManager == "" {
		return nil, apierrors.NewBadRequest("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch")
	}
	m, err := decodeApply(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	applied := &unstructured.Unstructured{Object: m}
	if applied.GetName() != name || (t.Namespaced && applied.GetNamespace() != "" && applied.GetNamespace() != namespace) {
		return nil, apierrors.NewBadRequest("the name of the object in the apply patch does not match the name on the URL")
	}
	if cur == nil {
		// Apply creates: the field manager runs over an empty live object.
		empty := &unstructured.Unstructured{Object: map[string]any{}}
		empty.SetGroupVersionKind(t.GVK)
		empty.SetName(name)
		if t.Namespaced {
			empty.SetNamespace(namespace)
		}
		obj, err := s.fm.Apply(t, opts.Subresource, empty, applied, opts.FieldManager, opts.Force)
		if err != nil {
			return nil, err
		}
		obj.SetNamespace(namespace)
		s.prepareCreate(t, obj)
		setManagedTimes(nil, obj, s.now())
		return s.commit(ctx, t, key, nil, obj)
	}
	if rv := applied.GetResourceVersion(); rv != "" {
		if err := s.checkRV(t, applied, cur); err != nil {
			return nil, err
		}
	}
	live := withRV(cur.obj, cur.modRev)
	obj, err := s.fm.Apply(t, opts.Subresource, live, applied, opts.FieldManager, opts.Force)
	if err != nil {
		return nil, err
	}
	old := &unstructured.Unstructured{Object: cur.obj}
	s.prepareUpdate(t, old, obj, opts.Subresource)
	setManagedTimes(old, obj, s.now())
	return s.commit(ctx, t, key, cur, obj)
}

func decodeApply(data []byte) (map[string]any, error) {
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err == nil {
		return m, nil
	}
	j, err := yamlToJSON(data)
	if err != nil {
		return nil, err
	}
	return decode(j)
}

// Preconditions guard a delete.
type Preconditions struct {
	ResourceVersion string
	UID             string
}

// Delete removes an object (no finalizers, no graceful deletion): the store
// deletes the key in one revision; the returned object carries the
// deletion revision as its resourceVersion, as the API server's does.
func (s *Server) Delete(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, pre Preconditions) (*unstructured.Unstructured, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, err
	}
	key := s.key(t, namespace, name)
	cur, err := s.current(ctx, key)
	if err != nil {
		return nil, storageError(t, name, err)
	}
	if cur == nil {
		return nil, apierrors.NewNotFound(t.GroupResource(), name)
	}
	live := &unstructured.Unstructured{Object: cur.obj}
	if pre.UID != "" && string(live.GetUID()) != pre.UID {
		return nil, apierrors.NewConflict(t.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", pre.UID, live.GetUID()))
	}
	if pre.ResourceVersion != "" && pre.ResourceVersion != strconv.FormatInt(cur.modRev, 10) {
		return nil, apierrors.NewConflict(schema.GroupResource{Group: t.GVK.Group, Resource: t.GVK.Kind}, name,
			fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%d). The object might have been modified", pre.ResourceVersion, cur.modRev))
	}
	res, err := s.kv.Txn(ctx, mvcc.Txn{
		Compare: []mvcc.Compare{mvcc.ModRevision(key, mvcc.Equal, cur.modRev)},
		Success: []mvcc.Op{mvcc.OpDel(key, mvcc.DeleteOptions{})},
	})
	if err != nil {
		return nil, storageError(t, name, err)
	}
	delete(s.cache, key)
	if !res.Succeeded {
		return nil, apierrors.NewConflict(t.GroupResource(), name, errors.New(OptimisticLockErrorMsg))
	}
	return withRV(cur.obj, res.Header.Revision), nil
}

// ListOptions select a list.
type ListOptions struct {
	// ResourceVersion: "" is a consistent read of the latest state; "0"
	// is served from the (here always fresh) watch cache; N with Exact reads
	// at N and fails with 410 when N was compacted; N with NotOlderThan
	// (the default for N) serves the latest state.
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Limit pages the list; Continue resumes it (the key to start after).
	Limit    int64
	Continue string
}

// List returns the objects of gvk in namespace ("" = all namespaces) as an
// UnstructuredList whose resourceVersion is the store revision it read at.
func (s *Server) List(ctx context.Context, gvk schema.GroupVersionKind, namespace string, opts ListOptions) (*unstructured.UnstructuredList, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, err
	}
	var rev int64
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		n, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil || n <= 0 {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", opts.ResourceVersion))
		}
		if opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact {
			rev = n
		} else {
			cur, _, err := s.kv.Rev(ctx)
			if err != nil {
				return nil, storageError(t, "", err)
			}
			if n > cur {
				return nil, apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", n, cur), 1)
			}
		}
	}
	prefix := s.prefix + t.ListPrefix(namespace)
	start := prefix
	if opts.Continue != "" {
		// The continue token is "<revision>/<last key>": the next page is
		// read at the first page's revision, as the API server does.
		i := strings.IndexByte(opts.Continue, '/')
		cr, err := strconv.ParseInt(opts.Continue[:max(i, 0)], 10, 64)
		if i < 0 || err != nil || !strings.HasPrefix(opts.Continue[i+1:], prefix) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token %q", opts.Continue))
		}
		start, rev = opts.Continue[i+1:]+"\x00", cr
	}
	res, err := s.kv.Range(ctx, start, mvcc.RangeOptions{End: mvcc.PrefixEnd(prefix), Rev: rev, Limit: opts.Limit})
	if err != nil {
		return nil, storageError(t, "", err)
	}
	listRev := res.Header.Revision
	if rev > 0 {
		listRev = rev
	}
	out := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": t.GVK.GroupVersion().String(), "kind": t.GVK.Kind + "List"}}
	out.SetResourceVersion(strconv.FormatInt(listRev, 10))
	for _, kv := range res.KVs {
		m, err := decode(kv.Value)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out.Items = append(out.Items, *withRV(m, kv.ModRevision))
	}
	if res.More && len(res.KVs) > 0 {
		out.SetContinue(strconv.FormatInt(listRev, 10) + "/" + res.KVs[len(res.KVs)-1].Key)
	}
	return out, nil
}
