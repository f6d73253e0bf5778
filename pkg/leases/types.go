package leases

import (
	"encoding/json"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Mode says where a report's history comes from.
type Mode string

// The modes.
const (
	// ModeNow is one look at the locks: no history.
	ModeNow Mode = "now"
	// ModeLive is a watch of the Leases (--for, --watch).
	ModeLive Mode = "live"
	// ModeHistory is the Lease writes of an audit log (--audit-log).
	ModeHistory Mode = "history"
)

// LockKind is the kind of object a lock lives in.
type LockKind string

// The lock kinds: a coordination.k8s.io/v1 Lease, or a legacy annotation
// lock (control-plane.alpha.kubernetes.io/leader) on an Endpoints or a
// ConfigMap.
const (
	KindLease     LockKind = "Lease"
	KindEndpoints LockKind = "Endpoints"
	KindConfigMap LockKind = "ConfigMap"
)

// Duration is a time.Duration that JSON and YAML show as Go does
// ("2.013s"), rounded to the millisecond.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).Round(time.Millisecond).String())
}

// D is the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// LockRef names a lock.
type LockRef struct {
	Kind      LockKind `json:"kind"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
}

// String is namespace/name, with the kind for annotation locks.
func (r LockRef) String() string {
	s := r.Name
	if r.Namespace != "" {
		s = r.Namespace + "/" + s
	}
	if r.Kind != KindLease {
		s = string(r.Kind) + " " + s
	}
	return s
}

// Lock is one lock as last seen, with what was seen of its renewals.
type Lock struct {
	LockRef `json:",inline"`
	// Holder is the holderIdentity ("" when released or never held); in
	// a history, the writer of the last successful write (user/manager@pod).
	Holder string `json:"holder"`
	// HeldSince is the acquireTime (the holder's clock); in a history, the
	// time of the write that took the lock.
	HeldSince *time.Time `json:"heldSince,omitempty"`
	// LastRenew is the renewTime (the holder's clock); in a history, the
	// time of the holder's last successful write.
	LastRenew *time.Time `json:"lastRenew,omitempty"`
	// LeaseDuration is leaseDurationSeconds; in a history, the one given.
	LeaseDuration Duration `json:"leaseDuration"`
	// RenewAge is how long before the report's end LastRenew was.
	RenewAge *Duration `json:"renewAge,omitempty"`
	// Slack is LeaseDuration - RenewAge: how long the holder still has to
	// renew. Negative when the lock has expired.
	Slack *Duration `json:"slack,omitempty"`
	// Expired says the holder did not renew within LeaseDuration.
	Expired bool `json:"expired"`
	// Transitions is leaseTransitions (leaderTransitions for annotation
	// locks); nil in a history, whose Metadata-level events do not carry
	// the Lease's spec.
	Transitions *int32 `json:"transitions,omitempty"`
	// Strategy and PreferredHolder are coordinated leader election's.
	Strategy        string `json:"strategy,omitempty"`
	PreferredHolder string `json:"preferredHolder,omitempty"`
	// Candidates are the LeaseCandidates that name this Lease.
	Candidates []Candidate `json:"candidates,omitempty"`
	// Deleted says the Lease was deleted while watched.
	Deleted bool `json:"deleted,omitempty"`
	// Renewals is what was seen of the renewals (live and history only).
	Renewals *Renewals `json:"renewals,omitempty"`
	// Spans are who held the lock and when, oldest first (live and
	// history only; at most Config.MaxSpans, the newest).
	Spans []Span `json:"spans,omitempty"`
}

// Candidate is a LeaseCandidate (coordinated leader election, 1.33+).
type Candidate struct {
	Name             string     `json:"name"`
	RenewTime        *time.Time `json:"renewTime,omitempty"`
	PingTime         *time.Time `json:"pingTime,omitempty"`
	BinaryVersion    string     `json:"binaryVersion,omitempty"`
	EmulationVersion string     `json:"emulationVersion,omitempty"`
	Strategy         string     `json:"strategy,omitempty"`
}

// Renewals sums up a lock's renewals: a renewal is a write by the holder
// that moves renewTime (live) or a successful write by the holder
// (history). The interval is the time since the holder's previous
// renewal; the slack of a renewal is LeaseDuration minus that interval:
// how much time was left.
type Renewals struct {
	Count int `json:"count"`
	// IntervalMedian and IntervalP99 are over the last RingSize intervals.
	IntervalMedian *Duration `json:"intervalMedian,omitempty"`
	IntervalP99    *Duration `json:"intervalP99,omitempty"`
	// MinSlack is the smallest slack of a renewal.
	MinSlack *Duration `json:"minSlack,omitempty"`
	// Late counts renewals whose slack was under a third of LeaseDuration
	// (and not negative).
	Late int `json:"late"`
	// Expiries counts the times the holder let the lock expire.
	Expiries int `json:"expiries"`
	// Takeovers counts changes of holder.
	Takeovers int `json:"takeovers"`
	// Conflicts counts 409s on the lock (history only): candidates trying
	// while another wrote first.
	Conflicts int `json:"conflicts,omitempty"`
	// Tries counts the 409s by writer (history only).
	Tries map[string]int `json:"tries,omitempty"`
}

// Span is a stretch of time one holder held a lock.
type Span struct {
	Holder string    `json:"holder"`
	From   time.Time `json:"from"`
	// LastRenew is the holder's last renewal in the span.
	LastRenew time.Time `json:"lastRenew"`
	// To is when the next holder took over or the lock was released;
	// nil while held.
	To       *time.Time `json:"to,omitempty"`
	Renewals int        `json:"renewals"`
}

// Takeover is a change of holder.
type Takeover struct {
	Lock LockRef   `json:"lock"`
	Time time.Time `json:"time"`
	// From is the previous holder ("" if none was seen); To the new one.
	From string `json:"from"`
	To   string `json:"to"`
	// FromLastRenew is the previous holder's last renewal.
	FromLastRenew *time.Time `json:"fromLastRenew,omitempty"`
	// AfterExpiry says the previous holder's lease had expired; Unheld is
	// then how long the lock was held by nobody.
	AfterExpiry bool      `json:"afterExpiry"`
	Unheld      *Duration `json:"unheld,omitempty"`
	// Released says the previous holder released the lock first.
	Released bool `json:"released,omitempty"`
}

// Expiry is a holder that let its lock expire.
type Expiry struct {
	Lock      LockRef   `json:"lock"`
	Holder    string    `json:"holder"`
	LastRenew time.Time `json:"lastRenew"`
	// At is LastRenew + LeaseDuration.
	At time.Time `json:"at"`
	// RenewedAfter says the same holder renewed after the expiry (with
	// nobody taking over in between).
	RenewedAfter bool `json:"renewedAfter,omitempty"`
}

// Acting is a former holder writing other objects after it lost a lock:
// after its last renewal plus the lease duration, or after another took
// over, whichever came first. Two replicas then acted as leader.
type Acting struct {
	Lock   LockRef `json:"lock"`
	Writer string  `json:"writer"`
	// LostAt is when the writer stopped being the leader; Reason says why
	// ("expired", or "taken over by X").
	LastRenew time.Time `json:"lastRenew"`
	LostAt    time.Time `json:"lostAt"`
	Reason    string    `json:"reason"`
	// First and Last are the writes' times; Writes counts them.
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Writes int       `json:"writes"`
	// Objects are the objects written (resource[.group] namespace/name), at
	// most MaxActingObjects.
	Objects []string `json:"objects"`
}

// SharedWriter is a former holder that wrote other objects after it lost
// a lock, as Acting, but whose identity (user, field manager and pod)
// several clients may share (audit.Shared: several user agents, or
// overlapping writes to one object). Any of those clients may have made
// the writes, so they cannot prove that a former leader acted: they are
// neither in Report.Acting nor a split-brain finding.
type SharedWriter struct {
	Acting `json:",inline"`
	Shared audit.Shared `json:"shared"`
}

// Moment is a notable thing in a lock's timeline.
type Moment struct {
	Time   time.Time  `json:"time"`
	Lock   LockRef    `json:"lock"`
	What   MomentKind `json:"what"`
	Holder string     `json:"holder,omitempty"`
	Detail string     `json:"detail,omitempty"`
}

// MomentKind is what a Moment is.
type MomentKind string

// The moments.
const (
	MomentAcquired  MomentKind = "acquired"
	MomentRenewLate MomentKind = "late-renew"
	MomentExpired   MomentKind = "expired"
	MomentTakeover  MomentKind = "takeover"
	MomentReleased  MomentKind = "released"
	MomentDeleted   MomentKind = "deleted"
	MomentActing    MomentKind = "acting-while-not-leader"
	MomentGap       MomentKind = "gap"
)

// Report is what kubectl rv leases found.
type Report struct {
	Mode  Mode      `json:"mode"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// CandidateAPI is the group/version serving LeaseCandidates, "" when
	// the cluster has none.
	CandidateAPI string     `json:"candidateAPI,omitempty"`
	Locks        []Lock     `json:"locks"`
	Takeovers    []Takeover `json:"takeovers"`
	Expiries     []Expiry   `json:"expiries"`
	Acting       []Acting   `json:"acting"`
	// SharedWriters are the acting windows left out of Acting because
	// the writer's identity is shared (history only).
	SharedWriters []SharedWriter `json:"sharedWriters,omitempty"`
	// Timeline are the moments in time order (at most Config.MaxMoments:
	// the first ones; MomentsDropped counts the rest).
	Timeline       []Moment     `json:"timeline"`
	MomentsDropped int          `json:"momentsDropped,omitempty"`
	Gaps           []follow.Gap `json:"gaps,omitempty"`
	// Events counts the watch events (live) or audit events (history) read.
	Events   int      `json:"events"`
	Warnings []string `json:"warnings,omitempty"`
}

// LateRenewals is the number of late renewals over every lock.
func (r *Report) LateRenewals() int {
	n := 0
	for _, l := range r.Locks {
		if l.Renewals != nil {
			n += l.Renewals.Late
		}
	}
	return n
}

func (r *Report) emptyLists() {
	if r.Locks == nil {
		r.Locks = []Lock{}
	}
	if r.Takeovers == nil {
		r.Takeovers = []Takeover{}
	}
	if r.Expiries == nil {
		r.Expiries = []Expiry{}
	}
	if r.Acting == nil {
		r.Acting = []Acting{}
	}
	if r.Timeline == nil {
		r.Timeline = []Moment{}
	}
}

// Findings are what leases --fail-on fails on (Report.Findings counts
// them); split-brain needs an audit log, the only source of a former
// leader's writes.
var Findings = findings.Vocabulary{
	{Name: "takeover", Noun: "takeover", Help: "a Lease changed holder"},
	{Name: "late-renew", Noun: "late renewal", Help: "a renewal with less than a third of the lease duration left"},
	{Name: "split-brain", Noun: "acting-while-not-leader window", Help: "a former leader wrote other objects after it lost the lock; needs --audit-log"},
}

// Findings counts the report's findings by class (Findings).
func (r *Report) Findings() findings.Counts {
	return findings.Counts{"takeover": len(r.Takeovers), "late-renew": r.LateRenewals(), "split-brain": len(r.Acting)}
}

// FindingKinds are the kinds of finding, with what each means and its
// one-line fix, for the reports that explain them (a CI report's rules):
// Findings' classes (Report.Takeovers, the locks' late renewals,
// Report.Acting), then the expiries and the acting windows of shared
// identities, which no --fail-on word names.
var FindingKinds = []findings.Kind{
	{ID: "takeover", Name: "takeover", Class: "takeover",
		Help: "a lock changed holder: its leader stopped renewing (it exited, stalled or lost the API server) or released it, and another candidate took it",
		Fix:  "expected on a rollout; otherwise find why the leader stopped renewing (CPU throttling, API server latency) and keep renewDeadline well under leaseDuration"},
	{ID: "late-renew", Name: "late renewal", Class: "late-renew",
		Help: "the holder renewed with less than a third of the lease duration left: it nearly lost the lock",
		Fix:  "give the leader CPU and a near API server, or lengthen leaseDuration against renewDeadline and retryPeriod"},
	{ID: "split-brain", Name: "acting while not leader", Class: "split-brain",
		Help: "a former holder wrote other objects after it lost the lock (its lease expired or another took over): two replicas acted as leader",
		Fix:  "stop acting as soon as leadership is lost (exit in OnStoppedLeading, ReleaseOnCancel), and check leadership before each write that must be the leader's"},
	{ID: "expiry", Name: "expiry",
		Help: "the holder did not renew within the lease duration: the lock was free for any candidate to take",
		Fix:  "find why the holder stopped renewing (a stalled or starved process, API server latency), or lengthen leaseDuration"},
	{ID: "shared-writer", Name: "acting by a shared identity",
		Help: "a former holder's identity wrote other objects after it lost the lock, but several clients share that identity (user, field manager and pod), so any of them may have made the writes: no proof that a former leader acted",
		Fix:  "give each replica an identity of its own (a field manager or user per pod) so that the audit log tells them apart"},
}
