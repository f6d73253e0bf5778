package doctor

import (
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

// Status is a check's verdict.
//
// The verdict rule, one for every check: Fail only where a real client
// (client-go's reflector and informers, kubectl get -w) would lose,
// duplicate or misorder data, or hang; Warn where the behaviour is legal
// but costly or surprising, and where the server or its storage did not
// answer in time ("unreachable": a stall is no broken contract); Skip where
// the cluster cannot show it (nothing to page, a history never compacted,
// a type with no objects). Every Warn and Skip names its cause.
type Status string

// The verdicts. Only Fail makes doctor exit 1.
const (
	// Pass: the endpoint kept the contract.
	Pass Status = "pass"
	// Fail: a client would lose, duplicate or misorder data, or hang;
	// Check.Observed says how.
	Fail Status = "fail"
	// Warn: legal but costly or surprising, or unreachable.
	Warn Status = "warn"
	// Skip: the cluster cannot show it; Check.Observed says why.
	Skip Status = "skip"
)

// Check is one check's verdict on one resource.
type Check struct {
	// ID names the check (see Checks).
	ID string `json:"id"`
	// Status is the verdict.
	Status Status `json:"status"`
	// Observed says in a sentence what was seen.
	Observed string `json:"observed"`
	// Values are the observed figures behind the verdict (resourceVersions,
	// counts, HTTP codes, milliseconds), for scripts and tests.
	Values map[string]string `json:"values,omitempty"`
}

// Resource is every check's verdict on one group/version/resource.
type Resource struct {
	Group      string  `json:"group"`
	Version    string  `json:"version"`
	Resource   string  `json:"resource"`
	Kind       string  `json:"kind"`
	Namespaced bool    `json:"namespaced"`
	Checks     []Check `json:"checks"`
	// Warning is set when the resource could not be probed (a 403), or was
	// removed while it was probed (Gone): its checks are then left out.
	Warning string `json:"warning,omitempty"`
	// Gone is set when the resource stopped being served during the run (a
	// custom resource definition deleted meanwhile): a list answers 404, so
	// whatever failed said nothing about the contract.
	Gone bool `json:"gone,omitempty"`
	// Unreachable is set when the first list timed out or the server's
	// storage did not answer: its checks are then left out.
	Unreachable bool `json:"unreachable,omitempty"`
}

// Name names the resource the way kubectl does: deployments.apps.
func (r Resource) Name() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// Count returns how many of the resource's checks have status s.
func (r Resource) Count(s Status) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == s {
			n++
		}
	}
	return n
}

// Summary counts the verdicts of a whole run.
type Summary struct {
	Resources int `json:"resources"`
	// Forbidden counts the resources the user may not list or watch.
	Forbidden int `json:"forbidden"`
	// Gone counts the resources removed while they were probed.
	Gone int `json:"gone"`
	// Unreachable counts the resources whose first list did not answer.
	Unreachable int `json:"unreachable,omitempty"`
	Pass        int `json:"pass"`
	Fail        int `json:"fail"`
	Warn        int `json:"warn"`
	Skip        int `json:"skip"`
}

// Report is the result of Run.
type Report struct {
	Resources []Resource `json:"resources"`
	Summary   Summary    `json:"summary"`
	// Warnings are problems that made the result partial.
	Warnings []string `json:"warnings,omitempty"`
	// Elapsed is how long the run took.
	Elapsed time.Duration `json:"-"`
}

// Config tunes a run. NewConfig fills in the defaults.
type Config struct {
	// Namespace limits namespaced resources to one namespace; "" is all.
	Namespace string
	// Parallel is how many resources are probed at once.
	Parallel int
	// LatencySamples is how many consistent and cached lists are timed.
	LatencySamples int
	// SlowConsistentList is how much longer than a cached list a consistent
	// list may take (median against median) before it counts as waiting on
	// the watch cache.
	SlowConsistentList time.Duration
	// WatchTimeout is the timeoutSeconds doctor's watches ask for; the
	// server sends a bookmark shortly before it.
	WatchTimeout time.Duration
	// Grace is how long past WatchTimeout a watch may stay open, and how
	// long a streaming list may take to send its initial events.
	Grace time.Duration
	// Checks selects checks by ID; empty is all of them.
	Checks []string
	// WriteProbe names the namespace of the write probe; "" runs none.
	WriteProbe string
	// APIServers are the cluster's other API servers (https URLs), for
	// cross-server-rvs; empty: the kubernetes Service's endpoints that
	// answer (see Clients.Peer).
	APIServers []string
	// PeerTimeout bounds the list that tells whether another API server
	// answers from here.
	PeerTimeout time.Duration
	// Warn, when set, is told each of Report.Warnings as soon as it is
	// known, before the checks run.
	Warn func(warning string)
}

// NewConfig returns the default configuration.
func NewConfig() Config {
	return Config{
		Parallel:           8,
		LatencySamples:     5,
		SlowConsistentList: time.Second,
		WatchTimeout:       4 * time.Second,
		Grace:              10 * time.Second,
		PeerTimeout:        3 * time.Second,
	}
}

func newResource(t apitypes.Type) Resource {
	return Resource{
		Group: t.Resource.Group, Version: t.Resource.Version, Resource: t.Resource.Resource,
		Kind: t.Kind, Namespaced: t.Namespaced,
	}
}
