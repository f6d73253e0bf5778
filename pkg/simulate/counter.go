package simulate

import (
	"context"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// counter is a counter invariant: the integer at path of one object must end
// at its start value plus the successful increments. To tell which actor's
// increments were lost, each state of the object carries a vector: how many
// increments of each incrementing actor it contains. A write computed from a
// state read earlier carries that state's vector (plus its own increment),
// so a stale write rolls the vector back exactly as it rolls the value back.
//
// Example: the counter is 0 with vector [0 0]. A and B read it. B writes 1:
// vector [0 1]. A writes 1 from its stale read: vector [1 0]. The value is
// 1, successes are 2, and B's increment is the lost one.
type counter struct {
	// target and path say where the counter is; pathText is the path's
	// short form, which names the invariant.
	target   objectRef
	path     fieldpath.Path
	pathText string
	// groups are the actors that increment it; index gives each one's
	// position in vec and successes.
	groups []*group
	index  map[*group]int
	// vec is the vector of the object's current state: how many
	// increments of each group it contains.
	vec []int64
	// successes counts each group's accepted increments.
	successes []int
	// start is the counter's value before the run.
	start int64
}

func (e *engine) counterFor(ctx context.Context, ref scenario.Ref, path string) (*counter, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(ref.Kind)
	t, err := e.srv.Registry().Lookup(gvk)
	if err != nil {
		return nil, err
	}
	ns := ref.Namespace
	if t.Namespaced && ns == "" {
		ns = "default"
	}
	o := e.object(t, gvk, ns, ref.Name)
	p, err := scenario.ParsePath(path)
	if err != nil {
		return nil, err
	}
	for _, c := range e.counters {
		if c.target.key == o.key && c.pathText == managedfields.ShortPathString(p) {
			return c, nil
		}
	}
	c := &counter{target: o, path: p, pathText: managedfields.ShortPathString(p), index: map[*group]int{}}
	u, err := e.srv.Get(ctx, gvk, ns, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("counter %s %s: %v", o, path, err)
	}
	v, _ := managedfields.GetPath(u.Object, p)
	if c.start, err = asInt(v); err != nil {
		return nil, fmt.Errorf("counter %s %s: %v", o, path, err)
	}
	e.counters = append(e.counters, c)
	return c, nil
}

func (c *counter) add(g *group) {
	if _, ok := c.index[g]; ok {
		return
	}
	c.index[g] = len(c.groups)
	c.groups = append(c.groups, g)
	c.vec = append(c.vec, 0)
	c.successes = append(c.successes, 0)
	g.counters = append(g.counters, c)
}

func (e *engine) countersOn(key string) []*counter {
	var out []*counter
	for _, c := range e.counters {
		if c.target.key == key {
			out = append(out, c)
		}
	}
	return out
}

// commitCounters runs when the server accepted the actor's write; changed
// is false for a no-op write, which the client counts as a success but
// which changed nothing: its increment is lost.
func (w *writer) commitCounters(carries, changed bool) {
	g := w.group
	for i, c := range g.onTarget {
		gi, incr := c.index[g]
		incr = incr && g.spec.Change.Increment != "" && g.pathText == c.pathText
		if incr {
			c.successes[gi]++
		}
		if !changed || !carries || i >= len(w.readVectors) {
			continue
		}
		copy(c.vec, w.readVectors[i])
		if incr {
			c.vec[gi]++
		}
	}
}

func (c *counter) check(ctx context.Context, e *engine) (InvariantResult, error) {
	expected := c.start
	for _, n := range c.successes {
		expected += int64(n)
	}
	r := c.compare(ctx, e, expected)
	vacuous(&r, expected == c.start)
	return r, nil
}

// compare compares the counter's final value with the expected one.
func (c *counter) compare(ctx context.Context, e *engine, expected int64) InvariantResult {
	r := InvariantResult{Name: fmt.Sprintf("counter %s %s", c.target, c.pathText), Expected: strconv.FormatInt(expected, 10)}
	u, err := e.srv.Get(ctx, c.target.gvk, c.target.namespace, c.target.name)
	if err != nil {
		r.Actual = "object gone"
		r.Lost = int(expected - c.start)
		return r
	}
	v, _ := managedfields.GetPath(u.Object, c.path)
	n, err := asInt(v)
	if err != nil {
		r.Actual = display(v)
		return r
	}
	r.Actual = strconv.FormatInt(n, 10)
	r.Lost = int(expected - n)
	r.Held = r.Lost == 0
	return r
}

func (e *engine) checkEquals(ctx context.Context, q *scenario.Equals) (InvariantResult, error) {
	gv, err := schema.ParseGroupVersion(q.Target.APIVersion)
	if err != nil {
		return InvariantResult{}, err
	}
	gvk := gv.WithKind(q.Target.Kind)
	t, err := e.srv.Registry().Lookup(gvk)
	if err != nil {
		return InvariantResult{}, err
	}
	ns := q.Target.Namespace
	if t.Namespaced && ns == "" {
		ns = "default"
	}
	p, err := scenario.ParsePath(q.Path)
	if err != nil {
		return InvariantResult{}, err
	}
	want, err := normalizeValue(q.Value)
	if err != nil {
		return InvariantResult{}, err
	}
	r := InvariantResult{Name: fmt.Sprintf("equals %s %s", refString(gvk, ns, q.Target.Name), managedfields.ShortPathString(p)), Expected: display(want)}
	u, err := e.srv.Get(ctx, gvk, ns, q.Target.Name)
	if err != nil {
		r.Actual = "object gone"
		return r, nil
	}
	got, ok := managedfields.GetPath(u.Object, p)
	if !ok {
		r.Actual = "<absent>"
		return r, nil
	}
	r.Actual = display(got)
	r.Held = r.Actual == r.Expected
	written := 0
	for _, g := range e.groups {
		if g.target.key == t.Key(ns, q.Target.Name) {
			written += g.successes
		}
	}
	vacuous(&r, written == 0)
	return r, nil
}

// vacuous marks r as not held when nothing was written: values that
// match because no write got through do not show that writes are safe.
func vacuous(r *InvariantResult, nothingWritten bool) {
	if nothingWritten {
		r.Held = false
		r.Reason = ReasonNothingWritten
	}
}
