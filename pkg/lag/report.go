package lag

import (
	"time"
)

// Report is the result of a scan: the objects that are not current (or all
// of them with Config.All), a summary per type and the warnings.
type Report struct {
	// Now is when ages were measured.
	Now   time.Time
	Types []TypeSummary
	Items []Item
	// Warnings are problems that made the result partial (a type the user
	// may not list, a group discovery could not read).
	Warnings []string
}

// TypeSummary counts the objects of one type by state.
type TypeSummary struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Resource   string `json:"resource"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
	Counts
	// ReportsObservedGeneration says the type's controller reports an
	// observedGeneration (known for built-in workloads, seen on at least one
	// object otherwise).
	ReportsObservedGeneration bool `json:"reportsObservedGeneration"`
	// Error is set when the type could not be listed; its counts are then
	// partial.
	Error string `json:"error,omitempty"`

	// listRV is the resourceVersion of the list, where a watch starts.
	listRV string
}

// Counts counts objects by state: of one type (TypeSummary), or of all
// (Report.Totals).
type Counts struct {
	// Objects is how many objects were scanned.
	Objects       int `json:"objects"`
	Current       int `json:"current"`
	Lagging       int `json:"lagging"`
	NeverObserved int `json:"neverObserved"`
	NoGeneration  int `json:"noGeneration"`
	// RollingOut, Paused and Stalled count objects not rolled out (only
	// with Config.For RolledOut).
	RollingOut int `json:"rollingOut"`
	Paused     int `json:"paused"`
	Stalled    int `json:"stalled"`
	// Findings is how many objects count as lagging under the thresholds.
	Findings int `json:"findings"`
}

// count adds d objects in state st (d is -1 when one leaves it).
func (c *Counts) count(st State, d int) {
	switch st {
	case Current:
		c.Current += d
	case Lagging:
		c.Lagging += d
	case NeverObserved:
		c.NeverObserved += d
	case NoGeneration:
		c.NoGeneration += d
	case RollingOut:
		c.RollingOut += d
	case Paused:
		c.Paused += d
	case Stalled:
		c.Stalled += d
	}
}

// Name names the type the way kubectl does: deployments.apps.
func (s TypeSummary) Name() string {
	if s.Group == "" {
		return s.Resource
	}
	return s.Resource + "." + s.Group
}

// Item is one object in the report.
type Item struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Resource is the type as kubectl names it (deployments.apps).
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	// Generation and ObservedGeneration are absent when the object has none.
	Generation         *int64 `json:"generation,omitempty"`
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	Lag                int64  `json:"lag"`
	State              State  `json:"state"`
	// Finding says the object counts as lagging under --max-lag and
	// --min-age (and makes the command exit 1).
	Finding bool `json:"finding"`
	// LaggingConditions are the conditions whose own observedGeneration is
	// behind the generation.
	LaggingConditions []Condition `json:"laggingConditions,omitempty"`
	// Rollout says why an object is not rolled out (--for rollout): what
	// kubectl rollout status says, or the condition that holds it.
	Rollout string `json:"rollout,omitempty"`
	// SpecChangedAt is when the newest spec was written; SpecSource says
	// where that time comes from ("managedFields" or "creationTimestamp").
	SpecChangedAt time.Time `json:"specChangedAt"`
	SpecSource    string    `json:"specSource"`
	SpecManager   string    `json:"specManager,omitempty"`
	// AgeSeconds is how long the newest spec has been waiting, at Report.Now.
	AgeSeconds int64 `json:"ageSeconds"`
	// Observer is the manager that writes the status.
	Observer     string   `json:"observer,omitempty"`
	Explanations []string `json:"explanations,omitempty"`

	expected bool
}

// Key identifies the item within a report.
func (it Item) Key() string { return it.Resource + "/" + it.Namespace + "/" + it.Name }

// Findings returns how many items count as lagging.
func (r *Report) Findings() int {
	n := 0
	for _, t := range r.Types {
		n += t.Findings
	}
	return n
}

// Totals sums the type summaries.
func (r *Report) Totals() Counts {
	var s Counts
	for _, t := range r.Types {
		s.Objects += t.Objects
		s.Current += t.Current
		s.Lagging += t.Lagging
		s.NeverObserved += t.NeverObserved
		s.NoGeneration += t.NoGeneration
		s.RollingOut += t.RollingOut
		s.Paused += t.Paused
		s.Stalled += t.Stalled
		s.Findings += t.Findings
	}
	return s
}
