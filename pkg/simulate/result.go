package simulate

import (
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// Result is what a simulation run produced. Every duration is virtual time
// since the start of the run.
type Result struct {
	Scenario    string            `json:"scenario"`
	Description string            `json:"description,omitempty"`
	Seed        int64             `json:"seed"`
	Duration    scenario.Duration `json:"duration"`
	// End is the virtual time of the last event (the run stops early when
	// every actor is done).
	End scenario.Duration `json:"end"`
	// StartRevision and FinalRevision bound the store revisions the run
	// used.
	StartRevision int64             `json:"startRevision"`
	FinalRevision int64             `json:"finalRevision"`
	Requests      int64             `json:"requests"`
	Compactions   []Compaction      `json:"compactions,omitempty"`
	Actors        []ActorReport     `json:"actors"`
	Objects       []ObjectState     `json:"objects,omitempty"`
	Invariants    []InvariantResult `json:"invariants,omitempty"`
	Leadership    *Leadership       `json:"leadership,omitempty"`
	// Notes say how the run departs from the scenario (on a real etcd).
	Notes []string `json:"notes,omitempty"`
	// Steps is the request trace, when tracing is on.
	Steps []Step `json:"steps,omitempty"`
}

// Compaction is one compaction of the store.
type Compaction struct {
	At       scenario.Duration `json:"at"`
	Revision int64             `json:"revision"`
}

// ActorReport sums up one actor (all its replicas).
type ActorReport struct {
	Name         string `json:"name"`
	Replicas     int    `json:"replicas"`
	Method       string `json:"method"`
	FieldManager string `json:"fieldManager"`
	Retry        string `json:"retry"`
	Target       string `json:"target"`
	// Operations are the logical writes started (each may take several
	// attempts); Attempts count every write request sent.
	Operations int `json:"operations"`
	Attempts   int `json:"attempts"`
	Successes  int `json:"successes"`
	// NoOps are successful writes that changed nothing, so the server
	// skipped them and the resourceVersion did not move.
	NoOps int `json:"noOps"`
	// Conflicts are 409s on a stale resourceVersion; ApplyConflicts are
	// 409s of server-side apply on fields owned by another manager.
	Conflicts      int `json:"conflicts"`
	ApplyConflicts int `json:"applyConflicts"`
	// Invalid are 422s (a failed JSON patch test, an unconditional update
	// of a type that refuses it).
	Invalid int `json:"invalid"`
	Errors  int `json:"errors"`
	// GiveUps are operations abandoned after the retry policy ran out (or
	// at the first conflict without one).
	GiveUps int `json:"giveUps"`
	// Retries is the histogram of retries per operation.
	Retries []Bucket `json:"retries"`
	// Latency of successful operations, from the first request to the
	// successful response, retries and backoff included.
	Latency Latency `json:"latency"`
	// LatencyHistogram counts successful operations by latency bucket.
	LatencyHistogram []LatencyBucket `json:"latencyHistogram,omitempty"`
	// RevisionsConsumed counts the store revisions the actor's writes took.
	RevisionsConsumed int `json:"revisionsConsumed"`
	// LostUpdates are successful increments that the final state does not
	// contain (see the counter invariants).
	LostUpdates int `json:"lostUpdates"`

	// Leader election.
	Acquisitions int `json:"acquisitions,omitempty"`
	Renewals     int `json:"renewals,omitempty"`
	// Watch.
	Events  int   `json:"events,omitempty"`
	Lists   int   `json:"lists,omitempty"`
	Expired int   `json:"expired,omitempty"`
	LastRV  int64 `json:"lastResourceVersion,omitempty"`
}

// Bucket is one histogram bucket.
type Bucket struct {
	Retries int `json:"retries"`
	Count   int `json:"count"`
}

// LatencyBucket counts the operations with a latency at most Le (and above
// the previous bucket's Le); the last bucket has Le 0 and holds the rest.
type LatencyBucket struct {
	Le    scenario.Duration `json:"le"`
	Count int               `json:"count"`
}

// LatencyBounds are the upper bounds of the latency histogram buckets.
var LatencyBounds = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second,
}

// Latency holds percentiles (nearest rank) of a latency sample.
type Latency struct {
	Count int               `json:"count"`
	P50   scenario.Duration `json:"p50"`
	P95   scenario.Duration `json:"p95"`
	P99   scenario.Duration `json:"p99"`
	Max   scenario.Duration `json:"max"`
}

// ObjectState is an object's state at the end of the run.
type ObjectState struct {
	Ref             string `json:"ref"`
	ResourceVersion string `json:"resourceVersion"`
	Generation      int64  `json:"generation,omitempty"`
	// Writes counts the revisions the object consumed during the run.
	Writes int `json:"writes"`
}

// InvariantResult is a checked invariant.
type InvariantResult struct {
	Name     string `json:"name"`
	Held     bool   `json:"held"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	// Lost is the number of lost updates (counter invariants).
	Lost int `json:"lost,omitempty"`
	// Reason says why an invariant whose values match did not hold: an
	// invariant holds only when at least one write to its object
	// succeeded, since a run in which every write failed proves nothing.
	Reason string `json:"reason,omitempty"`
}

// ReasonNothingWritten is the Reason of an invariant whose object no
// write of the run changed successfully.
const ReasonNothingWritten = "no write succeeded"

// Leadership sums up a leader election.
type Leadership struct {
	Terms     []Term     `json:"terms"`
	Failovers []Failover `json:"failovers,omitempty"`
}

// Term is one holder's time as leader.
type Term struct {
	Holder string            `json:"holder"`
	From   scenario.Duration `json:"from"`
	To     scenario.Duration `json:"to"`
	// Ended says how: "crashed", "lost" (renew deadline passed) or "end".
	Ended string `json:"ended"`
}

// Failover is the gap between a leader's crash and the next acquisition.
type Failover struct {
	Crashed    string            `json:"crashed"`
	CrashedAt  scenario.Duration `json:"crashedAt"`
	NewLeader  string            `json:"newLeader"`
	AcquiredAt scenario.Duration `json:"acquiredAt"`
	Gap        scenario.Duration `json:"gap"`
}

// Step is one request of the trace, stamped with the virtual time the
// server handled it.
type Step struct {
	At     scenario.Duration `json:"at"`
	Actor  string            `json:"actor"`
	Verb   string            `json:"verb"`
	Target string            `json:"target,omitempty"`
	// SentRV is the resourceVersion the request carried (a precondition,
	// or the RV a watch or list started from).
	SentRV string `json:"sentResourceVersion,omitempty"`
	// Code is the HTTP status; RV the resourceVersion of the answer.
	Code    int    `json:"code"`
	RV      string `json:"resourceVersion,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Note explains the step in words (a retry, a no-op, a relist...).
	Note string `json:"note,omitempty"`
	// Outcome classifies the step for pictures: ok, noop, conflict,
	// invalid, error, giveup, read, info.
	Outcome string `json:"outcome"`
}
