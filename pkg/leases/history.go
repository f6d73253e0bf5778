package leases

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// History reads the Lease writes of audit logs and returns the same
// timeline a watch gives, from the past: a successful write to a Lease by
// another writer than the last is a takeover; 409s are candidates trying;
// a holder's successive successful writes are its renewals. An audit log
// at Metadata level has no bodies, so the holder is the writer, named as
// kubectl rv conflicts names it (audit.WriterOf: user, field manager,
// pod), and the lease duration is cfg's.
//
// It also finds the writes a former holder made to other objects after it
// lost a lock (after its last renewal plus the lease duration, or after
// another took over, whichever was first): the window in which two
// replicas acted as leader. Writes to Leases and Events are not counted:
// candidates write those as candidates.
func History(ctx context.Context, sources []audit.Source, cfg Config) (*Report, error) {
	h := NewHistory(cfg)
	dedup := audit.NewDedup()
	for _, src := range sources {
		_, err := audit.Decode(ctx, src, audit.Options{Workers: 2, Reuse: true}, func(e *audit.Event) error {
			if dedup.First(e) {
				h.Add(e)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	rep := h.Report()
	for _, w := range rep.Warnings {
		cfg.warnf("%s", w)
	}
	return rep, nil
}

// HistoryBuilder is History's core: it takes audit events one at a time,
// in the order the log has them.
//
// Example (lease 15s): a@10:00:00, a@10:00:02 (renewal, 2s), b 409
// @10:00:03 (b tries), b@10:00:19.5 (takeover from a, 2.5s after a's lease
// expired at 10:00:17), a writes configmap c @10:00:21 (acting while not
// leader: a lost the lock at 10:00:17, expired).
type HistoryBuilder struct {
	book
	locks map[LockRef]*holding
	// byWriter are the locks each writer held at some time.
	byWriter map[string][]*holding
	// sharing is each writer's evidence of being shared by several
	// clients (audit.Sharing); lastDone is when the last write of a
	// Lease writer or a holder to an object completed, for overlaps.
	sharing  map[string]*audit.Sharing
	lastDone map[writerObject]time.Time
	// strs interns the strings kept: the decoder reuses its memory
	// (audit.Options.Reuse), so nothing of an event is kept uncopied.
	strs        map[string]string
	first, last time.Time
	events      int
}

// NewHistory returns an empty HistoryBuilder.
func NewHistory(cfg Config) *HistoryBuilder {
	return &HistoryBuilder{book: book{cfg: cfg}, locks: map[LockRef]*holding{}, byWriter: map[string][]*holding{}, strs: map[string]string{},
		sharing: map[string]*audit.Sharing{}, lastDone: map[writerObject]time.Time{}}
}

// str returns a copy of s that outlives the event s is from.
func (b *HistoryBuilder) str(s string) string {
	if c, ok := b.strs[s]; ok {
		return c
	}
	c := strings.Clone(s)
	b.strs[c] = c
	return c
}

// Add takes one event.
func (b *HistoryBuilder) Add(e *audit.Event) {
	if !slices.Contains(audit.WriteVerbs, e.Verb) || audit.DryRun(e) || e.ObjectRef.Resource == "" || !b.cfg.Window.Holds(e.RequestReceived) {
		return
	}
	b.events++
	t := e.StageTimestamp
	if b.first.IsZero() || t.Before(b.first) {
		b.first = t
	}
	if t.After(b.last) {
		b.last = t
	}
	ref := &e.ObjectRef
	lease := ref.Resource == "leases" && ref.APIGroup == "coordination.k8s.io"
	if lease && (ref.Name == "" || ref.Subresource != "" || !b.cfg.wanted(ref.Namespace, ref.Name)) {
		return
	}
	w := b.str(audit.WriterOf(e).String())
	b.evidence(w, e, lease)
	if lease {
		b.leaseWrite(e, w, t)
		return
	}
	if e.Code/100 != 2 || ref.Resource == "events" {
		return
	}
	for _, h := range b.byWriter[w] {
		b.otherWrite(h, w, e, t)
	}
}

// writerObject is a writer and an object it wrote (objectName).
type writerObject struct{ writer, object string }

// evidence notes what e shows of whether its writer w is shared
// (audit.Sharing): its user agent, whether it is kubectl outside a pod,
// and, for the writers of the Leases
// and the holders, whether it overlapped w's previous write to the same
// object. Other writers' objects are not kept: they can prove nothing
// about a lock.
func (b *HistoryBuilder) evidence(w string, e *audit.Event, lease bool) {
	s := b.sharing[w]
	if s == nil {
		s = &audit.Sharing{}
		b.sharing[w] = s
	}
	s.SawUserAgent(e.UserAgent)
	if e.PodName == "" && strings.HasPrefix(e.UserAgent, "kubectl/") {
		s.SawKubectl()
	}
	if !lease && len(b.byWriter[w]) == 0 {
		return
	}
	k := writerObject{w, b.str(objectName(e))}
	prev, ok := b.lastDone[k]
	if ok && audit.Overlaps(prev, e.RequestReceived) {
		s.SawOverlap()
	}
	if e.StageTimestamp.After(prev) {
		b.lastDone[k] = e.StageTimestamp
	}
}

// leaseWrite takes a write to a Lease.
func (b *HistoryBuilder) leaseWrite(e *audit.Event, w string, t time.Time) {
	ref := LockRef{Kind: KindLease, Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name}
	h := b.locks[ref]
	if h == nil {
		ref.Namespace, ref.Name = b.str(ref.Namespace), b.str(ref.Name)
		h = &holding{ref: ref, duration: b.cfg.durationOf(ref), former: map[string]*loss{}, tries: map[string]int{}}
		b.locks[ref] = h
	}
	switch {
	case e.Code == 409:
		h.stats.conflicts++
		h.tries[w]++
		return
	case e.Code/100 != 2:
		return
	case e.Verb == "delete":
		b.moment(Moment{Time: t, Lock: ref, What: MomentDeleted, Holder: h.holder})
		b.release(h, t)
		return
	}
	h.deleted = false
	switch {
	case h.holder == w:
		b.renew(h, t)
	case h.last == "":
		b.start(h, w, t)
		b.moment(Moment{Time: t, Lock: ref, What: MomentAcquired, Holder: w, Detail: "first write in the log"})
	default:
		b.takeover(h, w, t)
	}
	b.heldBy(h, w)
}

// heldBy indexes h under its holder w.
func (b *HistoryBuilder) heldBy(h *holding, w string) {
	for _, x := range b.byWriter[w] {
		if x == h {
			return
		}
	}
	b.byWriter[w] = append(b.byWriter[w], h)
}

// otherWrite takes a successful write by w, a present or former holder of
// h, to an object that is not a Lease. w is interned.
func (b *HistoryBuilder) otherWrite(h *holding, w string, e *audit.Event, t time.Time) {
	var win **Acting
	var lastRenew, lostAt time.Time
	var reason string
	switch {
	case h.holder == w:
		exp := h.lastRenew.Add(h.duration)
		if h.duration <= 0 || !t.After(exp) {
			return
		}
		win, lastRenew, lostAt, reason = &h.expiredWindow, h.lastRenew, exp, "expired"
	default:
		l := h.former[w]
		if l == nil || !t.After(l.lostAt) {
			return
		}
		win, lastRenew, lostAt, reason = &l.window, l.lastRenew, l.lostAt, l.reason
		if reason == "taken over" {
			reason = "taken over by " + h.holder
		}
	}
	if *win == nil {
		*win = &Acting{Lock: h.ref, Writer: w, LastRenew: lastRenew, LostAt: lostAt, Reason: reason, First: t}
		b.acting = append(b.acting, *win)
		b.moment(Moment{Time: t, Lock: h.ref, What: MomentActing, Holder: w, Detail: fmt.Sprintf("%s after it lost the lock (%s)", round(t.Sub(lostAt)), reason)})
	}
	a := *win
	a.Writes++
	a.Last = t
	obj := objectName(e)
	if len(a.Objects) < b.cfg.MaxActingObjects && !contains(a.Objects, obj) {
		a.Objects = append(a.Objects, obj)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// objectName is resource[.group] [namespace/]name, as kubectl names it.
func objectName(e *audit.Event) string {
	r := &e.ObjectRef
	var s strings.Builder
	s.WriteString(r.Resource)
	if r.APIGroup != "" {
		s.WriteString("." + r.APIGroup)
	}
	if r.Subresource != "" {
		s.WriteString("/" + r.Subresource)
	}
	s.WriteString(" ")
	if r.Namespace != "" {
		s.WriteString(r.Namespace + "/")
	}
	s.WriteString(r.Name)
	return s.String()
}

// Report returns the history so far: the report spans the first to the
// last write read.
func (b *HistoryBuilder) Report() *Report {
	rep := &Report{Mode: ModeHistory, Start: b.first, End: b.last, Events: b.events}
	for _, h := range b.locks {
		b.checkExpiry(h, b.last)
		l := b.lock(h, b.last, true)
		// Not in the events: unknown, not 0.
		l.Transitions = nil
		rep.Locks = append(rep.Locks, l)
	}
	b.fill(rep)
	b.leaveOutShared(rep)
	return rep
}

// leaveOutShared moves the acting windows of writers that several clients
// may share (audit.Sharing) from Acting, and their moments from the
// timeline, to SharedWriters, with a warning for each that says why.
func (b *HistoryBuilder) leaveOutShared(rep *Report) {
	type window struct {
		lock   LockRef
		writer string
	}
	left := map[window]bool{}
	kept := rep.Acting[:0]
	for _, a := range rep.Acting {
		var sh *audit.Shared
		if s := b.sharing[a.Writer]; s != nil {
			_, sh = s.Result()
		}
		if sh == nil {
			kept = append(kept, a)
			continue
		}
		rep.SharedWriters = append(rep.SharedWriters, SharedWriter{Acting: a, Shared: *sh})
		left[window{a.Lock, a.Writer}] = true
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s, a holder of %s, wrote %d time(s) to other objects after it lost the lock: not counted as acting while not leader, since several clients share that identity (%s) and a shared identity cannot prove which client acted",
			a.Writer, a.Lock, a.Writes, sh.Reason()))
	}
	rep.Acting = kept
	if len(left) == 0 {
		return
	}
	rep.Timeline = slices.DeleteFunc(rep.Timeline, func(m Moment) bool {
		return m.What == MomentActing && left[window{m.Lock, m.Holder}]
	})
}
