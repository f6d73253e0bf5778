package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// FieldManager maintains managedFields (writepath.FieldManager).
type FieldManager = writepath.FieldManager

// NewManagedFields returns the in-process field manager of the API server,
// typing built-in kinds with their schema and deducing the others.
func NewManagedFields() *writepath.ManagedFields { return writepath.NewManagedFields(nil) }

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

// Server is the API server's storage over a revision store: registry
// keys, resourceVersion = mod_revision, the compare-and-swap of every
// write, no-op detection, list and watch. What a write stores comes from
// the shared write path (pkg/writepath). It is not safe for concurrent
// use: the simulator drives it from one event loop.
type Server struct {
	kv  mvcc.WatchKV
	reg *Registry
	// w is the write path: the registry's rules, patches and the field
	// manager.
	w    *writepath.Writer
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
	// ws is obj as the write path reads it (ws.Object is &u), made on
	// first use: every write of the simulator's hot path reads it.
	ws writepath.Stored
	u  unstructured.Unstructured
}

// New returns a server over cfg.KV.
func New(cfg Config) (*Server, error) {
	if cfg.KV == nil {
		return nil, errors.New("apiserver: Config.KV is required")
	}
	reg := cfg.Registry
	if reg == nil {
		var err error
		if reg, err = NewRegistry(nil); err != nil {
			return nil, err
		}
	}
	now := cfg.Now
	if now == nil {
		epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		now = func() time.Time { return epoch }
	}
	s := &Server{kv: cfg.KV, reg: reg, exclusive: cfg.Exclusive, prefix: cfg.KeyPrefix, cache: map[string]*stored{}}
	s.w = &writepath.Writer{FieldManager: cfg.FieldManager, Now: now, NewUID: s.newUID}
	return s, nil
}

// newUID returns the uid of the next created object: a counter, so runs
// are reproducible.
func (s *Server) newUID() types.UID {
	s.uids++
	return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012x", s.uids))
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
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	u.SetResourceVersion(strconv.FormatInt(rev, 10))
	return u
}

// shallowWithRV returns obj with resourceVersion rev, copying only the top
// level and metadata: the result of a write shares the rest with the
// server's cache and must be deep-copied before it is modified. It is a
// deliberate shallow copy: the simulator's writers change what they read
// copy-on-write, and a deep copy per request was a large part of a
// simulated write's cost.
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
	t, _, c, err := s.lookup(ctx, gvk, namespace, name)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, apierrors.NewNotFound(t.GroupResource(), name)
	}
	return present(c.obj, c.modRev), nil
}

// lookup finds gvk's type and the latest state of one object of it, nil
// when there is none, with its key.
func (s *Server) lookup(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*TypeInfo, string, *stored, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, "", nil, err
	}
	key := s.key(t, namespace, name)
	c, err := s.current(ctx, key)
	if err != nil {
		return nil, "", nil, storageError(t, name, err)
	}
	return t, key, c, nil
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
	key := s.key(t, obj.GetNamespace(), obj.GetName())
	if obj, err = s.w.Create(&t.Type, obj.DeepCopy(), writeOptions(opts)); err != nil {
		return nil, err
	}
	return s.commit(ctx, t, key, nil, obj)
}

func writeOptions(o WriteOptions) writepath.Options {
	return writepath.Options{FieldManager: o.FieldManager, Subresource: o.Subresource}
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
	rev, err := s.put(ctx, t, key, cur, guard, raw, obj.GetName())
	if err != nil {
		return nil, 0, err
	}
	s.cache[key] = &stored{modRev: rev, raw: raw, obj: obj.Object}
	s.lastNoOp = false
	return obj.Object, rev, nil
}

// put stores raw under key if its mod_revision is still guard (0: the key
// does not exist) and returns the new revision.
func (s *Server) put(ctx context.Context, t *TypeInfo, key string, cur *stored, guard int64, raw []byte, name string) (int64, error) {
	if s.exclusive && cur != nil {
		// The cache is authoritative, so the stored mod_revision is guard:
		// the compare of OptimisticPut holds, and a plain put (one
		// revision, like the txn) is enough.
		res, err := s.kv.Put(ctx, key, raw, mvcc.PutOptions{})
		if err != nil {
			return 0, storageError(t, name, err)
		}
		return res.Header.Revision, nil
	}
	res, err := s.kv.Txn(ctx, mvcc.Txn{
		Compare: []mvcc.Compare{mvcc.ModRevision(key, mvcc.Equal, guard)},
		Success: []mvcc.Op{mvcc.OpPutKV(key, raw, mvcc.PutOptions{})},
	})
	if err != nil {
		return 0, storageError(t, name, err)
	}
	if !res.Succeeded {
		delete(s.cache, key)
		if cur == nil {
			return 0, apierrors.NewAlreadyExists(t.GroupResource(), name)
		}
		return 0, writepath.Conflict(&t.Type, name)
	}
	return res.Header.Revision, nil
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
	key := s.key(t, obj.GetNamespace(), obj.GetName())
	cur, err := s.current(ctx, key)
	if err != nil {
		return nil, 0, storageError(t, obj.GetName(), err)
	}
	if obj, err = s.w.Update(&t.Type, cur.writeState(), obj, writeOptions(opts)); err != nil {
		return nil, 0, err
	}
	return s.commitRV(ctx, t, key, cur, obj)
}

// writeState hands the stored state to the write path; nil when there is
// none.
func (c *stored) writeState() *writepath.Stored {
	if c == nil {
		return nil
	}
	if c.ws.Object == nil {
		c.u.Object = c.obj
		c.ws = writepath.Stored{Object: &c.u, ResourceVersion: strconv.FormatInt(c.modRev, 10)}
	}
	return &c.ws
}

// Patch changes an object with one of the four patch types. Patches are
// applied to the latest state on the server, so they never conflict on an
// RV race unless the patch itself carries metadata.resourceVersion.
// An apply patch on a missing object creates it.
func (s *Server) Patch(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, pt types.PatchType, data []byte, opts PatchOptions) (*unstructured.Unstructured, error) {
	t, key, cur, err := s.lookup(ctx, gvk, namespace, name)
	if err != nil {
		return nil, err
	}
	wo := writeOptions(opts.WriteOptions)
	wo.Force = opts.Force
	obj, err := s.w.Patch(&t.Type, cur.writeState(), namespace, name, pt, data, wo)
	if err != nil {
		return nil, err
	}
	return s.commit(ctx, t, key, cur, obj)
}

// PatchOptions are the options of a patch request.
type PatchOptions struct {
	WriteOptions
	// Force takes conflicting fields in server-side apply.
	Force bool
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
	t, key, cur, err := s.lookup(ctx, gvk, namespace, name)
	if err != nil {
		return nil, err
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
		return nil, writepath.Conflict(&t.Type, name)
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
