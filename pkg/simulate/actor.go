package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// group is one actor of the scenario with its replicas; it accumulates the
// report.
type group struct {
	// idx is the actor's index in the scenario, spec the actor itself.
	idx  int
	spec *scenario.Actor
	// target is the object the actor works on; ref is target.String(),
	// computed once.
	target objectRef
	ref    string
	// path is the changed field (nil for leader election and watch),
	// pathText its short form.
	path     fieldpath.Path
	pathText string
	// values are the values a set or insert writes, in turn, in the API
	// server's JSON types.
	values []any
	// onTarget are the counters on the target object (set after setup);
	// counters those this group increments.
	onTarget []*counter
	counters []*counter

	// The report's counts (see ActorReport); revisions counts the store
	// revisions the group's writes took, retries is the histogram of
	// retries per operation, latencies those of successful operations.
	operations, attempts, successes, noops int
	conflicts, applyConflicts, invalid     int
	errors, giveUps, revisions             int
	retries                                []int
	latencies                              []time.Duration

	// The leader-election counts.
	acquisitions, renewals int
	// The watch counts; lastRV is the last resourceVersion a watcher saw.
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

func (e *engine) addGroup(ctx context.Context, gi int) error {
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
	if err := g.prepareChange(); err != nil {
		return fmt.Errorf("%w: actor %q: %v", ErrScenario, s.Name, err)
	}
	if err := e.checkChange(ctx, g); err != nil {
		return fmt.Errorf("%w: actor %q: %v", ErrScenario, s.Name, err)
	}
	if s.Method == scenario.MethodLeaderElection && e.leader == nil {
		e.leader = &leaderState{}
	}
	if s.Change.Increment != "" {
		c, err := e.counterFor(ctx, s.Target, s.Change.Increment)
		if err != nil {
			return fmt.Errorf("%w: actor %q: %v", ErrScenario, s.Name, err)
		}
		c.add(g)
	}
	e.groups = append(e.groups, g)
	e.addReplicas(g)
	return nil
}

// prepareChange parses the changed path and normalizes the values to write.
func (g *group) prepareChange() error {
	c := g.spec.Change
	if p := c.Increment + c.Set + c.Insert; p != "" {
		var err error
		if g.path, err = scenario.ParsePath(p); err != nil {
			return err
		}
		g.pathText = managedfields.ShortPathString(g.path)
	}
	vals := c.Values
	if c.Value != nil {
		vals = []any{c.Value}
	}
	for _, v := range vals {
		nv, err := normalizeValue(v)
		if err != nil {
			return fmt.Errorf("value: %v", err)
		}
		g.values = append(g.values, nv)
	}
	return nil
}

// addReplicas creates the group's clients, each with its own seeded source.
func (e *engine) addReplicas(g *group) {
	s := g.spec
	for r := 0; r < s.Replicas; r++ {
		name := s.Name
		if s.Replicas > 1 {
			name = fmt.Sprintf("%s-%d", s.Name, r+1)
		}
		fm := s.FieldManager
		if fm == "" {
			fm = name
		}
		c := client{eng: e, group: g, name: name, manager: fm, rng: rand.New(rand.NewPCG(uint64(e.seed), uint64(g.idx)<<20|uint64(r)))}
		switch s.Method {
		case scenario.MethodLeaderElection:
			e.actors = append(e.actors, &candidate{client: c})
		case scenario.MethodWatch:
			w := &watcher{client: c}
			e.actors = append(e.actors, w)
			e.watchers = append(e.watchers, w)
		default:
			e.actors = append(e.actors, newWriter(c))
		}
	}
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

// actor is one simulated client: one replica of a scenario actor. A
// writer reads and writes its target with the actor's method and retry
// policy, a candidate runs client-go's leader election on a Lease, a
// watcher is an informer's reflector (list, watch, relist on 410).
type actor interface {
	// begin schedules the actor's first events.
	begin()
	// finished reports whether the actor will do nothing more.
	finished() bool
}

var (
	_ actor = (*writer)(nil)
	_ actor = (*candidate)(nil)
	_ actor = (*watcher)(nil)
)

// client is what every kind of actor has.
type client struct {
	// eng schedules the client's events and holds the server.
	eng *engine
	// group is the scenario actor this client is a replica of.
	group *group
	// name is the replica's name (the actor's, or actor-N); manager its
	// field manager.
	name    string
	manager string
	// rng is the replica's own seeded source: latencies, think times,
	// jitter.
	rng *rand.Rand
	// done is set when the client stops for good.
	done bool
}

func (c *client) finished() bool { return c.done }

// stopAt is the virtual time the client stops at.
func (c *client) stopAt() time.Duration {
	if c.group.spec.Stop != nil {
		return c.group.spec.Stop.D()
	}
	return c.eng.end
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
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

func fmtDur(d time.Duration) string {
	if d >= time.Second || d == 0 {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Microsecond).String()
}
