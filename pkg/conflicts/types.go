package conflicts

import (
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Cause is why a 409 happened.
type Cause string

// The causes, in the order they are tested.
const (
	// Quota: a create lost the race to update a ResourceQuota's usage.
	Quota Cause = "quota"
	// ApplyConflict: server-side apply found fields owned by other managers.
	ApplyConflict Cause = "ssa-field-conflict"
	// LeaseContention: leader-election candidates raced for a Lease.
	LeaseContention Cause = "lease-contention"
	// DeletePrecondition: a delete's uid or resourceVersion precondition failed.
	DeletePrecondition Cause = "delete-precondition"
	// AlreadyExists: a create of a name that exists.
	AlreadyExists Cause = "already-exists"
	// StaleOwnCache: the writer lost to its own earlier write.
	StaleOwnCache Cause = "stale-own-cache"
	// Contention: another writer wrote between the loser's read and its write.
	Contention Cause = "contention"
	// Unknown: no success was seen between the loser's read and its write.
	Unknown Cause = "unknown"
)

// CauseInfo says what a cause means and how to fix it.
type CauseInfo struct {
	Cause Cause `json:"cause"`
	// Help says when a 409 has the cause, for the reports that explain
	// it (a CI report's rules).
	Help string `json:"-"`
	Fix  string `json:"fix"`
}

// Causes lists every cause with what it means and its one-line fix.
var Causes = []CauseInfo{
	{Quota, "a create lost the race to update the namespace's ResourceQuota usage (the 409 names details.kind resourcequotas)",
		"harmless if retried; fewer concurrent creates in the namespace, or a larger quota, make it rarer"},
	{ApplyConflict, "a server-side apply without force was refused: other managers own fields it sets to other values",
		"give each field one owner, or apply with force=true if this manager should take the fields"},
	{LeaseContention, "leader-election candidates raced for a coordination.k8s.io Lease",
		"expected among leader-election candidates; worry only if a leader loses its own renewals"},
	{DeletePrecondition, "a delete's uid or resourceVersion precondition no longer held",
		"the object changed or was replaced since it was read: re-read before deleting, or drop the precondition"},
	{AlreadyExists, "a create of a name that exists",
		"get before create, or treat AlreadyExists as success"},
	{StaleOwnCache, "the writer lost only to its own earlier write: it wrote from an object older than its last write",
		"write from the object your last write returned, or wait for your informer to see your own write"},
	{Contention, "another writer wrote the object between the loser's read and its write",
		"retry with a re-read (RetryOnConflict), use a patch or server-side apply, or have fewer writers"},
	{Unknown, "no success is in the log between the loser's read and its rejected write",
		"no competing write is in the log: check that the log covers the loser's read (--since) and every API server"},
}

// Fix returns the one-line fix of c.
func Fix(c Cause) string {
	for _, i := range Causes {
		if i.Cause == c {
			return i.Fix
		}
	}
	return ""
}

// ObjectKey names an object: group, resource, namespace and name.
type ObjectKey struct {
	Group     string `json:"group,omitempty"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is resource[.group]/[namespace/]name; creates with generateName
// have the name (generated).
func (k ObjectKey) String() string {
	s := k.Resource
	if k.Group != "" {
		s += "." + k.Group
	}
	s += "/"
	if k.Namespace != "" {
		s += k.Namespace + "/"
	}
	if k.Name == "" {
		return s + "(generated)"
	}
	return s + k.Name
}

// Count is a number of something named.
type Count struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// CauseCount is a number of 409s of one cause.
type CauseCount struct {
	Cause Cause `json:"cause"`
	Count int   `json:"count"`
}

// Tally counts write attempts.
type Tally struct {
	Attempts  int `json:"attempts"`
	Conflicts int `json:"conflicts"`
	Successes int `json:"successes"`
	// RetryChains counts the chains of two or more attempts (409, maybe a
	// re-read, write again).
	RetryChains int `json:"retryChains"`
	// GiveUps counts the chains that ended in a 409.
	GiveUps int `json:"giveUps"`
}

// Rate is Conflicts / Attempts, 0 with no attempts.
func (t Tally) Rate() float64 {
	if t.Attempts == 0 {
		return 0
	}
	return float64(t.Conflicts) / float64(t.Attempts)
}

// WriterStats is what one writer did.
type WriterStats struct {
	Writer audit.Writer `json:"writer"`
	// UserAgent is the user agent of every attempt of the writer, when
	// they all sent the same one; Shared lists them otherwise.
	UserAgent string `json:"userAgent,omitempty"`
	// Shared is set when the row may hold several clients that share
	// user, field manager and pod (nothing in the log tells them apart).
	Shared *Shared `json:"shared,omitempty"`
	Tally  `json:",inline"`
	// ConflictRate is 409s per attempt.
	ConflictRate float64 `json:"conflictRate"`
	Objects      int     `json:"objects"`
	// ConflictSeconds is the time the writer's 409s took (each request's
	// stageTimestamp less its requestReceivedTimestamp), RetrySeconds the
	// time its retries took: what the conflicts cost it in requests.
	ConflictSeconds float64 `json:"conflictSeconds,omitempty"`
	RetrySeconds    float64 `json:"retrySeconds,omitempty"`
	// LostTo counts the winners of this writer's 409s (a 409 lost to two
	// writes counts for both).
	LostTo []Count      `json:"lostTo,omitempty"`
	Causes []CauseCount `json:"causes,omitempty"`
	// FieldsLost are the fields the writer's server-side applies
	// conflicted on, per owning manager, as the API server's 409s name
	// them.
	FieldsLost []FieldOwner `json:"fieldsLost,omitempty"`
}

// Shared says why a writer's row may hold several clients: the one
// notion of a shared writer, audit.Shared, which leases uses too.
type Shared = audit.Shared

// FieldOwner is a manager that owns fields a server-side apply
// conflicted on, and those fields (as the API server prints paths).
type FieldOwner struct {
	Manager string   `json:"manager"`
	Fields  []string `json:"fields"`
	// Applied says that the message named the manager's entry as an
	// Apply (no API version after its name): the manager applies.
	Applied bool `json:"-"`
}

// ObjectStats is what happened to one object.
type ObjectStats struct {
	Object  ObjectKey `json:"object"`
	Tally   `json:",inline"`
	Writers int `json:"writers"`
	// WorstWriter has the most 409s on the object.
	WorstWriter    string `json:"worstWriter,omitempty"`
	WorstConflicts int    `json:"worstConflicts,omitempty"`
}

// CauseStats counts the 409s of one cause.
type CauseStats struct {
	Cause   Cause  `json:"cause"`
	Count   int    `json:"count"`
	Fix     string `json:"fix"`
	Writers int    `json:"writers"`
	// Fields are, for apply conflicts, the fields the 409s named, per
	// manager that owned them (the winners): what the writers fight over.
	Fields []FieldOwner `json:"fields,omitempty"`
	// Objects are the 409s per object and writer, the most first, when
	// Config.CauseObjects asks for them (a CI report's findings); the
	// versioned report does not show them.
	Objects []CauseObject `json:"-"`
}

// CauseObject counts the 409s of one cause that one writer got on one
// object.
type CauseObject struct {
	Object ObjectKey
	// Writer is the writer as WriterStats.Writer.String names it.
	Writer string
	Count  int
}

// Attempt is one write attempt, for the timeline.
type Attempt struct {
	// AuditID is the request's auditID, to find its event in the log.
	AuditID string `json:"auditID,omitempty"`
	// Replica is the API server that logged it, where the log's lines
	// name it (HOST {json}).
	Replica     string    `json:"replica,omitempty"`
	Received    time.Time `json:"received"`
	Completed   time.Time `json:"completed"`
	Writer      string    `json:"writer"`
	Verb        string    `json:"verb"`
	Subresource string    `json:"subresource,omitempty"`
	Code        int       `json:"code"`
	// Precondition is the resourceVersion the client sent (update, create).
	Precondition string `json:"precondition,omitempty"`
	// Result is the resourceVersion the write produced (RequestResponse only).
	Result string `json:"result,omitempty"`
	// Chain numbers the writer's retry chains on the object, from 1; Step
	// is the attempt's place in it, from 1.
	Chain int `json:"chain"`
	Step  int `json:"step"`
	// Reread is set when the writer read the object since its last attempt.
	Reread bool `json:"reread,omitempty"`
	// Force is set on a patch whose request URI asked for force=true: a
	// server-side apply that takes the fields it conflicts on.
	Force  bool     `json:"force,omitempty"`
	LostTo []string `json:"lostTo,omitempty"`
	// FieldOwners are, for an apply conflict, every manager the API
	// server named and its fields.
	FieldOwners []FieldOwner `json:"fieldOwners,omitempty"`
	Cause       Cause        `json:"cause,omitempty"`
	GiveUp      bool         `json:"giveUp,omitempty"`
}

// Summary totals a report.
type Summary struct {
	Tally   `json:",inline"`
	Writers int `json:"writers"`
	Objects int `json:"objects"`
	// DryRuns counts the write requests in scope that were dry runs
	// (?dryRun=All): they persist nothing and are left out of every figure.
	DryRuns int `json:"dryRuns"`
	// Unshown counts the write attempts in scope that Config.Filter does
	// not show: analysed (they may be winners) but left out of every figure.
	Unshown int `json:"unshown,omitempty"`
	// First and Last are the first and last write attempts analysed.
	First time.Time `json:"first,omitzero"`
	Last  time.Time `json:"last,omitzero"`
}

// Report is the result of Analyze.
type Report struct {
	Summary Summary       `json:"summary"`
	Input   audit.Stats   `json:"input"`
	Objects []ObjectStats `json:"objects"`
	Writers []WriterStats `json:"writers"`
	Causes  []CauseStats  `json:"causes"`
	// Timeline is every write attempt on Config.Object (or, with
	// Config.HottestTimeline, on the hottest object), in order.
	Timeline []Attempt `json:"timeline,omitempty"`
	// TimelineObject is the object of Timeline.
	TimelineObject *ObjectKey `json:"-"`
}

// Config tunes Analyze. NewConfig fills in the defaults.
type Config struct {
	// Window bounds the requests by their receive time (Since, Until);
	// zero is open.
	audit.Window
	// RetryWindow bounds a retry: a writer's next attempt on the object
	// after a 409 is a retry only if it comes within the window and shows
	// that the writer re-read (see Analyze).
	RetryWindow time.Duration
	// Object limits the analysis, every figure of it, to one object and
	// is the timeline's; nil is every object. Its Namespace "" matches any
	// namespace; its Resource is the type as a user names it (short
	// name, singular, plural or kind, with or without .group: see
	// apitypes.ParseOfflineType).
	Object *ObjectKey
	// Namespace, when set, limits the analysis to the objects of that
	// namespace.
	Namespace string
	// Resources, when set, limits the analysis to the objects of the types
	// it keeps (--resource).
	Resources *apitypes.ResourceFilter
	// Filter chooses the attempts every figure counts and the timeline
	// shows, after the analysis of every attempt in scope; nil shows all.
	Filter *Filter
	// HottestTimeline fills Report.Timeline with the hottest object's
	// attempts when Object is nil (for the picture).
	HottestTimeline bool
	// CauseObjects fills each CauseStats.Objects: the 409s per object and
	// writer, a count per pair that had one.
	CauseObjects bool
	// Strict makes every skipped line an error.
	Strict bool
	// Parallel is how many sources are decoded at once.
	Parallel int
	// MemoryLimit is the soft limit on the Go runtime's memory that
	// Analyze sets while it runs (runtime/debug.SetMemoryLimit), in bytes:
	// the garbage collector then runs when the heap nears it, neither
	// letting the heap grow to twice what is live nor collecting each time
	// it doubles on the way (see LimitMemory). 0 leaves the runtime's limit, as
	// does a GOMEMLIMIT in the environment or a lower limit already set. A
	// log whose live state is larger than the limit is still analysed,
	// with more time spent collecting.
	MemoryLimit int64
}

// NewConfig returns the defaults: a 5s retry window, two sources at once,
// a 120 MiB memory limit.
func NewConfig() Config {
	return Config{RetryWindow: 5 * time.Second, Parallel: 2, MemoryLimit: 120 << 20}
}
