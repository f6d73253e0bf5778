package leases

import (
	"fmt"
	"sort"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Tracker is the deterministic core of a watch of Leases: it consumes
// follow.Events one at a time (Observe), notices expiries as time passes
// (Tick) and returns the report so far (Report). It is not safe for
// concurrent use.
//
// Example: Lease kube-system/sched, 15s, held by a renewing every 2s
// (renewTime 10:00:00, :02, :04). a stops; b's update at 10:00:21.3 sets
// holderIdentity b, acquireTime 10:00:21.3. Observe counts two renewals
// (intervals 2s, slack 13s), and a takeover from a to b at 10:00:21.3
// after expiry (a's lease ran out at 10:00:19, unheld 2.3s); Tick at
// 10:00:19.5, had it come first, would have recorded the same expiry once.
type Tracker struct {
	book
	began  time.Time
	locks  map[LockRef]*holding
	gaps   []follow.Gap
	events int
	// warnings are the problems found in the objects (a field of the
	// wrong type), not the driver's.
	warnings []string
}

// NewTracker returns a tracker that started at start.
func NewTracker(cfg Config, start time.Time) *Tracker {
	return &Tracker{book: book{cfg: cfg}, began: start, locks: map[LockRef]*holding{}}
}

// Observe takes one event of the watch of Leases.
func (t *Tracker) Observe(ev follow.Event) {
	t.events++
	switch ev.Type {
	case follow.Synced:
		if ev.Reason == follow.SyncRelist {
			g := follow.GapOf(ev)
			t.gaps = append(t.gaps, g)
			t.moment(Moment{Time: ev.Time, What: MomentGap, Detail: fmt.Sprintf("history after resourceVersion %s lost; relisted at %s", g.From, g.To)})
		}
		return
	case follow.Bookmark:
		return
	}
	u := ev.Object
	if u == nil || !t.cfg.wanted(u.GetNamespace(), u.GetName()) {
		return
	}
	ref := LockRef{Kind: KindLease, Namespace: u.GetNamespace(), Name: u.GetName()}
	rec, err := LeaseRecord(u)
	if err != nil && len(t.warnings) < 100 {
		t.warnings = append(t.warnings, fmt.Sprintf("lease %s: %v", ref, err))
	}
	h := t.locks[ref]
	switch {
	case ev.Type == follow.Deleted:
		if h != nil && !h.deleted {
			t.moment(Moment{Time: ev.Time, Lock: ref, What: MomentDeleted, Holder: h.holder})
			h.end(ev.Time)
			h.deleted, h.holder = true, ""
		}
	case h == nil:
		h = &holding{ref: ref, duration: rec.Duration, rec: rec}
		t.locks[ref] = h
		if rec.Holder == "" {
			return
		}
		if ev.Type == follow.Added {
			t.takeover(h, rec.Holder, first(rec.Acquire, rec.Renew, ev.Time))
		} else {
			t.start(h, rec.Holder, first(rec.Acquire, rec.Renew, ev.Time))
		}
		h.lastRenew = first(rec.Renew, h.lastRenew)
	default:
		h.deleted = false
		t.update(h, rec, ev.Time, ev.Type == follow.List)
	}
}

// update compares a Lease's new record with what was known. A relist
// (resync) does not count a renewal: its interval spans the gap.
func (t *Tracker) update(h *holding, rec Record, at time.Time, resync bool) {
	h.rec = rec
	switch {
	case rec.Holder == "":
		t.release(h, first(rec.Renew, at))
	case rec.Holder != h.holder:
		t.takeover(h, rec.Holder, first(rec.Acquire, rec.Renew, at))
		h.lastRenew = first(rec.Renew, h.lastRenew)
	case resync:
		h.lastRenew = first(rec.Renew, h.lastRenew)
	case !rec.Renew.IsZero():
		t.renew(h, rec.Renew)
	}
	h.duration = rec.Duration
}

// first returns the first non-zero time.
func first(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// Tick records the expiries of the Leases not renewed by now.
func (t *Tracker) Tick(now time.Time) {
	for _, h := range t.locks {
		if !h.deleted {
			t.checkExpiry(h, now)
		}
	}
}

// Report returns what the tracker saw from its start until end.
func (t *Tracker) Report(end time.Time) *Report {
	t.Tick(end)
	rep := &Report{Mode: ModeLive, Start: t.began, End: end, Events: t.events, Gaps: t.gaps}
	rep.Warnings = append(rep.Warnings, t.warnings...)
	for _, h := range t.locks {
		rep.Locks = append(rep.Locks, t.lock(h, end, false))
	}
	t.fill(rep)
	return rep
}

// fill copies the book's findings into rep, in time order.
func (b *book) fill(rep *Report) {
	sortLocks(rep.Locks)
	rep.Takeovers = append([]Takeover(nil), b.takeovers...)
	sort.SliceStable(rep.Takeovers, func(i, j int) bool { return rep.Takeovers[i].Time.Before(rep.Takeovers[j].Time) })
	rep.Expiries = append([]Expiry(nil), b.expiries...)
	sort.SliceStable(rep.Expiries, func(i, j int) bool { return rep.Expiries[i].At.Before(rep.Expiries[j].At) })
	for _, a := range b.acting {
		rep.Acting = append(rep.Acting, *a)
	}
	rep.Timeline = append([]Moment(nil), b.moments...)
	sort.SliceStable(rep.Timeline, func(i, j int) bool { return rep.Timeline[i].Time.Before(rep.Timeline[j].Time) })
	rep.MomentsDropped = b.dropped
	rep.emptyLists()
}
