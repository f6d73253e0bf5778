package scenario

import (
	"fmt"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// APIVersion and Kind head every scenario file.
const (
	APIVersion = "rv.kubectl-rv.dev/v1alpha1"
	Kind       = "Scenario"
)

// Scenario is one simulation: the objects in the store at the start, the
// actors that read and write them, and the run's settings. Durations are
// virtual time.
type Scenario struct {
	APIVersion  string `yaml:"apiVersion" json:"apiVersion"`
	Kind        string `yaml:"kind" json:"kind"`
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Seed makes the run reproducible: the same seed gives byte-identical
	// output. Default 1.
	Seed int64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// Duration ends the run (virtual time). Default 60s.
	Duration Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	// Latency is the round trip of one request, drawn uniformly in
	// [min, max]; the server handles the request at the midpoint.
	Latency Range `yaml:"latency,omitempty" json:"latency,omitempty"`
	// CompactionInterval is kube-apiserver's --etcd-compaction-interval:
	// every interval the store is compacted to the revision seen one
	// interval earlier. 0 never compacts. Default 5m.
	CompactionInterval *Duration `yaml:"compactionInterval,omitempty" json:"compactionInterval,omitempty"`
	// StartRevision moves the store to this revision before the objects
	// are created, so RVs look like a real cluster's. Default 1.
	StartRevision int64 `yaml:"startRevision,omitempty" json:"startRevision,omitempty"`
	// ManagedFields maintains metadata.managedFields with the API server's
	// field manager. Default true; false is faster and disables apply.
	ManagedFields *bool `yaml:"managedFields,omitempty" json:"managedFields,omitempty"`
	// Types declares custom resources.
	Types []Type `yaml:"types,omitempty" json:"types,omitempty"`
	// Objects exist before the actors start, created in order.
	Objects []map[string]any `yaml:"objects,omitempty" json:"objects,omitempty"`
	Actors  []Actor          `yaml:"actors" json:"actors"`
	// Invariants are checked at the end; a violated invariant is a lost
	// update.
	Invariants []Invariant `yaml:"invariants,omitempty" json:"invariants,omitempty"`
	// Trace records every request (needed for the step-by-step narrative
	// and the picture). Default true when the run has at most 5,000 requests
	// worth of actors; set it explicitly for long runs.
	Trace *bool `yaml:"trace,omitempty" json:"trace,omitempty"`
}

// Type declares a custom resource kind.
type Type struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	// Resource is the plural name; default the lower-case kind + "s".
	Resource          string `yaml:"resource,omitempty" json:"resource,omitempty"`
	ClusterScoped     bool   `yaml:"clusterScoped,omitempty" json:"clusterScoped,omitempty"`
	StatusSubresource bool   `yaml:"statusSubresource,omitempty" json:"statusSubresource,omitempty"`
}

// Range is a [min, max] duration range.
type Range struct {
	Min Duration `yaml:"min" json:"min"`
	Max Duration `yaml:"max" json:"max"`
}

// Ref names one object.
type Ref struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	Namespace  string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Name       string `yaml:"name" json:"name"`
}

// The methods of the actors that do not write: a write actor's method is
// a writepath.Method (Actor.Write).
const (
	// MethodLeaderElection: client-go's leader election on a Lease.
	MethodLeaderElection = "leader-election"
	// MethodWatch: an informer (list, then watch; relist on 410).
	MethodWatch = "watch"
)

// Methods lists every method name, for help and errors: the write methods
// (update-no-rv spelled update-unconditional, the name scenarios have
// always used; both are accepted), then the two that do not write.
var Methods = func() []string {
	var out []string
	for _, m := range writepath.Methods {
		if m == writepath.UpdateNoRV {
			out = append(out, writepath.UpdateUnconditional)
		} else {
			out = append(out, string(m))
		}
	}
	return append(out, MethodLeaderElection, MethodWatch)
}()

// Actor is one client (or Replicas identical clients).
type Actor struct {
	Name string `yaml:"name" json:"name"`
	// Replicas runs this many copies, named name-1 .. name-N. Default 1.
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// FieldManager is the manager name in managedFields; default the
	// actor's name (the replica name for replicas).
	FieldManager string `yaml:"fieldManager,omitempty" json:"fieldManager,omitempty"`
	Target       Ref    `yaml:"target" json:"target"`
	// Method is a write method (see Write) or one of MethodLeaderElection
	// and MethodWatch, as the scenario spells it.
	Method string `yaml:"method" json:"method"`
	// Change is what each write changes.
	Change Change `yaml:"change,omitempty" json:"change,omitempty"`
	// Rate is the writes per second the actor starts (a Poisson process);
	// ThinkTime is the fixed pause after each write instead. One of them
	// is required for writers.
	Rate      float64   `yaml:"rate,omitempty" json:"rate,omitempty"`
	ThinkTime *Duration `yaml:"thinkTime,omitempty" json:"thinkTime,omitempty"`
	// Work is the time between the read and the write (the client's
	// processing): the window in which others can move the object on.
	Work Duration `yaml:"work,omitempty" json:"work,omitempty"`
	// Writes stops the actor after this many successful writes (0 = until
	// the end).
	Writes int `yaml:"writes,omitempty" json:"writes,omitempty"`
	// Start and Stop bound the actor's activity (virtual time).
	Start Duration  `yaml:"start,omitempty" json:"start,omitempty"`
	Stop  *Duration `yaml:"stop,omitempty" json:"stop,omitempty"`
	Retry Retry     `yaml:"retry,omitempty" json:"retry,omitempty"`
	// Lease configures leader-election actors.
	Lease *Lease `yaml:"lease,omitempty" json:"lease,omitempty"`
	// Watch configures watch actors.
	Watch *Watch `yaml:"watch,omitempty" json:"watch,omitempty"`
}

// Write returns the actor's write method; "" for the actors that do not
// write (leader election, watch) and for unknown names.
func (a *Actor) Write() writepath.Method {
	m, _ := writepath.ParseMethod(a.Method)
	return m
}

// Change says what one write changes. Paths are dotted with [i] for list
// indexes: data.count, spec.template.spec.containers[0].image.
type Change struct {
	// Increment adds one to the integer (or integer string) at the path:
	// the counter behind the lost-update invariant.
	Increment string `yaml:"increment,omitempty" json:"increment,omitempty"`
	// Set writes a value at the path; with Values, the next value of the
	// list each write (a flip between two values, for example).
	Set    string `yaml:"set,omitempty" json:"set,omitempty"`
	Value  any    `yaml:"value,omitempty" json:"value,omitempty"`
	Values []any  `yaml:"values,omitempty" json:"values,omitempty"`
	// Insert inserts Value at index At of the list at the path (0 = the
	// front).
	Insert string `yaml:"insert,omitempty" json:"insert,omitempty"`
	At     int    `yaml:"at,omitempty" json:"at,omitempty"`
	// Test is the guard of a json-patch-test write: a test op that the
	// value at Path still equals Value. Without it the guard tests the
	// changed path's value as read.
	Test *Test `yaml:"test,omitempty" json:"test,omitempty"`
}

// Test is a JSON patch test op.
type Test struct {
	Path  string `yaml:"path" json:"path"`
	Value any    `yaml:"value" json:"value"`
}

// Retry is a retry policy for conflicts.
type Retry struct {
	// Policy is none, DefaultRetry, DefaultBackoff (client-go's
	// retry.RetryOnConflict with those backoffs) or custom.
	Policy  string   `yaml:"policy,omitempty" json:"policy,omitempty"`
	Backoff *Backoff `yaml:"backoff,omitempty" json:"backoff,omitempty"`
}

// The retry policies.
const (
	RetryNone           = "none"
	RetryDefaultRetry   = "DefaultRetry"
	RetryDefaultBackoff = "DefaultBackoff"
	RetryCustom         = "custom"
)

// Backoff is wait.Backoff: Steps calls, sleeping Duration (multiplied by
// Factor each step, capped at Cap, with Jitter) between them.
type Backoff struct {
	Steps    int      `yaml:"steps" json:"steps"`
	Duration Duration `yaml:"duration" json:"duration"`
	Factor   float64  `yaml:"factor,omitempty" json:"factor,omitempty"`
	Jitter   float64  `yaml:"jitter,omitempty" json:"jitter,omitempty"`
	Cap      Duration `yaml:"cap,omitempty" json:"cap,omitempty"`
}

// Lease configures a leader-election candidate (client-go's
// LeaderElectionConfig). Defaults: 15s, 10s, 2s.
type Lease struct {
	LeaseDuration Duration `yaml:"leaseDuration,omitempty" json:"leaseDuration,omitempty"`
	RenewDeadline Duration `yaml:"renewDeadline,omitempty" json:"renewDeadline,omitempty"`
	RetryPeriod   Duration `yaml:"retryPeriod,omitempty" json:"retryPeriod,omitempty"`
	// CrashAt stops the candidate at this time without releasing the lease.
	CrashAt *Duration `yaml:"crashAt,omitempty" json:"crashAt,omitempty"`
}

// Watch configures a watch actor: an informer that lists then watches, and
// is disconnected for Downtime at DisconnectAt (a network blip or a slow
// consumer whose watch the server closed). On reconnect it resumes from the
// last RV it saw; if that was compacted meanwhile it gets 410 and relists.
type Watch struct {
	DisconnectAt *Duration `yaml:"disconnectAt,omitempty" json:"disconnectAt,omitempty"`
	Downtime     Duration  `yaml:"downtime,omitempty" json:"downtime,omitempty"`
}

// Invariant is a property checked at the end of the run.
type Invariant struct {
	// Counter checks that the integer at Path of Target equals its start
	// value plus the successful writes of the actors that increment it.
	Counter *Counter `yaml:"counter,omitempty" json:"counter,omitempty"`
	// Equals checks that the value at Path of Target ends equal to Value.
	Equals *Equals `yaml:"equals,omitempty" json:"equals,omitempty"`
}

// Equals is the final-value invariant. Its path may select list items by
// a key: spec.template.spec.containers[name=app].image.
type Equals struct {
	Target Ref    `yaml:"target" json:"target"`
	Path   string `yaml:"path" json:"path"`
	Value  any    `yaml:"value" json:"value"`
}

// Counter is the counter invariant.
type Counter struct {
	Target Ref    `yaml:"target" json:"target"`
	Path   string `yaml:"path" json:"path"`
}

// Duration is a time.Duration written as "10s" in YAML and JSON.
type Duration time.Duration

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalYAML decodes "10s", naming the line on error.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if err := d.UnmarshalText([]byte(n.Value)); err != nil || n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %q is not a duration (write it like 500ms, 10s or 5m)", n.Line, n.Value)
	}
	return nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
