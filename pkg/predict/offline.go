package predict

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// Offline builds offline executors. It caches one field manager per kind,
// so predicting many objects stays cheap. It is safe for concurrent use.
type Offline struct {
	fms *writepath.ManagedFields
	// schema is the schema given (predict --schema), whose CRD says a
	// custom resource's registry facts (resource, scope, status
	// subresource); nil: none.
	schema *managedfields.SchemaTypeConverter
	// tc types objects: the schema given, else the default.
	tc managedfields.TypeConverter
	// Rules are the API server's decoding, defaulting and validation of
	// the kinds they know (serverrules.Rules, which the command hands in:
	// built-in kinds, and custom resources of the CRD given); nil: none.
	// A custom resource the rules do not know is predicted as far as the
	// write path's own checks go, and unknown beyond them. With rules, the
	// writes of a built-in kind they do not know, of a kind newer than
	// this build and of an aggregated API are unknown where the rules
	// decide them (see rulesNotRun); without, they are not judged.
	Rules writepath.Rules
}

// NewOffline returns an offline engine typing objects with tc (nil:
// managedfields.DefaultTypeConverter, the built-in schema for built-in
// kinds and ObjectMeta with deduced fields for custom resources).
func NewOffline(tc managedfields.TypeConverter) *Offline {
	sc, _ := tc.(*managedfields.SchemaTypeConverter)
	o := &Offline{fms: writepath.NewManagedFields(tc), schema: sc, tc: tc}
	if tc == nil {
		o.tc = managedfields.DefaultTypeConverter()
	}
	return o
}

// Executor returns the executor for one object: live is its current state
// with managedFields (nil when it does not exist), gvk its kind.
func (o *Offline) Executor(gvk schema.GroupVersionKind, name string, live *unstructured.Unstructured) (Executor, error) {
	if _, err := o.fms.For(gvk); err != nil {
		return nil, err
	}
	t := o.kindType(gvk, live).WithRules(o.Rules)
	e := &offlineExecutor{t: &t, name: name, live: live, tc: o.tc}
	e.fielder, _ = o.Rules.(unknownFielder)
	if o.Rules != nil && t.Validate == nil {
		e.unknown = rulesNotRun(gvk)
	}
	e.rules = rulesRun(&t, e.unknown.why)
	if !managedfields.IsBuiltin(gvk) && t.Validate == nil && e.unknown.why == "" {
		e.unknown = withoutSchema(gvk)
	}
	e.w = &writepath.Writer{FieldManager: &memoFieldManager{inner: o.fms}}
	if live != nil {
		// Patches apply to live as JSON: encoded once for all of them.
		js, err := live.MarshalJSON()
		if err != nil {
			return nil, err
		}
		e.stored = &writepath.Stored{Object: live, ResourceVersion: live.GetResourceVersion(), JSON: js}
	}
	return e, nil
}

// Namespaced reports whether the objects of kind gvk are namespaced, and
// whether the engine knows: the built-in kinds' scope is this build's
// (apitypes), a custom resource's its CRD's when the schema given is one.
// MatchOffline uses it to put a manifest without a namespace in the
// default one, as kubectl does for namespaced kinds only.
func (o *Offline) Namespaced(gvk schema.GroupVersionKind) (namespaced, known bool) {
	if ns, ok := apitypes.BuiltinNamespaced(gvk.Group, gvk.Kind); ok {
		return ns, true
	}
	if o.schema != nil {
		if cr, ok := o.schema.CustomResource(gvk); ok {
			return cr.Namespaced, true
		}
	}
	return false, false
}

// kindType is the registry rules of kind gvk: a custom resource's from its
// CRD where the schema given is one, else what offlineType tells from the
// live object. As in offlineType, the object's own namespace stands (a
// manifest without one is the live object's namespace's, as a request's
// is its URL's), so the type is not namespaced for the write path.
func (o *Offline) kindType(gvk schema.GroupVersionKind, live *unstructured.Unstructured) *writepath.Type {
	if o.schema != nil && !managedfields.IsBuiltin(gvk) {
		if cr, ok := o.schema.CustomResource(gvk); ok {
			t := writepath.CustomType(gvk, cr.Resource, false, cr.StatusSubresource)
			return &t
		}
	}
	return offlineType(gvk, live)
}

// offlineType is what the offline engine knows of a kind's registry
// rules, told from the live object where no table says them: a status
// subresource when live has a status (or does not exist yet), generation
// tracked when live has one (Deployments bump it on spec and annotation
// changes, other kinds on any change outside metadata), the built-in
// kinds' Go types for strategic merge patch (the Offline's rules add the
// defaults and validation). It does not
// know whether the kind is namespaced, so the object's own namespace
// stands. Custom resources and some built-in kinds (Leases, webhook
// configurations, ...; see writepath.AllowsUnconditionalUpdate) refuse an
// update without a resourceVersion with 422.
func offlineType(gvk schema.GroupVersionKind, live *unstructured.Unstructured) *writepath.Type {
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	t := &writepath.Type{
		GVK:                      gvk,
		Resource:                 gvr.Resource,
		AllowUnconditionalUpdate: managedfields.IsBuiltin(gvk) && writepath.AllowsUnconditionalUpdate(gvk.GroupKind()),
		StatusSubresource:        live == nil || hasStatus(live),
	}
	if scheme.Scheme.Recognizes(gvk) {
		t.New = func() runtime.Object {
			o, _ := scheme.Scheme.New(gvk)
			return o
		}
	}
	if live != nil {
		if _, found, _ := unstructured.NestedInt64(live.Object, "metadata", "generation"); found {
			t.Generation = writepath.GenerationNonMetadata
			if gvk.Group == "apps" && gvk.Kind == "Deployment" {
				t.Generation = writepath.GenerationSpecAndAnnotations
			}
		}
	}
	return t
}

// aggregatedGroups are the groups of the aggregated APIs clusters commonly
// serve (metrics-server, custom and external metrics adapters): their
// servers' rules are not the Kubernetes API server's.
var aggregatedGroups = map[string]bool{"metrics.k8s.io": true, "custom.metrics.k8s.io": true, "external.metrics.k8s.io": true}

// unknowable is what the offline engine cannot know of one object's
// writes, and why: the outcomes the API server decides with rules the
// engine does not run (see certain).
type unknowable struct {
	// why is the reason; "" when the engine knows every outcome.
	why string
	// stands reports whether the write path's answer (err, nil for a
	// success; apply for a server-side apply) is one the server gives
	// before those rules, which is known.
	stands func(err error, apply bool) bool
	// seen: an unknown outcome goes on with what the write path answered
	// without those rules (writepath.CannotKnowError.Seen).
	seen bool
}

// rulesNotRun says why the offline engine cannot judge the writes of kind
// gvk, which its rules do not know: a built-in kind whose rules it does
// not run (conflicts, apply conflicts and refused requests stay known:
// the server decides them before the kind's rules), a kind of a built-in
// group this build does not know (a newer Kubernetes: only conflicts stay
// known, since whether the kind takes an update without resourceVersion
// is its strategy's rule), or an aggregated API (nothing is known: its
// server is not the Kubernetes API server). Other kinds are custom
// resources, judged against their schema.
func rulesNotRun(gvk schema.GroupVersionKind) unknowable {
	what := gvk.Kind + " " + gvk.GroupVersion().String()
	switch {
	case aggregatedGroups[gvk.Group]:
		return unknowable{why: fmt.Sprintf("%s is served by an aggregated API server, whose rules the offline engine does not run", what), stands: knownVerdicts(), seen: true}
	case managedfields.IsBuiltin(gvk):
		return unknowable{why: fmt.Sprintf("the offline engine does not run the API server's defaulting and validation of %s", what),
			stands: knownVerdicts(Conflict, ApplyConflict, NotFound, Invalid, ServerError), seen: true}
	case scheme.Scheme.IsGroupRegistered(gvk.Group):
		return unknowable{why: fmt.Sprintf("%s is unknown to this build, whose types and rules are Kubernetes %s's: the offline engine runs none of its rules", what, writepath.KubernetesVersion),
			stands: knownVerdicts(Conflict, ApplyConflict, NotFound), seen: true}
	}
	return unknowable{}
}

// knownVerdicts stands for the refusals whose verdict is one of known.
func knownVerdicts(known ...Verdict) func(error, bool) bool {
	return func(err error, _ bool) bool {
		v, ok := refusalVerdict(err)
		return ok && slices.Contains(known, v)
	}
}

// withoutSchema is what the offline engine cannot know of a custom
// resource whose CRD was not given: a success, an apply conflict or a 500,
// which depend on its schema's pruning, defaults, validation and list
// types. What the write path decides before them stands: a stale
// resourceVersion (409; not for an apply, whose conflicts with other
// owners come first), a missing object (404), a patch type the kind does
// not take (415), a malformed request (400), a JSON patch that does not
// apply or an update without resourceVersion (422; validation, the only
// other 422, is what is not run).
func withoutSchema(gvk schema.GroupVersionKind) unknowable {
	return unknowable{
		why: fmt.Sprintf("give the CRD of %s with --schema: its pruning, defaults, validation and list types decide this write", gvk.GroupKind()),
		stands: func(err error, apply bool) bool {
			var st apierrors.APIStatus
			if err == nil || !errors.As(err, &st) {
				return false
			}
			switch st.Status().Code {
			case http.StatusConflict:
				return !apply
			case http.StatusNotFound, http.StatusUnsupportedMediaType, http.StatusBadRequest, http.StatusUnprocessableEntity:
				return true
			}
			return false
		},
	}
}

func hasStatus(u *unstructured.Unstructured) bool {
	_, ok := u.Object["status"]
	return ok
}

// offlineExecutor runs the writes to one object through the shared write
// path (pkg/writepath), in process, never storing them: every method sees
// the same live object.
type offlineExecutor struct {
	t    *writepath.Type
	w    *writepath.Writer
	name string
	live *unstructured.Unstructured
	// stored is live as the write path reads it; nil when live is.
	stored *writepath.Stored
	// unknown says which outcomes of the object's writes the engine
	// cannot know, and why (see certain).
	unknown unknowable
	// rules says which of the API server's rules run (Result.Rules).
	rules string
	// tc types the object, and fielder (nil: none) names a custom
	// resource's unknown fields: the strict check (strict.go).
	tc      managedfields.TypeConverter
	fielder unknownFielder

	// applyMu guards applied.
	applyMu sync.Mutex
	applied map[applyKey]applyResult
}

var _ Executor = (*offlineExecutor)(nil)

func (e *offlineExecutor) Engine() string { return "offline" }

// Rules implements rulesReporter.
func (e *offlineExecutor) Rules() string { return e.rules }

// rulesRun says which of the API server's rules run on the writes of kind
// t; notRun is why they do not, if they do not.
func rulesRun(t *writepath.Type, notRun string) string {
	what := t.GVK.Kind + " " + t.GVK.GroupVersion().String()
	switch {
	case notRun != "":
		return notRun
	case t.Validate == nil:
		return "no defaulting or validation of " + what
	case !managedfields.IsBuiltin(t.GVK):
		return "the validation of " + what + " against its schema (--schema)"
	}
	return "the API server's defaulting, validation and registry strategy of " + what + " (Kubernetes " + writepath.KubernetesVersion + ")"
}

func (e *offlineExecutor) Live(context.Context) (*unstructured.Unstructured, error) {
	if e.live == nil {
		return nil, apierrors.NewNotFound(e.t.GroupResource(), e.name)
	}
	// Not a copy: Predict only reads it, and copying it (managedFields
	// and all) was one of the larger allocations of a prediction.
	return e.live, nil
}

func (e *offlineExecutor) Update(_ context.Context, obj *unstructured.Unstructured, wr Write) (*unstructured.Unstructured, error) {
	if err := e.strictBody(obj, wr); err != nil {
		return nil, err
	}
	// The write path changes obj, whose parts other requests share.
	out, err := e.result(e.w.Update(e.t, e.stored, obj.DeepCopy(), writepath.Options{FieldManager: wr.Manager}))
	return e.certain(out, err, false)
}

func (e *offlineExecutor) Create(_ context.Context, obj *unstructured.Unstructured, wr Write) (*unstructured.Unstructured, error) {
	if err := e.strictBody(obj, wr); err != nil {
		return nil, err
	}
	if e.live != nil {
		return nil, apierrors.NewAlreadyExists(e.t.GroupResource(), e.name)
	}
	// The server gives a created object a uid and a creationTimestamp:
	// their values are its own, but the fields are changed.
	w := *e.w
	w.Now = time.Now
	w.NewUID = uuid.NewUUID
	out, err := w.Create(e.t, obj.DeepCopy(), writepath.Options{FieldManager: wr.Manager})
	return e.certain(out, err, false)
}

func (e *offlineExecutor) Patch(_ context.Context, pt types.PatchType, data []byte, wr Write) (*unstructured.Unstructured, error) {
	if err := e.strictPatch(pt, data, wr); err != nil {
		return nil, err
	}
	var out *unstructured.Unstructured
	var err error
	if pt == types.ApplyPatchType {
		out, err = e.apply(data, wr.Manager, wr.Force)
	} else {
		out, err = e.patch(pt, data, wr.Manager, wr.Force)
	}
	return e.certain(out, err, pt == types.ApplyPatchType)
}

func (e *offlineExecutor) patch(pt types.PatchType, data []byte, manager string, force bool) (*unstructured.Unstructured, error) {
	namespace := ""
	if e.live != nil {
		namespace = e.live.GetNamespace()
	}
	return e.result(e.w.Patch(e.t, e.stored, namespace, e.name, pt, data, writepath.Options{FieldManager: manager, Force: force}))
}

// result is what the API server answers: the stored object when the write
// changed nothing (it skips identical writes), else the written one.
func (e *offlineExecutor) result(out *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
	if err != nil {
		return nil, err
	}
	if e.live != nil && sameStored(e.live, out) {
		return e.live, nil
	}
	return out, nil
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
		plain.out, plain.err = e.patch(types.ApplyPatchType, data, manager, false)
		e.applied[key] = plain
	}
	if !force || plain.err == nil {
		return plain.out, plain.err
	}
	return e.patch(types.ApplyPatchType, data, manager, true)
}

// certain returns the write path's answer where the executor can know it
// (e.unknown.stands), and a *writepath.CannotKnowError where the answer
// depends on rules it does not run, carrying the answer when e.unknown
// says to show it.
func (e *offlineExecutor) certain(out *unstructured.Unstructured, err error, apply bool) (*unstructured.Unstructured, error) {
	var ck *writepath.CannotKnowError
	if e.unknown.why == "" || errors.As(err, &ck) || e.unknown.stands(err, apply) {
		return out, err
	}
	ck = &writepath.CannotKnowError{Reason: e.unknown.why}
	if e.unknown.seen {
		ck.Seen = &writepath.Answer{Object: out, Err: err}
	}
	return nil, ck
}

type applyKey struct{ data, manager string }

type applyResult struct {
	out *unstructured.Unstructured
	err error
}

// memoFieldManager remembers the field manager's updates of one live
// object: most methods of one prediction merge to the same object (an
// update and a merge patch of the same change), and the field manager is
// the expensive part. It returns the same object for the same update, so
// Predict analyzes it once.
type memoFieldManager struct {
	inner writepath.FieldManager

	// mu guards memo.
	mu   sync.Mutex
	memo []memoEntry
}

type memoEntry struct {
	in           *unstructured.Unstructured
	manager, sub string
	out          *unstructured.Unstructured
	err          error
}

// Update implements writepath.FieldManager; live is the same in every
// call.
func (m *memoFieldManager) Update(t *writepath.Type, sub string, live, obj *unstructured.Unstructured, manager string) (*unstructured.Unstructured, error) {
	obj = withoutLiveManagedFields(live, obj)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.memo {
		if e.manager == manager && e.sub == sub && jsonEqual(e.in.Object, obj.Object) {
			return e.out, e.err
		}
	}
	out, err := m.inner.Update(t, sub, live, obj, manager)
	m.memo = append(m.memo, memoEntry{in: obj, manager: manager, sub: sub, out: out, err: err})
	return out, err
}

// Apply implements writepath.FieldManager.
func (m *memoFieldManager) Apply(t *writepath.Type, live, applied *unstructured.Unstructured, manager string, force bool) (*unstructured.Unstructured, error) {
	return m.inner.Apply(t, live, applied, manager, force)
}

// withoutLiveManagedFields returns obj without its managedFields when they
// are live's and the field manager reads live's the same from a write
// that carries a copy of them or none at all: a list of entries, not
// empty and not the single empty entry that asks the server to reset
// them. A patch leaves live's managedFields in the patched object; without
// them it merges to the same object as an update of the same change, and
// the two share one field-manager run. Otherwise obj is returned as it is.
func withoutLiveManagedFields(live, obj *unstructured.Unstructured) *unstructured.Unstructured {
	md, _ := obj.Object["metadata"].(map[string]any)
	mf, ok := md["managedFields"]
	if !ok || live == nil {
		return obj
	}
	lmd, _ := live.Object["metadata"].(map[string]any)
	items, _ := lmd["managedFields"].([]any)
	switch len(items) {
	case 0:
		return obj
	case 1:
		// A named manager makes the entry non-empty.
		first, _ := items[0].(map[string]any)
		if name, _ := first["manager"].(string); name == "" {
			return obj
		}
	}
	if !jsonEqual(mf, lmd["managedFields"]) {
		return obj
	}
	return &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(obj.Object, "managedFields")}
}
