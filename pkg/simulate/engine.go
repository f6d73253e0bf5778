package simulate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// Config configures a run.
type Config struct {
	// KV is the revision store; nil means a fresh embedded store.
	KV mvcc.WatchKV
	// Trace overrides the scenario's trace setting when set.
	Trace *bool
	// Seed overrides the scenario's seed when non-zero.
	Seed int64
	// KeyPrefix is prepended to every key the run writes; set it when KV
	// is a real etcd so the run stays apart from everything else there.
	KeyPrefix string
	// Rules are the API server's defaulting and validation of the
	// built-in kinds they know (serverrules.Rules, which the command hands
	// in); nil: neither.
	Rules writepath.Rules
}

// Epoch is the wall-clock time virtual time 0 maps to, for timestamps
// written into objects (creationTimestamp, managedFields, Lease times).
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// autoTraceLimit is the largest expected request count for which tracing
// is on by default.
const autoTraceLimit = 20000

// ErrScenario wraps errors caused by the scenario's content (an unknown
// kind, a target that does not exist), as opposed to engine failures.
var ErrScenario = errors.New("invalid scenario")

// Run runs a validated scenario (see scenario.Parse) in virtual time and
// returns its result. The run is deterministic: the same scenario and seed
// give the same Result.
func Run(ctx context.Context, sc *scenario.Scenario, cfg Config) (*Result, error) {
	e, err := newEngine(sc, cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cfg.KV == nil {
			_ = e.kv.Close()
		}
	}()
	if err := e.setup(ctx); err != nil {
		return nil, err
	}
	if err := e.loop(ctx); err != nil {
		return nil, err
	}
	return e.finish(ctx)
}

// event is one scheduled piece of work: fn runs at virtual time at; seq
// orders events due at the same time by when they were scheduled.
type event struct {
	at  time.Duration
	seq uint64
	fn  func(ctx context.Context)
}

// queue is a binary min-heap of events ordered by (at, seq). It is typed
// (no container/heap) so pushing and popping do not box events.
type queue []event

func (q queue) Len() int { return len(q) }

func (q queue) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q *queue) push(ev event) {
	*q = append(*q, ev)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *queue) pop() event {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = event{}
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h.less(l, m) {
			m = l
		}
		if r < n && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// engine is the driver: the virtual clock, the event queue and the seeded
// randomness around the deterministic server and store. It runs on one
// goroutine; events get the run's context as their first parameter.
type engine struct {
	// sc is the validated scenario; seed the seed in effect (sc.Seed or
	// Config.Seed).
	sc   *scenario.Scenario
	seed int64
	// kv is the revision store under srv, the API server's write path.
	kv  mvcc.WatchKV
	srv *apiserver.Server
	// now is the virtual time of the event running; end is sc.Duration.
	now time.Duration
	end time.Duration
	// q holds the scheduled events; seq numbers them in scheduling order.
	q   queue
	seq uint64
	// rng is the engine's own seeded source (each actor has its own).
	rng *rand.Rand
	// trace says whether steps records every request.
	trace bool
	steps []Step

	// groups are the scenario's actors (with their replicas), actors every
	// replica, watchers the replicas among them that watch: every write
	// delivers their events.
	groups   []*group
	actors   []actor
	watchers []*watcher
	// counters are the counter invariants; objects the objects the actors
	// and invariants target, in order of first mention.
	counters []*counter
	objects  []objectRef

	// requests counts the requests sent.
	requests int64
	// startRev is the store revision once the scenario's objects exist.
	startRev int64
	// compactions are the compactions run; revAt the revision at each
	// compaction tick, so each tick compacts to the one an interval earlier.
	compactions []Compaction
	revAt       []int64
	// leader collects leader-election terms and crashes (nil without
	// leader-election actors).
	leader *leaderState
	// err is the first engine failure; the loop stops on it.
	err error
	// shared is true on a real etcd: no compaction, no revision padding.
	shared bool
	// notes say how the run departs from the scenario.
	notes []string
}

// objectRef is an object the actors or invariants target.
type objectRef struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
	// key is the object's store key, which identifies it.
	key string
}

func (o objectRef) String() string {
	return refString(o.gvk, o.namespace, o.name)
}

func refString(gvk schema.GroupVersionKind, ns, name string) string {
	r := gvk.Kind
	if gvk.Group != "" {
		r += "." + gvk.Group
	}
	if ns != "" {
		return r + "/" + ns + "/" + name
	}
	return r + "/" + name
}

func newEngine(sc *scenario.Scenario, cfg Config) (*engine, error) {
	seed := sc.Seed
	if cfg.Seed != 0 {
		seed = cfg.Seed
	}
	kv := cfg.KV
	if kv == nil {
		kv = mvcc.NewDefault()
	}
	var extra []*apiserver.TypeInfo
	for _, t := range sc.Types {
		gv, err := schema.ParseGroupVersion(t.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("%w: types: %v", ErrScenario, err)
		}
		extra = append(extra, apiserver.CustomType(gv.WithKind(t.Kind), t.Resource, !t.ClusterScoped, t.StatusSubresource))
	}
	reg, err := apiserver.NewRegistry(cfg.Rules, extra...)
	if err != nil {
		return nil, fmt.Errorf("%w: types: %v", ErrScenario, err)
	}
	e := &engine{sc: sc, seed: seed, kv: kv, end: sc.Duration.D(), rng: rand.New(rand.NewPCG(uint64(seed), 0x6b7562656374)), shared: cfg.KV != nil}
	var fm apiserver.FieldManager
	if *sc.ManagedFields {
		fm = apiserver.NewManagedFields()
	}
	e.srv, err = apiserver.New(apiserver.Config{KV: kv, Registry: reg, FieldManager: fm, Now: func() time.Time { return Epoch.Add(e.now) }, Exclusive: cfg.KV == nil, KeyPrefix: cfg.KeyPrefix})
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Trace != nil:
		e.trace = *cfg.Trace
	case sc.Trace != nil:
		e.trace = *sc.Trace
	default:
		e.trace = estimateRequests(sc) <= autoTraceLimit
	}
	return e, nil
}

// estimateRequests guesses the request count of a run, to decide whether
// tracing is affordable.
func estimateRequests(sc *scenario.Scenario) float64 {
	total := 0.0
	for _, a := range sc.Actors {
		var per float64
		active := sc.Duration.D()
		if a.Stop != nil {
			active = a.Stop.D()
		}
		active -= a.Start.D()
		switch {
		case a.Method == scenario.MethodLeaderElection:
			per = 2 * active.Seconds() / a.Lease.RetryPeriod.D().Seconds()
		case a.Method == scenario.MethodWatch:
			per = 10
		case a.Writes > 0:
			per = float64(2 * a.Writes)
		case a.Rate > 0:
			per = 2 * a.Rate * active.Seconds()
		default:
			cycle := a.ThinkTime.D() + a.Work.D() + 2*sc.Latency.Max.D()
			per = 2 * float64(active) / float64(max(cycle, time.Microsecond))
		}
		total += per * float64(a.Replicas)
	}
	return total
}

// at schedules fn d after now.
func (e *engine) at(d time.Duration, fn func(context.Context)) {
	e.seq++
	e.q.push(event{at: e.now + d, seq: e.seq, fn: fn})
}

func (e *engine) latency(rng *rand.Rand) time.Duration {
	lo, hi := e.sc.Latency.Min.D(), e.sc.Latency.Max.D()
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// request models one API call: the server handles it half a round trip
// after it is sent, the answer arrives after the full round trip.
func (e *engine) request(rng *rand.Rand, serve, respond func(context.Context)) {
	l := e.latency(rng)
	e.requests++
	e.at(l/2, serve)
	e.at(l, respond)
}

func (e *engine) step(s Step) {
	if !e.trace {
		return
	}
	s.At = scenario.Duration(e.now)
	e.steps = append(e.steps, s)
}

// rev returns the store's current revision; a failure stops the run.
func (e *engine) rev(ctx context.Context) int64 {
	cur, _, err := e.kv.Rev(ctx)
	if err != nil && e.err == nil {
		e.err = err
	}
	return cur
}

func (e *engine) setup(ctx context.Context) error {
	start := e.sc.StartRevision
	// Move the store so the first object is created at StartRevision, as
	// in a cluster that has seen writes before.
	for cur := e.rev(ctx); !e.shared && start > 0 && cur < start-1; cur++ {
		if _, err := e.kv.Put(ctx, "/kubectl-rv/simulate/padding", []byte(strconv.FormatInt(cur, 10)), mvcc.PutOptions{}); err != nil {
			return err
		}
	}
	for i, o := range e.sc.Objects {
		m, err := normalize(o)
		if err != nil {
			return fmt.Errorf("%w: objects[%d]: %v", ErrScenario, i, err)
		}
		u := &unstructured.Unstructured{Object: m}
		t, err := e.srv.Registry().Lookup(u.GroupVersionKind())
		if err != nil {
			return fmt.Errorf("%w: objects[%d]: %v", ErrScenario, i, err)
		}
		if t.Namespaced && u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		if _, err := e.srv.Create(ctx, u, apiserver.WriteOptions{FieldManager: "kubectl-create"}); err != nil {
			return fmt.Errorf("%w: creating objects[%d] %s: %v", ErrScenario, i, u.GetName(), err)
		}
	}
	e.startRev = e.rev(ctx)
	e.revAt = []int64{e.startRev}
	for gi := range e.sc.Actors {
		if err := e.addGroup(ctx, gi); err != nil {
			return err
		}
	}
	for i, inv := range e.sc.Invariants {
		if inv.Counter != nil {
			if _, err := e.counterFor(ctx, inv.Counter.Target, inv.Counter.Path); err != nil {
				return fmt.Errorf("%w: invariants[%d]: %v", ErrScenario, i, err)
			}
		}
	}
	for _, g := range e.groups {
		g.onTarget = e.countersOn(g.target.key)
	}
	if ci := e.sc.CompactionInterval.D(); ci > 0 {
		if e.shared {
			e.notes = append(e.notes, "compaction is not simulated on a real etcd: it would discard the history of every key there, not only the simulation's")
		} else {
			e.at(ci, e.compactTick)
		}
	}
	for _, a := range e.actors {
		a.begin()
	}
	return nil
}

// normalize turns YAML-decoded values into the JSON types the API server
// works with (int64, float64, map[string]any).
func normalize(o map[string]any) (map[string]any, error) {
	b, err := utiljson.Marshal(o)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func normalizeValue(v any) (any, error) {
	m, err := normalize(map[string]any{"v": v})
	if err != nil {
		return nil, err
	}
	return m["v"], nil
}

// compactTick is kube-apiserver's compactor: every interval it compacts to
// the revision it saw one interval earlier.
func (e *engine) compactTick(ctx context.Context) {
	ci := e.sc.CompactionInterval.D()
	prev := e.revAt[len(e.revAt)-1]
	e.revAt = append(e.revAt, e.rev(ctx))
	if _, compacted, _ := e.kv.Rev(ctx); prev > compacted {
		if err := e.srv.Compact(ctx, prev); err != nil && !errors.Is(err, mvcc.ErrCompacted) {
			e.err = err
			return
		}
		e.compactions = append(e.compactions, Compaction{At: scenario.Duration(e.now), Revision: prev})
		e.step(Step{Actor: "kube-apiserver", Verb: "COMPACT", RV: strconv.FormatInt(prev, 10), Code: 200, Outcome: "info",
			Note: fmt.Sprintf("compacted the store to revision %d (the revision seen %s ago)", prev, ci)})
	}
	e.at(ci, e.compactTick)
}

func (e *engine) loop(ctx context.Context) error {
	n := 0
	for e.q.Len() > 0 {
		ev := e.q.pop()
		if ev.at > e.end {
			break
		}
		e.now = ev.at
		ev.fn(ctx)
		if e.err != nil {
			return e.err
		}
		if n++; n&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if e.idle() {
			break
		}
	}
	return nil
}

// idle reports whether nothing but background ticks remain: every actor
// has finished.
func (e *engine) idle() bool {
	for _, a := range e.actors {
		if !a.finished() {
			return false
		}
	}
	return true
}

// afterWrite runs after every write the server handled: the watchers take
// the events it caused.
func (e *engine) afterWrite() {
	for _, w := range e.watchers {
		w.poll()
	}
}

func statusOf(err error) (code int, reason, msg string) {
	if err == nil {
		return 200, "", ""
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		return int(st.Code), string(st.Reason), st.Message
	}
	return 500, "InternalError", err.Error()
}

// finish reads the final state and builds the Result.
func (e *engine) finish(ctx context.Context) (*Result, error) {
	res := &Result{
		Scenario:      e.sc.Name,
		Description:   e.sc.Description,
		Seed:          e.seed,
		Duration:      e.sc.Duration,
		End:           scenario.Duration(e.now),
		StartRevision: e.startRev,
		FinalRevision: e.rev(ctx),
		Requests:      e.requests,
		Compactions:   e.compactions,
		Steps:         e.steps,
		Notes:         e.notes,
	}
	var err error
	if res.Objects, err = e.objectStates(ctx); err != nil {
		return nil, err
	}
	if res.Invariants, err = e.checkInvariants(ctx); err != nil {
		return nil, err
	}
	for _, g := range e.groups {
		res.Actors = append(res.Actors, g.report())
	}
	if e.leader != nil {
		res.Leadership = e.leader.report(e)
	}
	return res, nil
}

// objectStates returns the final resourceVersion and generation of each
// target object and the revisions the actors' writes to it took.
func (e *engine) objectStates(ctx context.Context) ([]ObjectState, error) {
	var out []ObjectState
	for _, o := range e.objects {
		u, err := e.srv.Get(ctx, o.gvk, o.namespace, o.name)
		st := ObjectState{Ref: o.String()}
		if err == nil {
			st.ResourceVersion = u.GetResourceVersion()
			st.Generation = u.GetGeneration()
		} else if apierrors.IsNotFound(err) {
			st.ResourceVersion = "deleted"
		} else {
			return nil, err
		}
		out = append(out, st)
	}
	for _, o := range e.objects {
		n := 0
		for _, g := range e.groups {
			if g.target.key == o.key {
				n += g.revisions
			}
		}
		for i := range out {
			if out[i].Ref == o.String() {
				out[i].Writes = n
			}
		}
	}
	return out, nil
}

// checkInvariants checks the counters, then the scenario's equals
// invariants.
func (e *engine) checkInvariants(ctx context.Context) ([]InvariantResult, error) {
	var out []InvariantResult
	for _, c := range e.counters {
		inv, err := c.check(ctx, e)
		if err != nil {
			return nil, err
		}
		out = append(out, inv)
	}
	for i, inv := range e.sc.Invariants {
		if inv.Equals == nil {
			continue
		}
		r, err := e.checkEquals(ctx, inv.Equals)
		if err != nil {
			return nil, fmt.Errorf("%w: invariants[%d]: %v", ErrScenario, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	i = min(max(i, 0), len(sorted)-1)
	return sorted[i]
}

func histogramOf(ds []time.Duration) []LatencyBucket {
	if len(ds) == 0 {
		return nil
	}
	counts := make([]int, len(LatencyBounds)+1)
	for _, d := range ds {
		i := sort.Search(len(LatencyBounds), func(i int) bool { return d <= LatencyBounds[i] })
		counts[i]++
	}
	out := make([]LatencyBucket, 0, len(counts))
	for i, c := range counts {
		var le time.Duration
		if i < len(LatencyBounds) {
			le = LatencyBounds[i]
		}
		out = append(out, LatencyBucket{Le: scenario.Duration(le), Count: c})
	}
	return out
}

func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return Latency{
		Count: len(s),
		P50:   scenario.Duration(percentile(s, 50)),
		P95:   scenario.Duration(percentile(s, 95)),
		P99:   scenario.Duration(percentile(s, 99)),
		Max:   scenario.Duration(s[len(s)-1]),
	}
}
