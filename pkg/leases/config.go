package leases

import (
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// LeaseResource is coordination.k8s.io/v1 leases.
var LeaseResource = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// The resources legacy annotation locks live in.
var (
	EndpointsResource = schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}
	ConfigMapResource = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// Config says what to look at and how. NewConfig fills the defaults.
type Config struct {
	// Audit, when set, are the audit logs Run reads a history from
	// (History) instead of asking the cluster.
	Audit []audit.Source
	// Window keeps only the audit events of requests received in it
	// (--since, --until); the zero Window keeps every one.
	Window audit.Window
	// Watch makes Run watch the Leases until its ctx is done (Watch)
	// instead of looking at them once (Now).
	Watch bool
	// Namespace limits the locks to one namespace; "" is every namespace.
	Namespace string
	// Names, when set, limits the locks to these names.
	Names []string
	// CandidateResource is the LeaseCandidate resource the cluster serves
	// (FindCandidateResource); nil when it serves none.
	CandidateResource *schema.GroupVersionResource
	// LeaseDuration is the lease duration a history assumes: an audit log
	// at Metadata level has no bodies, so no leaseDurationSeconds.
	// Durations, when set, gives it per Lease (namespace/name).
	LeaseDuration time.Duration
	Durations     map[string]time.Duration
	// MaxMoments bounds the timeline; MaxSpans the holding spans kept per
	// lock (the newest); MaxActingObjects the objects named per
	// acting-while-not-leader window.
	MaxMoments, MaxSpans, MaxActingObjects int
	// Stream is the watch driver's configuration (live); its Now is the
	// clock of every mode.
	Stream follow.Config
	// Warnf receives warnings as they happen; they are in the report too.
	Warnf func(format string, args ...any)
	// Live, when set, receives a report of the watch so far every
	// LiveEvery, from the goroutine that runs the watch.
	Live      func(*Report)
	LiveEvery time.Duration
}

// NewConfig returns a Config with client-go's default lease duration
// (15s), a timeline of at most 10,000 moments, 100 spans per lock, 20
// objects per acting window, the watch driver's defaults and a live view
// every 2 seconds.
func NewConfig() Config {
	return Config{LeaseDuration: 15 * time.Second, MaxMoments: 10000, MaxSpans: 100, MaxActingObjects: 20,
		Stream: follow.NewConfig(), LiveEvery: 2 * time.Second}
}

func (c *Config) now() time.Time {
	if c.Stream.Now == nil {
		return time.Now()
	}
	return c.Stream.Now()
}

func (c *Config) warnf(format string, args ...any) {
	if c.Warnf != nil {
		c.Warnf(format, args...)
	}
}

// wanted says whether a lock in namespace ns named name is asked for.
func (c *Config) wanted(ns, name string) bool {
	if c.Namespace != "" && ns != c.Namespace {
		return false
	}
	if len(c.Names) == 0 {
		return true
	}
	for _, n := range c.Names {
		if n == name {
			return true
		}
	}
	return false
}

// durationOf is the lease duration a history assumes for ref.
func (c *Config) durationOf(ref LockRef) time.Duration {
	if d, ok := c.Durations[ref.Namespace+"/"+ref.Name]; ok {
		return d
	}
	return c.LeaseDuration
}
