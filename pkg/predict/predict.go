package predict

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// Executor sends (or replays) the writes of one object. Each call is
// independent: nothing is ever persisted, so every method sees the same
// live object.
type Executor interface {
	// Engine names the executor: "server" or "offline".
	Engine() string
	// Live returns the current object, or a NotFound API error. The
	// object may be the executor's own: callers must not modify it.
	Live(ctx context.Context) (*unstructured.Unstructured, error)
	// Update is a PUT of obj. obj shares parts with other requests: an
	// executor must not modify it.
	Update(ctx context.Context, obj *unstructured.Unstructured, w Write) (*unstructured.Unstructured, error)
	// Patch is a PATCH of the given type.
	Patch(ctx context.Context, pt types.PatchType, data []byte, w Write) (*unstructured.Unstructured, error)
	// Create is a POST of obj (kubectl apply's create). obj is the
	// caller's: an executor must not modify it.
	Create(ctx context.Context, obj *unstructured.Unstructured, w Write) (*unstructured.Unstructured, error)
}

// Write is what a write request says besides its body: its query
// parameters.
type Write struct {
	// Manager is the fieldManager.
	Manager string
	// Force only matters for apply.
	Force bool
	// FieldValidation is the fieldValidation directive: "" leaves the
	// server's default (Warn: unknown fields are dropped, with a warning);
	// kubectl's apply, replace and edit send Strict (their --validate
	// default), which refuses them.
	FieldValidation string
}

// rulesReporter is implemented by an executor that may not run every
// rule the API server runs on its object's writes (the offline engine):
// Rules says which of them run (Result.Rules). A write whose outcome
// depends on rules that do not run answers a *writepath.CannotKnowError,
// which Predict reports as unknown.
type rulesReporter interface {
	Rules() string
}

// PatchType is the kind of a given patch.
type PatchType string

// The --type values.
const (
	PatchJSON      PatchType = "json"
	PatchMerge     PatchType = "merge"
	PatchStrategic PatchType = "strategic"
	PatchApply     PatchType = "apply"
)

// ParsePatchType checks a --type value.
func ParsePatchType(s string) (PatchType, error) {
	switch t := PatchType(s); t {
	case PatchJSON, PatchMerge, PatchStrategic, PatchApply:
		return t, nil
	}
	return "", fmt.Errorf("unknown patch type %q: use json, merge, strategic or apply", s)
}

// Input is one object to predict writes of: either a desired object or a
// given patch.
type Input struct {
	Ref ObjectRef
	// Desired is the object the writer wants (nil when Patch is set).
	Desired *unstructured.Unstructured
	// Base is the object the writer last read, the origin of generated
	// patches; nil means the live object.
	Base *unstructured.Unstructured
	// BaseRV overrides the resourceVersion the writer last read.
	BaseRV string
	// Patch is a given patch of type PatchType.
	Patch     []byte
	PatchType PatchType
}

// Config tunes a prediction.
type Config struct {
	// FieldManager is the writer's manager. Required for apply.
	FieldManager string
	// DefaultManager is what the server records for non-apply writes when
	// FieldManager is empty (the User-Agent up to the first "/").
	DefaultManager string
	// Methods are the methods to predict; empty means all.
	Methods []Method
	// TypeConverter types objects for the changed-fields comparison; nil
	// uses the built-in schema, or deduces types for other kinds.
	TypeConverter managedfields.TypeConverter
	// ShowSecrets keeps Secret values in results and errors
	// (--show-secrets); by default they are hashed (pkg/redact).
	ShowSecrets bool
	// KubectlValidation is the fieldValidation kubectl's apply, apply
	// --server-side, replace and edit send (ParseKubectlValidate of their
	// --validate); "" is kubectl's default, Strict.
	KubectlValidation string
}

// kubectlValidation is the fieldValidation of kubectl's verbs.
func (cfg Config) kubectlValidation() string {
	if cfg.KubectlValidation == "" {
		return metav1.FieldValidationStrict
	}
	return cfg.KubectlValidation
}

// KubectlValidateValues are the values of kubectl's --validate.
var KubectlValidateValues = []string{"strict", "warn", "ignore", "true", "false"}

// ParseKubectlValidate returns the fieldValidation kubectl sends for its
// --validate value: strict (or true) Strict, warn Warn, ignore (or
// false) Ignore.
func ParseKubectlValidate(v string) (string, error) {
	switch strings.ToLower(v) {
	case "strict", "true":
		return metav1.FieldValidationStrict, nil
	case "warn":
		return metav1.FieldValidationWarn, nil
	case "ignore", "false":
		return metav1.FieldValidationIgnore, nil
	}
	return "", fmt.Errorf("%q is not one of strict (or true), warn, ignore (or false)", v)
}

// ValidatePatch checks that a given patch decodes as its type says.
func ValidatePatch(pt PatchType, data []byte) error {
	switch pt {
	case PatchJSON:
		if _, err := jsonpatch.DecodePatch(data); err != nil {
			return fmt.Errorf("invalid JSON patch: %w", err)
		}
	case PatchApply:
		var m map[string]any
		if err := yaml.Unmarshal(data, &m); err != nil || m == nil {
			if err == nil {
				err = errors.New("not an object")
			}
			return fmt.Errorf("invalid apply patch: %w", err)
		}
	default:
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil || m == nil {
			if err == nil {
				err = errors.New("not a JSON object")
			}
			return fmt.Errorf("invalid %s patch: %w", pt, err)
		}
	}
	return nil
}

// request is one method's call.
type request struct {
	method Method
	// obj for updates, data for patches.
	obj   *unstructured.Unstructured
	pt    types.PatchType
	data  []byte
	force bool
	// create is the object a create sends (client-apply of an object
	// that does not exist).
	create *unstructured.Unstructured
	// manager overrides the writer's manager (kubectl's verbs have their
	// own defaults).
	manager string
	// clientApply is what kubectl's client-side apply computed.
	clientApply *clientApplyPlan
	// config is a server-side apply's configuration, from a manifest.
	config *unstructured.Unstructured
	// validation is the request's fieldValidation (Write.FieldValidation).
	validation string
	// skip explains why the method does not apply (with its verdict): the
	// method sends nothing.
	skip        string
	skipVerdict Verdict
}

// Predict predicts every configured method for in, through ex. The
// result of a Secret and the error carry no Secret value unless
// cfg.ShowSecrets (see redactResult).
func Predict(ctx context.Context, cfg Config, in Input, ex Executor) (Result, error) {
	res, live, err := predict(ctx, cfg, in, ex)
	return redactResult(cfg.ShowSecrets, in, live, res, err)
}

// predict is Predict before redaction; it also returns the live object
// (nil when there is none).
func predict(ctx context.Context, cfg Config, in Input, ex Executor) (Result, *unstructured.Unstructured, error) {
	methods := cfg.Methods
	if len(methods) == 0 {
		methods = AllMethods
	}
	res := Result{Object: in.Ref, Engine: ex.Engine(), FieldManager: cfg.FieldManager}
	if res.FieldManager == "" {
		res.FieldManager = cfg.DefaultManager
		if onlyVerbs(methods) {
			// kubectl's verbs each have their own (MethodResult.Manager).
			res.FieldManager = ""
			if len(methods) == 1 {
				res.FieldManager = verbManagers[methods[0]]
			}
		}
	}
	live, err := ex.Live(ctx)
	exists := true
	if apierrors.IsNotFound(err) {
		exists = false
		live = nil
	} else if err != nil {
		return res, nil, err
	}
	if exists {
		res.LiveResourceVersion = live.GetResourceVersion()
	}

	baseRV := in.BaseRV
	if baseRV == "" && in.Desired != nil {
		baseRV = in.Desired.GetResourceVersion()
	}
	if baseRV == "" && in.Base != nil {
		baseRV = in.Base.GetResourceVersion()
	}
	if baseRV == "" && exists {
		baseRV = live.GetResourceVersion()
		res.BaseAssumed = true
	}
	res.BaseResourceVersion = baseRV
	res.Stale = exists && baseRV != "" && baseRV != live.GetResourceVersion()

	if r, ok := ex.(rulesReporter); ok {
		res.Rules = r.Rules()
	}
	reqs, err := buildRequests(cfg, in, live, baseRV, methods)
	if err != nil {
		return res, live, err
	}
	before := live
	if before == nil {
		before = &unstructured.Unstructured{Object: map[string]any{}}
	}
	an := newAnalyzer(cfg.TypeConverter, before)
	var errs []error
	res.Methods, errs = runAll(ctx, an, ex, reqs, live, res.FieldManager)
	// The methods share their causes: a user who may not write is refused
	// every method, an unreachable server fails them all. The first error,
	// in method order, says it once.
	for _, err := range errs {
		if err != nil {
			return res, live, err
		}
	}
	return res, live, nil
}

// runAll runs the requests. The methods are independent (nothing is
// persisted), so they run side by side: dry runs overlap their round
// trips, offline work uses every core. A few workers, the caller among
// them, take the methods in order: each worker grows its stack once for
// the deep recursion of the field manager, not once per method.
func runAll(ctx context.Context, an *analyzer, ex Executor, reqs []request, live *unstructured.Unstructured, writer string) ([]MethodResult, []error) {
	out := make([]MethodResult, len(reqs))
	errs := make([]error, len(reqs))
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= len(reqs) {
				return
			}
			out[i], errs[i] = run(ctx, an, ex, reqs[i], live, writer)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < min(len(reqs), max(2, runtime.GOMAXPROCS(0))); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return out, errs
}

// Item is one object of a batch: its input and its executor.
type Item struct {
	Input    Input
	Executor Executor
}

// ItemError says which item of a batch failed.
type ItemError struct {
	Index int
	Err   error
}

func (e *ItemError) Error() string { return fmt.Sprintf("object %d: %v", e.Index, e.Err) }

func (e *ItemError) Unwrap() error { return e.Err }

// PredictAll predicts a batch of objects, workers at a time (0: one per
// CPU), and returns the results in the items' order. On failure it returns
// the *ItemError of the first failing item.
func PredictAll(ctx context.Context, cfg Config, items []Item, workers int) ([]Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]Result, len(items))
	errs := make([]error, len(items))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = Predict(ctx, cfg, items[i].Input, items[i].Executor)
			}
		}()
	}
feed:
	for i := range items {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, &ItemError{Index: i, Err: err}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func run(ctx context.Context, an *analyzer, ex Executor, rq request, live *unstructured.Unstructured, writer string) (MethodResult, error) {
	mr := MethodResult{Method: rq.method, Manager: rq.manager}
	if rq.skip != "" {
		mr.Verdict, mr.Reason, mr.Code = rq.skipVerdict, rq.skip, 0
		mr.NoOp = rq.skipVerdict == OK
		if rq.clientApply != nil {
			rq.clientApply.finish(an.tc, &mr, nil)
		}
		return mr, nil
	}
	manager := writer
	if rq.manager != "" {
		manager = rq.manager
	}
	var out *unstructured.Unstructured
	var err error
	w := Write{Manager: manager, Force: rq.force, FieldValidation: rq.validation}
	switch {
	case rq.create != nil:
		out, err = ex.Create(ctx, rq.create, w)
	case rq.obj != nil:
		out, err = ex.Update(ctx, rq.obj, w)
	default:
		mr.Request = string(rq.data)
		out, err = ex.Patch(ctx, rq.pt, rq.data, w)
	}
	// An answer the executor cannot vouch for is judged as any other,
	// then said to be unknown, with what it was.
	unknown := ""
	if ck := (*writepath.CannotKnowError)(nil); errors.As(err, &ck) && ck.Seen != nil {
		unknown, out, err = ck.Reason, ck.Seen.Object, ck.Seen.Err
	}
	if err != nil {
		mr, err = classify(mr, rq, live, err)
		if err != nil {
			return mr, err
		}
	} else {
		mr.Code = http.StatusOK
		if live == nil {
			mr.Code = http.StatusCreated
		}
		an.analyzeMemo(&mr, out, manager)
	}
	if rq.clientApply != nil {
		rq.clientApply.finish(an.tc, &mr, out)
	}
	if rq.config != nil && (mr.Verdict == ApplyConflict || out != nil) {
		mr.CSAUpgrade = csaUpgrade(an.tc, live, out, rq.config, manager, mr.Conflicts)
	}
	if unknown != "" && mr.Verdict != Unknown {
		seen := string(mr.Verdict)
		if mr.Reason != "" {
			seen += ": " + mr.Reason
		}
		mr.Reason = fmt.Sprintf("%s; without them the write would be %s", unknown, seen)
		mr.Verdict, mr.Code = Unknown, 0
	}
	return mr, nil
}

func classify(mr MethodResult, rq request, live *unstructured.Unstructured, err error) (MethodResult, error) {
	var ck *writepath.CannotKnowError
	if errors.As(err, &ck) {
		mr.Verdict, mr.Reason = Unknown, ck.Reason
		return mr, nil
	}
	v, ok := refusalVerdict(err)
	if !ok {
		return mr, err
	}
	var st apierrors.APIStatus
	errors.As(err, &st)
	s := st.Status()
	mr.Verdict = v
	mr.Code = int(s.Code)
	mr.Reason = refusalReason(s)
	switch v {
	case ApplyConflict:
		mr.Conflicts, _ = managedfields.Conflicts(err)
	case Invalid:
		if rq.method == JSONPatch && s.Code == http.StatusUnprocessableEntity && s.Message == patchNotApplied {
			mr.Reason = "the JSON patch does not apply to the live object: " + jsonPatchFailure(rq.data, live)
		}
		if rq.method == StrategicMergePatch && s.Code == http.StatusUnsupportedMediaType {
			mr.Reason = "strategic merge patch needs the Go type's patch metadata (patchStrategy, patchMergeKey), which custom resources do not have; the server refuses it with 415 and kubectl falls back to a JSON merge patch"
		}
	case ServerError:
		mr.Reason = serverErrorReason(rq.method, s.Message)
	}
	return mr, nil
}

// refusalReason is the server's message of a refusal, with its first
// cause when the message lacks it. A message built from field errors
// already holds them (apierrors.NewInvalid: `spec.size: Invalid value: 0:
// ...`), and the causes repeat them; an admission webhook's cause may say
// more than its message. Apply conflicts are listed apart (Conflicts).
func refusalReason(s metav1.Status) string {
	if s.Details == nil || len(s.Details.Causes) == 0 || s.Details.Causes[0].Type == metav1.CauseTypeFieldManagerConflict {
		return s.Message
	}
	if c := s.Details.Causes[0].Message; !strings.Contains(s.Message, c) {
		return s.Message + ": " + c
	}
	return s.Message
}

// refusalVerdict is the verdict of a write the server refused with err;
// false when err is no refusal of this one request (an outage, a network
// error), which fails the prediction.
func refusalVerdict(err error) (Verdict, bool) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return "", false
	}
	s := st.Status()
	switch {
	case apierrors.IsConflict(err):
		if _, ok := managedfields.Conflicts(err); ok {
			return ApplyConflict, true
		}
		return Conflict, true
	case apierrors.IsNotFound(err):
		return NotFound, true
	case s.Code == http.StatusUnprocessableEntity, s.Code == http.StatusUnsupportedMediaType,
		s.Code == http.StatusBadRequest, s.Code == http.StatusRequestEntityTooLarge:
		return Invalid, true
	case isRequestFailure(s):
		return ServerError, true
	}
	return "", false
}

// isRequestFailure tells a 500 that this one request causes from an
// outage. A handler error that is no API status (the strategic merge
// patch library's, for one) reaches the client as a 500 with no reason
// (responsewriters.ErrorToAPIStatus), and the same request fails again
// every time. A storage failure is an InternalError, and 503 and 504 are
// the server's state: those stay errors, worth a retry.
func isRequestFailure(s metav1.Status) bool {
	return s.Code == http.StatusInternalServerError && s.Reason == metav1.StatusReasonUnknown
}

// serverErrorReason explains a request failure. The strategic merge patch
// library fails when a list's merge key is not unique in it (the same port
// on TCP and UDP): the patch cannot say which item is which.
func serverErrorReason(m Method, msg string) string {
	if m == StrategicMergePatch && strings.Contains(msg, "$setElementOrder") {
		return "the server fails (500) to apply the strategic merge patch: its list merges on a key that is not unique here (the same port on TCP and UDP), so a strategic merge patch cannot express this change; use server-side apply or a JSON patch (" + msg + ")"
	}
	return "the server fails (500) on this request, and would again on a retry: " + msg
}

// patchNotApplied is the message of the 422 the API server answers when a
// JSON patch does not apply (a test fails, a path is missing): its generic
// "error in our request", with the library's own error dropped. Any other
// 422 (spec.selector: Required value) is validation, and its message is the
// server's reason.
var patchNotApplied = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "", 0, false).ErrStatus.Message

// jsonPatchFailure says why a JSON patch the server would not apply fails,
// from the library the server uses, applied to the live object the
// prediction read ("testing value /metadata/resourceVersion failed").
func jsonPatchFailure(data []byte, live *unstructured.Unstructured) string {
	const unknown = "a test operation failed or a path is missing"
	if live == nil {
		return unknown
	}
	p, err := jsonpatch.DecodePatch(data)
	if err != nil {
		return err.Error()
	}
	doc, err := live.MarshalJSON()
	if err != nil {
		return unknown
	}
	if _, err := p.Apply(doc); err != nil {
		return err.Error()
	}
	// The server's object moved since it was read.
	return unknown
}

// buildRequests makes each method's request from the input.
func buildRequests(cfg Config, in Input, live *unstructured.Unstructured, baseRV string, methods []Method) ([]request, error) {
	if in.Patch != nil {
		return givenPatchRequests(cfg, in, baseRV, methods)
	}
	base := in.Base
	if base == nil {
		base = live
	}
	full := in.Desired
	if base != nil {
		full = fillSystemFields(in.Desired, base)
	}
	pb := &patchBuilder{base: base, full: full, desired: in.Desired, rv: baseRV}
	var reqs []request
	for _, m := range methods {
		rq := request{method: m}
		switch m {
		case Update:
			rq.obj = withResourceVersion(full, baseRV)
		case UpdateNoRV:
			rq.obj = withResourceVersion(full, "")
		case JSONPatch, MergePatch, MergePatchRV, StrategicMergePatch:
			if base == nil {
				rq.skip, rq.skipVerdict = "the object does not exist and no --base was given: there is nothing to patch", NotFound
				break
			}
			if err := pb.encode(); err != nil {
				return nil, err
			}
			if err := pb.request(&rq); err != nil {
				return nil, fmt.Errorf("%s: generating the %s: %w", in.Ref, m, err)
			}
		case ClientApply:
			var err error
			if rq, err = clientApplyRequest(cfg, in, live); err != nil {
				return nil, fmt.Errorf("%s: computing kubectl apply's patch: %w", in.Ref, err)
			}
		case Apply, ApplyForce:
			if cfg.FieldManager == "" {
				rq.skip, rq.skipVerdict = "server-side apply needs --field-manager", Invalid
				break
			}
			rq.pt = types.ApplyPatchType
			rq.force = m == ApplyForce
			rq.config = in.Desired
			b, err := json.Marshal(jsonvalue.WithoutMeta(in.Desired.Object, "managedFields"))
			if err != nil {
				return nil, err
			}
			rq.data = b
		default:
			var ok bool
			var err error
			if rq, ok, err = verbRequest(cfg, in, live, pb, m); err != nil {
				return nil, fmt.Errorf("%s: computing kubectl %s's request: %w", in.Ref, m, err)
			} else if !ok {
				continue
			}
		}
		reqs = append(reqs, rq)
	}
	if len(reqs) == 0 {
		return nil, errors.New("--method selects no method a manifest can use (kubectl patch needs --patch)")
	}
	return reqs, nil
}

// patchBuilder generates the patches from the writer's base to the full
// desired object. The origin and target are encoded once for all patch
// methods, and the merge patch between them is made once for the methods
// that send it.
type patchBuilder struct {
	base, full, desired *unstructured.Unstructured
	rv                  string

	from, to            map[string]any
	fromJS, toJS, merge []byte
}

// encode encodes the origin and the target, once.
func (pb *patchBuilder) encode() error {
	if pb.from != nil {
		return nil
	}
	pb.from, pb.to = stripForPatch(pb.base), stripForPatch(pb.full)
	var err error
	if pb.fromJS, err = json.Marshal(pb.from); err == nil {
		pb.toJS, err = json.Marshal(pb.to)
	}
	return err
}

// request fills in the patch of rq's method; the base exists and is
// encoded.
func (pb *patchBuilder) request(rq *request) error {
	rq.pt = types.MergePatchType
	var err error
	switch rq.method {
	case JSONPatch:
		rq.pt = types.JSONPatchType
		rq.data, err = GenerateJSONPatch(pb.from, pb.to, pb.rv)
	case MergePatch:
		rq.data, err = pb.mergePatch()
	case MergePatchRV:
		if rq.data, err = pb.mergePatch(); err == nil {
			rq.data, err = withRV(rq.data, pb.rv)
		}
	case StrategicMergePatch:
		rq.pt = types.StrategicMergePatchType
		if managedfields.IsBuiltin(pb.desired.GroupVersionKind()) {
			rq.data, err = strategicPatch(pb.fromJS, pb.toJS, pb.desired)
		} else {
			// Sent anyway, as a client would: the server answers 415.
			rq.data, err = pb.mergePatch()
		}
	}
	return err
}

func (pb *patchBuilder) mergePatch() ([]byte, error) {
	var err error
	if pb.merge == nil {
		pb.merge, err = jsonpatch.CreateMergePatch(pb.fromJS, pb.toJS)
	}
	return pb.merge, err
}

func givenPatchRequests(cfg Config, in Input, baseRV string, methods []Method) ([]request, error) {
	want := map[Method]bool{}
	for _, m := range methods {
		want[m] = true
	}
	var reqs []request
	add := func(rq request) {
		if want[rq.method] {
			reqs = append(reqs, rq)
		}
	}
	switch in.PatchType {
	case PatchJSON:
		add(request{method: JSONPatch, pt: types.JSONPatchType, data: in.Patch})
	case PatchMerge:
		add(request{method: MergePatch, pt: types.MergePatchType, data: in.Patch})
		if in.BaseRV != "" {
			locked, err := withRV(in.Patch, baseRV)
			if err != nil {
				return nil, err
			}
			add(request{method: MergePatchRV, pt: types.MergePatchType, data: locked})
		}
	case PatchStrategic:
		add(request{method: StrategicMergePatch, pt: types.StrategicMergePatchType, data: in.Patch})
	case PatchApply:
		for _, m := range []Method{Apply, ApplyForce} {
			rq := request{method: m, pt: types.ApplyPatchType, data: in.Patch, force: m == ApplyForce}
			if cfg.FieldManager == "" {
				rq.skip, rq.skipVerdict = "server-side apply needs --field-manager", Invalid
			}
			add(rq)
		}
	}
	if want[KubectlPatch] {
		add(givenPatchVerb(cfg, in))
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("--method selects no method a %s patch can use", in.PatchType)
	}
	return reqs, nil
}

// systemFields are the metadata a read-modify-write client carries over
// from what it read.
var systemFields = []string{"uid", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// fillSystemFields returns desired completed the way a client that read
// base and edited it would send it: system metadata and status from base
// where desired has none.
func fillSystemFields(desired, base *unstructured.Unstructured) *unstructured.Unstructured {
	// Only the top level and metadata change: the rest is shared.
	out := &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(desired.Object)}
	// Only read; SetNestedField copies what it takes.
	bm, _ := base.Object["metadata"].(map[string]any)
	for _, f := range systemFields {
		if _, found, _ := unstructured.NestedFieldNoCopy(out.Object, "metadata", f); found {
			continue
		}
		if v, ok := bm[f]; ok {
			_ = unstructured.SetNestedField(out.Object, v, "metadata", f)
		}
	}
	if _, found := out.Object["status"]; !found {
		if st, ok := base.Object["status"]; ok {
			out.Object["status"] = st
		}
	}
	return out
}

// stripForPatch drops what patch generators never diff: managedFields and
// the resourceVersion (the locked variants add it back on purpose). The
// result shares all but its top level and metadata with u: the generators
// only read it.
func stripForPatch(u *unstructured.Unstructured) map[string]any {
	return jsonvalue.WithoutMeta(u.Object, "managedFields", "resourceVersion")
}

// withResourceVersion returns u with its resourceVersion set to rv (""
// removes it). The copy shares all but its top level and metadata with u:
// executors copy an object before they change it.
func withResourceVersion(u *unstructured.Unstructured, rv string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(u.Object)}
	o.SetResourceVersion(rv)
	return o
}

// withRV adds metadata.resourceVersion to a merge patch.
func withRV(p []byte, rv string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(p, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("a merge patch must be a JSON object, not null")
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	md["resourceVersion"] = rv
	m["metadata"] = md
	return json.Marshal(m)
}

func strategicPatch(fb, tb []byte, desired *unstructured.Unstructured) ([]byte, error) {
	typed, err := scheme.Scheme.New(desired.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(fb, tb, typed)
}

// analyzer compares each method's result with the object before the
// write. It holds what all methods share: the decoded managedFields and the
// typed value of the object before.
type analyzer struct {
	tc          managedfields.TypeConverter
	before      *unstructured.Unstructured
	beforeSets  map[entryKey]*fieldpath.Set
	typedBefore *typedObject

	// mu guards memo.
	mu   sync.Mutex
	memo map[memoKey]*analysis
}

// memoKey is one analysis: a result object as one writer made it.
type memoKey struct {
	after  *unstructured.Unstructured
	writer string
}

// analysis is the analysis of one result object, done once however many
// methods return that object, even when they finish at the same time.
type analysis struct {
	once sync.Once
	mr   MethodResult
}

type entryKey struct{ manager, op, sub string }

func newAnalyzer(tc managedfields.TypeConverter, before *unstructured.Unstructured) *analyzer {
	es, _ := managedfields.Entries(before)
	b := &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(before.Object, ignoredForChanges...)}
	return &analyzer{tc: tc, before: before, beforeSets: entrySets(es), typedBefore: newTypedObject(tc, b),
		memo: map[memoKey]*analysis{}}
}

func entrySets(es []managedfields.Entry) map[entryKey]*fieldpath.Set {
	m := map[entryKey]*fieldpath.Set{}
	for _, e := range es {
		k := entryKey{e.Manager, string(e.Operation), e.Subresource}
		if s, ok := m[k]; ok {
			m[k] = s.Union(e.Fields())
		} else {
			m[k] = e.Fields()
		}
	}
	return m
}

// analyzeMemo is analyze, remembered per result object: executors return
// the same object for methods with the same outcome. The analysis does not
// depend on the method, its request or its status code, which each caller
// keeps.
func (an *analyzer) analyzeMemo(mr *MethodResult, after *unstructured.Unstructured, writer string) {
	an.mu.Lock()
	key := memoKey{after, writer}
	a, ok := an.memo[key]
	if !ok {
		a = &analysis{}
		an.memo[key] = a
	}
	an.mu.Unlock()
	a.once.Do(func() {
		a.mr = *mr
		an.analyze(&a.mr, after, writer)
	})
	m, req, code := mr.Method, mr.Request, mr.Code
	*mr = a.mr
	mr.Method, mr.Request, mr.Code = m, req, code
}

// analyze fills ownership, clobbers, changed fields and generation from
// the object before and after the write.
func (an *analyzer) analyze(mr *MethodResult, after *unstructured.Unstructured, writer string) {
	before := an.before
	afterEntries, _ := managedfields.Entries(after)
	bs, as := an.beforeSets, entrySets(afterEntries)
	keys := map[entryKey]bool{}
	for k := range bs {
		keys[k] = true
	}
	for k := range as {
		keys[k] = true
	}
	ordered := make([]entryKey, 0, len(keys))
	for k := range keys {
		ordered = append(ordered, k)
	}
	sort.Slice(ordered, func(i, j int) bool {
		a, b := ordered[i], ordered[j]
		if a.manager != b.manager {
			return a.manager < b.manager
		}
		if a.op != b.op {
			return a.op < b.op
		}
		return a.sub < b.sub
	})
	empty := fieldpath.NewSet()
	for _, k := range ordered {
		b, a := bs[k], as[k]
		if b == nil {
			b = empty
		}
		if a == nil {
			a = empty
		}
		gained, lost := a.Difference(b).Leaves(), b.Difference(a).Leaves()
		if gained.Empty() && lost.Empty() {
			continue
		}
		oc := OwnershipChange{Manager: k.manager, Operation: k.op, Subresource: k.sub, Gained: paths(gained), Lost: paths(lost)}
		mr.OwnershipChanges = append(mr.OwnershipChanges, oc)
		if k.manager != writer && !lost.Empty() {
			mr.Clobbered = append(mr.Clobbered, Ownership{Manager: k.manager, Operation: k.op, Subresource: k.sub, Fields: paths(lost)})
		}
	}
	mr.Verdict = OK
	if len(mr.Clobbered) > 0 {
		mr.Verdict = Clobber
		n := 0
		for _, c := range mr.Clobbered {
			n += len(c.Fields)
		}
		mr.Reason = fmt.Sprintf("succeeds, but %d field(s) owned by other managers are overwritten or removed", n)
	}
	mr.Changed = an.changedFields(after)
	bg, bfound, _ := unstructured.NestedInt64(before.Object, "metadata", "generation")
	ag, afound, _ := unstructured.NestedInt64(after.Object, "metadata", "generation")
	mr.GenerationBumped = bfound && afound && ag > bg
	mr.NoOp = before.GetResourceVersion() != "" && sameStored(before, after)
}

func paths(s *fieldpath.Set) []string {
	var out []string
	s.Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	sort.Strings(out)
	return out
}

// sameStored reports whether after would be stored as the same bytes as
// before (ignoring the resourceVersion the server would assign).
func sameStored(before, after *unstructured.Unstructured) bool {
	return jsonEqual(jsonvalue.WithoutMeta(before.Object, "resourceVersion"), jsonvalue.WithoutMeta(after.Object, "resourceVersion"))
}

// ignoredForChanges are the bookkeeping fields under metadata that every
// write touches.
var ignoredForChanges = []string{"managedFields", "resourceVersion", "generation"}

func (an *analyzer) changedFields(after *unstructured.Unstructured) []FieldChange {
	a := &unstructured.Unstructured{Object: jsonvalue.WithoutMeta(after.Object, ignoredForChanges...)}
	cmp := an.typedBefore.compare(a)
	if cmp == nil {
		return nil
	}
	var out []FieldChange
	add := func(s *fieldpath.Set, what string) {
		s.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, FieldChange{Path: p.String(), Change: what}) })
	}
	add(cmp.Added, "added")
	add(cmp.Modified, "modified")
	add(cmp.Removed, "removed")
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
