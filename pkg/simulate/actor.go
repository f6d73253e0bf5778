package simulate

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// group is one actor of the scenario with its replicas; it accumulates the
// report.
type group struct {
	idx      int
	spec     *scenario.Actor
	target   objectRef
	ref      string // target.String(), computed once
	path     fieldpath.Path
	pathText string
	values   []any
	// onTarget are the counters on the target object (set after setup).
	onTarget []*counter

	operations, attempts, successes, noops int
	conflicts, applyConflicts, invalid     int
	errors, giveUps, revisions             int
	retries                                []int
	latencies                              []time.Duration
	counters                               []*counter

	acquisitions, renewals int
	events, lists, expired int
	lastRV                 int64
}

func (g *group) report() ActorReport {
	s := g.spec
	r := ActorReport{
		Name: s.Name, Replicas: s.Replicas, Method: s.Method, FieldManager: s.FieldManager, Target: g.target.String(),
		Retry:      s.Retry.Policy,
		Operations: g.operations, Attempts: g.attempts, Successes: g.successes, NoOps: g.noops,
		Conflicts: g.conflicts, ApplyConflicts: g.applyConflicts, Invalid: g.invalid, Errors: g.errors,
		GiveUps: g.giveUps, RevisionsConsumed: g.revisions, Latency: latencyOf(g.latencies), LatencyHistogram: histogramOf(g.latencies),
		Acquisitions: g.acquisitions, Renewals: g.renewals, Events: g.events, Lists: g.lists, Expired: g.expired, LastRV: g.lastRV,
	}
	if r.FieldManager == "" {
		r.FieldManager = s.Name
	}
	if s.Method == scenario.MethodLeaderElection || s.Method == scenario.MethodWatch {
		r.Retry = ""
	}
	for n, c := range g.retries {
		if c > 0 {
			r.Retries = append(r.Retries, Bucket{Retries: n, Count: c})
		}
	}
	for _, c := range g.counters {
		if gi, ok := c.index[g]; ok {
			r.LostUpdates += g.successesOn(c) - int(c.vec[gi])
		}
	}
	return r
}

func (g *group) successesOn(c *counter) int { return c.successes[c.index[g]] }

func (e *engine) addGroup(gi int) error {
	s := &e.sc.Actors[gi]
	gv, err := schema.ParseGroupVersion(s.Target.APIVersion)
	if err != nil {
		return fmt.Errorf("%w: actor %q: target apiVersion: %v", ErrScenario, s.Name, err)
	}
	gvk := gv.WithKind(s.Target.Kind)
	t, err := e.srv.Registry().Lookup(gvk)
	if err != nil {
		return fmt.Errorf("%w: actor %q: %v", ErrScenario, s.Name, err)
	}
	ns := s.Target.Namespace
	if t.Namespaced && ns == "" {
		ns = "default"
	}
	g := &group{idx: gi, spec: s, target: e.object(t, gvk, ns, s.Target.Name)}
	g.ref = g.target.String()
	if p := s.Change.Increment + s.Change.Set + s.Change.Insert; p != "" {
		if g.path, err = scenario.ParsePath(p); err != nil {
			return fmt.Errorf("%w: actor %q: %v", ErrScenario, s.Name, err)
		}
		g.pathText = managedfields.ShortPathString(g.path)
	}
	vals := s.Change.Values
	if s.Change.Value != nil {
		vals = []any{s.Change.Value}
	}
	for _, v := range vals {
		nv, err := normalizeValue(v)
		if err != nil {
			return fmt.Errorf("%w: actor %q: value: %v", ErrScenario, s.Name, err)
		}
		g.values = append(g.values, nv)
	}
	if s.Method == scenario.MethodLeaderElection && e.leader == nil {
		e.leader = &leaderState{}
	}
	if s.Change.Increment != "" {
		c, err := e.counterFor(s.Target, s.Change.Increment)
		if err != nil {
			return fmt.Errorf("%w: actor %q: %v", ErrScenario, s.Name, err)
		}
		c.add(g)
	}
	e.groups = append(e.groups, g)
	for r := 0; r < s.Replicas; r++ {
		name := s.Name
		if s.Replicas > 1 {
			name = fmt.Sprintf("%s-%d", s.Name, r+1)
		}
		fm := s.FieldManager
		if fm == "" {
			fm = name
		}
		a := &actor{e: e, g: g, name: name, manager: fm, rng: rand.New(rand.NewPCG(uint64(e.seed), uint64(gi)<<20|uint64(r)))}
		a.bind()
		e.actors = append(e.actors, a)
		if s.Method == scenario.MethodWatch {
			e.watchers = append(e.watchers, a)
		}
	}
	return nil
}

// object registers a target object and returns its reference.
func (e *engine) object(t *apiserver.TypeInfo, gvk schema.GroupVersionKind, ns, name string) objectRef {
	key := t.Key(ns, name)
	for _, o := range e.objects {
		if o.key == key {
			return o
		}
	}
	o := objectRef{gvk: gvk, namespace: ns, name: name, key: key}
	e.objects = append(e.objects, o)
	return o
}

// actor is one client (one replica of a group).
type actor struct {
	e       *engine
	g       *group
	name    string
	manager string
	rng     *rand.Rand
	done    bool
	writes  int
	next    int // index into g.values

	// the operation in flight
	opStart time.Duration
	attempt int
	bo      backoff
	read    *unstructured.Unstructured
	readVec [][]int64
	started bool

	// the requests in flight (one at a time per client)
	got      *unstructured.Unstructured
	gerr     error
	req      writeReq
	res      *unstructured.Unstructured
	resRV    int64
	werr     error
	consumed bool

	// method values bound once, so scheduling allocates no closures
	fnServeGet, fnRespondGet, fnWrite, fnServeWrite, fnRespondWrite, fnTryOnce, fnStartOp func()

	// leader election and watch state
	le *leaderCandidate
	w  *watchState
}

func (a *actor) bind() {
	a.fnServeGet, a.fnRespondGet, a.fnWrite = a.serveGet, a.respondGet, a.write
	a.fnServeWrite, a.fnRespondWrite, a.fnTryOnce, a.fnStartOp = a.serveWrite, a.respondWrite, a.tryOnce, a.startOp
}

func (a *actor) stopAt() time.Duration {
	if a.g.spec.Stop != nil {
		return a.g.spec.Stop.D()
	}
	return a.e.end
}

func (a *actor) begin() {
	s := a.g.spec
	switch s.Method {
	case scenario.MethodLeaderElection:
		a.le = &leaderCandidate{}
		a.e.at(s.Start.D(), a.leTick)
		if s.Lease.CrashAt != nil {
			a.e.at(s.Lease.CrashAt.D(), a.crash)
		}
		return
	case scenario.MethodWatch:
		a.w = &watchState{}
		a.e.at(s.Start.D(), a.watchStart)
		if s.Watch.DisconnectAt != nil {
			a.e.at(s.Watch.DisconnectAt.D(), a.disconnect)
		}
		return
	}
	first := s.Start.D()
	if s.Rate > 0 {
		first += a.think()
	}
	a.e.at(first, a.startOp)
}

// think returns the pause before the next operation.
func (a *actor) think() time.Duration {
	s := a.g.spec
	if s.ThinkTime != nil {
		return s.ThinkTime.D()
	}
	return time.Duration(a.rng.ExpFloat64() / s.Rate * float64(time.Second))
}

func (a *actor) startOp() {
	s := a.g.spec
	if a.done || a.e.now >= a.stopAt() || (s.Writes > 0 && a.writes >= s.Writes) {
		a.done = true
		return
	}
	a.g.operations++
	a.opStart = a.e.now
	a.attempt = 0
	a.bo = newBackoff(s.Retry)
	a.tryOnce()
}

// tryOnce is one pass of the RetryOnConflict function: read, then write.
func (a *actor) tryOnce() {
	a.attempt++
	a.e.request(a.rng, a.fnServeGet, a.fnRespondGet)
}

// serveGet is the server side of the read.
func (a *actor) serveGet() {
	t := a.g.target
	// The writer changes what it read only through setPath, which copies
	// on write, so the server's cache can be shared.
	a.got, a.gerr = a.e.srv.GetShared(a.e.ctx, t.gvk, t.namespace, t.name)
	if a.e.trace {
		code, reason, msg := statusOf(a.gerr)
		st := Step{Actor: a.name, Verb: "GET", Target: a.g.ref, Code: code, Reason: reason, Message: msg, Outcome: "read"}
		if a.got != nil {
			st.RV = a.got.GetResourceVersion()
		}
		a.e.step(st)
	}
	a.snapshot()
}

// respondGet is the client receiving the read.
func (a *actor) respondGet() {
	if a.gerr != nil {
		a.g.errors++
		a.endOp(false)
		return
	}
	a.read, a.got = a.got, nil
	a.e.at(a.g.spec.Work.D(), a.fnWrite)
}

// snapshot records, for each counter on the target, which increments the
// state just read contains.
func (a *actor) snapshot() {
	cs := a.g.onTarget
	if len(cs) == 0 {
		return
	}
	for len(a.readVec) < len(cs) {
		a.readVec = append(a.readVec, nil)
	}
	a.readVec = a.readVec[:len(cs)]
	for i, c := range cs {
		a.readVec[i] = append(a.readVec[i][:0], c.vec...)
	}
}

// write sends the write request of the actor's method.
func (a *actor) write() {
	req, err := a.buildWrite()
	if err != nil {
		a.e.err = fmt.Errorf("%w: actor %q: %v", ErrScenario, a.name, err)
		return
	}
	a.req = req
	a.res, a.resRV, a.werr, a.consumed = nil, 0, nil, false
	a.e.request(a.rng, a.fnServeWrite, a.fnRespondWrite)
}

// serveWrite is the server side of the write.
func (a *actor) serveWrite() {
	s := a.g.spec
	t := a.g.target
	req := &a.req
	ctx := a.e.ctx
	wo := apiserver.WriteOptions{FieldManager: a.manager}
	switch {
	case req.obj != nil:
		if s.Method == scenario.MethodUpdateStatus {
			wo.Subresource = "status"
		}
		a.resRV, a.werr = a.e.srv.UpdateRV(ctx, req.obj, wo)
	default:
		a.res, a.werr = a.e.srv.Patch(ctx, t.gvk, t.namespace, t.name, req.pt, req.patch, apiserver.PatchOptions{WriteOptions: wo, Force: s.Method == scenario.MethodApplyForce})
	}
	werr := a.werr
	a.consumed = werr == nil && !a.e.srv.LastWriteWasNoOp()
	switch {
	case werr == nil && a.consumed:
		a.g.revisions++
		a.commitCounters(req.carries, true)
	case werr == nil:
		a.commitCounters(req.carries, false)
	}
	if a.e.trace {
		code, reason, msg := statusOf(werr)
		st := Step{Actor: a.name, Verb: req.verb, Target: a.g.ref, SentRV: req.sentRV, Code: code, Reason: reason, Message: msg, Note: req.note}
		switch {
		case werr == nil && a.consumed:
			st.Outcome = "ok"
		case werr == nil:
			st.Outcome = "noop"
			st.Note = joinNote(st.Note, "no-op: the object did not change, so the resourceVersion stayed")
		case apierrors.IsConflict(werr):
			st.Outcome = "conflict"
		case apierrors.IsInvalid(werr) || code == 422:
			st.Outcome = "invalid"
		default:
			st.Outcome = "error"
		}
		if werr == nil {
			if a.res != nil {
				st.RV = a.res.GetResourceVersion()
			} else {
				st.RV = strconv.FormatInt(a.resRV, 10)
			}
		}
		a.e.step(st)
	}
	if a.consumed {
		a.e.afterWrite()
	}
}

// respondWrite is the client receiving the write's answer: done, retry or
// give up.
func (a *actor) respondWrite() {
	s := a.g.spec
	werr := a.werr
	a.req = writeReq{}
	a.g.attempts++
	if werr == nil {
		a.g.successes++
		if !a.consumed {
			a.g.noops++
		}
		a.writes++
		a.next++
		a.endOp(true)
		return
	}
	isApply := s.Method == scenario.MethodApply || s.Method == scenario.MethodApplyForce
	code, _, _ := statusOf(werr)
	switch {
	case apierrors.IsConflict(werr) && isApply:
		a.g.applyConflicts++
	case apierrors.IsConflict(werr):
		a.g.conflicts++
	case code == 422:
		a.g.invalid++
		a.endOp(false)
		return
	default:
		a.g.errors++
		a.endOp(false)
		return
	}
	// client-go's retry.RetryOnConflict retries 409s only.
	if d, ok := a.bo.step(a.rng); ok {
		if a.e.trace {
			a.e.step(Step{Actor: a.name, Verb: "RETRY", Outcome: "info", Note: fmt.Sprintf("conflict: retrying in %s (%s, attempt %d of %d)", fmtDur(d), s.Retry.Policy, a.attempt+1, a.bo.steps())})
		}
		a.e.at(d, a.fnTryOnce)
		return
	}
	a.g.giveUps++
	if a.e.trace {
		note := "gave up: no retry policy"
		if s.Retry.Policy != scenario.RetryNone {
			note = fmt.Sprintf("gave up after %d attempts (%s): RetryOnConflict returns the last 409", a.attempt, s.Retry.Policy)
		}
		a.e.step(Step{Actor: a.name, Verb: "GIVE-UP", Outcome: "giveup", Note: note})
	}
	a.endOp(false)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func (a *actor) endOp(success bool) {
	g := a.g
	retries := a.attempt - 1
	for len(g.retries) <= retries {
		g.retries = append(g.retries, 0)
	}
	g.retries[retries]++
	if success {
		g.latencies = append(g.latencies, a.e.now-a.opStart)
	}
	a.read = nil
	a.e.at(a.think(), a.fnStartOp)
}

// writeReq is one prepared write.
type writeReq struct {
	verb    string
	obj     *unstructured.Unstructured // update
	pt      types.PatchType            // patch
	patch   []byte
	sentRV  string
	note    string
	carries bool // whether the write carries the counter's value from the read
}

func (a *actor) value() any {
	vs := a.g.values
	if len(vs) == 0 {
		return nil
	}
	return vs[a.next%len(vs)]
}

// buildWrite computes the change from the object read and encodes it the
// way the actor's method sends it.
func (a *actor) buildWrite() (writeReq, error) {
	s := a.g.spec
	read := a.read
	// The actor owns the top of what it read (GetShared): it changes it
	// copy-on-write with setPath and hands it to the server (see
	// apiserver.Server.Update), reading old values first.
	rv := read.GetResourceVersion()
	obj := read
	c := s.Change
	path := a.g.path
	var newVal any
	var oldVal, _ = managedfields.GetPath(read.Object, path)
	if c.Insert != "" || a.g.spec.Method == scenario.MethodJSONPatchTest {
		// Old lists and values are still needed after the change.
		oldVal = runtimeCopyValue(oldVal)
	}
	note := ""
	switch {
	case c.Increment != "":
		n, err := asInt(oldVal)
		if err != nil {
			return writeReq{}, fmt.Errorf("increment %s: %v", c.Increment, err)
		}
		if _, isStr := oldVal.(string); isStr {
			newVal = strconv.FormatInt(n+1, 10)
		} else {
			newVal = n + 1
		}
		if a.e.trace {
			note = fmt.Sprintf("%s %v -> %v", c.Increment, display(oldVal), display(newVal))
		}
		if err := managedfields.SetPath(obj.Object, path, newVal); err != nil {
			return writeReq{}, err
		}
	case c.Set != "":
		newVal = a.value()
		if a.e.trace {
			note = fmt.Sprintf("%s = %v", c.Set, display(newVal))
		}
		if err := managedfields.SetPath(obj.Object, path, newVal); err != nil {
			return writeReq{}, err
		}
	case c.Insert != "":
		list, _ := oldVal.([]any)
		if c.At > len(list) {
			return writeReq{}, fmt.Errorf("insert at %d: %s has %d items", c.At, c.Insert, len(list))
		}
		item := a.value()
		if m, ok := item.(map[string]any); ok {
			// Inserted items get a unique name, so list-map keys stay unique.
			if n, ok := m["name"].(string); ok {
				m = runtimeCopy(m)
				m["name"] = fmt.Sprintf("%s-%d", n, a.writes+1)
				item = m
			}
		}
		newList := append(append(append([]any{}, list[:c.At]...), item), list[c.At:]...)
		newVal = newList
		if a.e.trace {
			note = fmt.Sprintf("insert into %s at %d", c.Insert, c.At)
		}
		if err := managedfields.SetPath(obj.Object, path, newList); err != nil {
			return writeReq{}, err
		}
	}
	switch s.Method {
	case scenario.MethodUpdate, scenario.MethodUpdateStatus:
		verb := "PUT"
		if s.Method == scenario.MethodUpdateStatus {
			verb = "PUT /status"
		}
		return writeReq{verb: verb, obj: obj, sentRV: rv, note: note, carries: true}, nil
	case scenario.MethodUpdateUnconditional:
		obj.SetResourceVersion("")
		return writeReq{verb: "PUT", obj: obj, note: joinNote(note, "no resourceVersion: last write wins"), carries: true}, nil
	case scenario.MethodMergePatch, scenario.MethodMergePatchRV, scenario.MethodStrategicMergePatch:
		p := nest(obj.Object, path)
		w := writeReq{verb: "PATCH merge", pt: types.MergePatchType, note: note, carries: true}
		if s.Method == scenario.MethodStrategicMergePatch {
			w.verb, w.pt = "PATCH strategic", types.StrategicMergePatchType
		}
		if s.Method == scenario.MethodMergePatchRV {
			md, _ := p["metadata"].(map[string]any)
			if md == nil {
				md = map[string]any{}
				p["metadata"] = md
			}
			md["resourceVersion"] = rv
			w.sentRV = rv
		}
		b, err := json.Marshal(p)
		w.patch = b
		return w, err
	case scenario.MethodJSONPatch, scenario.MethodJSONPatchTest:
		ptr := pointer(path)
		var ops []map[string]any
		if s.Method == scenario.MethodJSONPatchTest {
			if g := c.Test; g != nil {
				tp, _ := scenario.ParsePath(g.Path)
				tv, err := normalizeValue(g.Value)
				if err != nil {
					return writeReq{}, err
				}
				ops = append(ops, map[string]any{"op": "test", "path": pointer(tp), "value": tv})
			} else {
				ops = append(ops, map[string]any{"op": "test", "path": ptr, "value": oldVal})
			}
		}
		switch {
		case c.Insert != "":
			ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("%s/%d", ptr, c.At), "value": newVal.([]any)[c.At]})
		case oldVal == nil:
			ops = append(ops, map[string]any{"op": "add", "path": ptr, "value": newVal})
		default:
			ops = append(ops, map[string]any{"op": "replace", "path": ptr, "value": newVal})
		}
		b, err := json.Marshal(ops)
		if a.e.trace {
			note = joinNote(note, "at "+ptr)
		}
		return writeReq{verb: "PATCH json", pt: types.JSONPatchType, patch: b, note: note, carries: true}, err
	case scenario.MethodApply, scenario.MethodApplyForce:
		t := a.g.target
		cfg := nest(obj.Object, path)
		cfg["apiVersion"] = t.gvk.GroupVersion().String()
		cfg["kind"] = t.gvk.Kind
		md := map[string]any{"name": t.name}
		if t.namespace != "" {
			md["namespace"] = t.namespace
		}
		cfg["metadata"] = md
		b, err := json.Marshal(cfg)
		verb := "APPLY"
		if s.Method == scenario.MethodApplyForce {
			verb = "APPLY force"
		}
		return writeReq{verb: verb, pt: types.ApplyPatchType, patch: b, note: note, carries: true}, err
	}
	return writeReq{}, fmt.Errorf("method %q writes nothing", s.Method)
}

func display(v any) string {
	switch x := v.(type) {
	case nil:
		return "<none>"
	case string:
		return strconv.Quote(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func runtimeCopyValue(v any) any {
	return runtimeCopy(map[string]any{"v": v})["v"]
}

func runtimeCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) {
			return int64(x), nil
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%v is not an integer", display(v))
}

// nest builds the merge patch {a: {b: v}} of a field path from the changed
// object; a path through a list sends the whole list (merge patch has no
// index).
func nest(obj map[string]any, path fieldpath.Path) map[string]any {
	out := map[string]any{}
	cur := out
	for i, pe := range path {
		if i == len(path)-1 || path[i+1].FieldName == nil {
			v, _ := managedfields.GetPath(obj, path[:i+1])
			cur[*pe.FieldName] = v
			return out
		}
		m := map[string]any{}
		cur[*pe.FieldName] = m
		cur = m
	}
	return out
}

// pointer returns the RFC 6901 JSON pointer of a path.
// (Validation keeps key and value selectors out of JSON patch paths.)
func pointer(path fieldpath.Path) string {
	var b strings.Builder
	for _, pe := range path {
		b.WriteByte('/')
		if pe.Index != nil {
			b.WriteString(strconv.Itoa(*pe.Index))
			continue
		}
		b.WriteString(pointerEscaper.Replace(*pe.FieldName))
	}
	return b.String()
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

func fmtDur(d time.Duration) string {
	return scenarioDuration(d)
}

func scenarioDuration(d time.Duration) string {
	if d >= time.Second || d == 0 {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Microsecond).String()
}
