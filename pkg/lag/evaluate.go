package lag

import (
	"fmt"
	"time"
)

// typeScan accumulates one type's objects into its summary and items.
type typeScan struct {
	t   Target
	cfg Config
	now time.Time
	sum TypeSummary
	// items are the objects the report shows: not current, or all with
	// Config.All. Memory grows with these, not with the objects scanned.
	items []Item
}

func newTypeScan(t Target, cfg Config, now time.Time) *typeScan {
	return &typeScan{t: t, cfg: cfg, now: now, sum: TypeSummary{
		Group: t.Resource.Group, Version: t.Resource.Version, Resource: t.Resource.Resource,
		Kind: t.Kind, Namespaced: t.Namespaced, ReportsObservedGeneration: t.Expected,
	}}
}

func (ts *typeScan) add(o Object) {
	c := classify(ts.cfg, ts.t, o)
	ts.sum.Objects++
	ts.sum.count(c.State, 1)
	if o.ObservedGeneration != nil || len(o.Conditions) > 0 {
		ts.sum.ReportsObservedGeneration = true
	}
	if !ts.cfg.All && (c.State == Current || c.State == NoGeneration) {
		return
	}
	ts.items = append(ts.items, newItem(ts.t, o, c, ts.now))
}

// finish decides which never-observed objects count, now that the whole
// type has been seen, and counts the findings.
func (ts *typeScan) finish() {
	ts.sum.Findings = 0
	for i := range ts.items {
		it := &ts.items[i]
		it.expected = ts.sum.ReportsObservedGeneration
		it.Finding = isFinding(*it, ts.cfg, ts.now)
		it.Explanations = explain(*it, ts.t)
		if it.Finding {
			ts.sum.Findings++
		}
	}
}

// isFinding applies the thresholds: a lagging object counts when its lag is
// above MaxLag; a never-observed one when its type is known to report an
// observedGeneration; one not rolled out (Config.For RolledOut) always;
// each only once its spec is MinAge old.
func isFinding(it Item, cfg Config, now time.Time) bool {
	if now.Sub(it.SpecChangedAt) < cfg.MinAge {
		return false
	}
	switch it.State {
	case Lagging:
		return it.Lag > cfg.MaxLag
	case NeverObserved:
		return it.expected
	case RollingOut, Paused, Stalled:
		return true
	}
	return false
}

func newItem(t Target, o Object, c Classification, now time.Time) Item {
	it := Item{
		APIVersion:         t.Resource.GroupVersion().String(),
		Kind:               t.Kind,
		Resource:           t.Name(),
		Namespace:          o.Namespace,
		Name:               o.Name,
		UID:                o.UID,
		Generation:         o.Generation,
		ObservedGeneration: o.ObservedGeneration,
		Lag:                c.Lag,
		State:              c.State,
		LaggingConditions:  c.LaggingConditions,
		Rollout:            c.Rollout,
		SpecChangedAt:      o.Created,
		SpecSource:         "creationTimestamp",
	}
	if w, err := o.Writers(); err == nil {
		if !w.SpecTime.IsZero() {
			it.SpecChangedAt, it.SpecSource, it.SpecManager = w.SpecTime, "managedFields", w.SpecManager
		}
		if w.SpecUntimed {
			// A spec write without a time (kubectl scale) is the newest
			// we know of; the controller's last status write, which did
			// not observe it, is the best lower bound of when it happened.
			it.SpecSource = "managedFields-estimate"
			for _, t := range []time.Time{w.SpecTime, w.StatusTime} {
				if t.After(it.SpecChangedAt) {
					it.SpecChangedAt = t
				}
			}
			it.SpecManager = w.UntimedManager
		}
		it.Observer = w.Observer
	}
	it.AgeSeconds = int64(max(now.Sub(it.SpecChangedAt), 0) / time.Second)
	return it
}

// explain says what the state means for the tools people gate on.
func explain(it Item, t Target) []string {
	var out []string
	gen := int64(0)
	if it.Generation != nil {
		gen = *it.Generation
	}
	switch it.State {
	case Lagging:
		if it.ObservedGeneration != nil && *it.ObservedGeneration < gen {
			who := "its controller"
			if it.Observer != "" {
				who = it.Observer
			}
			out = append(out, fmt.Sprintf("%s has observed generation %d of %d", who, *it.ObservedGeneration, gen))
			if rolloutKinds[t.Resource.Group+"/"+t.Kind] {
				out = append(out, fmt.Sprintf("kubectl rollout status will wait until status.observedGeneration reaches %d", gen))
			}
		} else if len(it.LaggingConditions) > 0 {
			out = append(out, "kstatus-based tools (Flux, kpt) check only status.observedGeneration and will report this object as Current while its conditions lag")
		}
		for _, c := range it.LaggingConditions {
			out = append(out, fmt.Sprintf("kubectl wait --for=condition=%s will block until the condition's observedGeneration reaches %d", c.Type, gen))
		}
	case RollingOut:
		out = append(out, "not rolled out: "+it.Rollout)
	case Paused:
		out = append(out, "paused: "+it.Rollout+"; kubectl rollout status and lag --wait wait until it is resumed (kubectl rollout resume)")
	case Stalled:
		out = append(out, "stalled: "+it.Rollout)
	case NeverObserved:
		out = append(out, "kstatus-based tools (Flux, kpt) will report this object as Current because it has no observedGeneration")
		if !it.expected {
			out = append(out, "no object of this type reports an observedGeneration, so whether its controller has seen the spec cannot be told")
		}
	}
	return out
}
