package churn

import (
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Config tunes a churn run. NewConfig fills the documented defaults.
type Config struct {
	// Stream is what to list and watch, and how to retry (its Targets are
	// set by Run from the types it is given).
	Stream follow.Config
	// Namespace limits namespaced types to one namespace; "" is all.
	Namespace string
	// LoopRate flags a self-loop: one manager rewriting one object, with no
	// other writer in between, more than this many times a minute without a
	// generation change. Default 20.
	LoopRate float64
	// MinLoopWrites is how many writes a self-loop needs at least, so that
	// two writes in a short run are no loop. Default 5.
	MinLoopWrites int
	// Fight tunes fight detection, as in watch: FightThreshold hand-overs
	// of one field within FightWindow. Defaults 4 and 1m.
	FightThreshold int
	FightWindow    time.Duration
	// Top is how many objects, managers and types the report ranks.
	// Default 20.
	Top int
	// Explain is how many of the busiest objects get their full object
	// fetched on their next writes, to name the fields that change; 0 is
	// none.
	Explain int
	// ExplainSamples is how many fetches per explained object. Default 5.
	ExplainSamples int
	// Live, when set, receives a report of the run so far every LiveEvery
	// (default 2s), ranking LiveTop (default 10) of each kind: a live top-N
	// view. It is called from the run's goroutine.
	Live      func(*Report)
	LiveEvery time.Duration
	LiveTop   int
	// Warnf receives the problems the run survives as they happen (a type
	// left out, a retry, a lost history); nil drops them. They are also in
	// Report.Warnings.
	Warnf func(format string, args ...any)
}

// NewConfig returns a Config with the defaults.
func NewConfig() Config {
	return Config{
		Stream: follow.NewConfig(), LoopRate: 20, MinLoopWrites: 5,
		FightThreshold: 4, FightWindow: time.Minute, Top: 20, ExplainSamples: 5,
		LiveEvery: 2 * time.Second, LiveTop: 10,
	}
}

// Counts are writes by class.
type Counts struct {
	Writes   int `json:"writes"`
	Spec     int `json:"spec"`
	Status   int `json:"status"`
	Metadata int `json:"metadata"`
	Other    int `json:"other"`
}

func (c *Counts) add(cl follow.Class) {
	c.Writes++
	switch cl {
	case follow.Spec:
		c.Spec++
	case follow.Status:
		c.Status++
	case follow.Metadata:
		c.Metadata++
	default:
		c.Other++
	}
}

// Object is one object's churn.
type Object struct {
	// Resource is resource.group ("configmaps", "deployments.apps").
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Counts    `json:",inline"`
	// PerMinute is Writes per minute over the run.
	PerMinute float64 `json:"perMinute"`
	// Managers are the writers, busiest first.
	Managers []ManagerWrites `json:"managers"`
	// Explain names the fields that change, when the object was explained.
	Explain *Explanation `json:"explain,omitempty"`
}

// ManagerWrites is how often one manager wrote.
type ManagerWrites struct {
	// Manager is the managedFields manager; Subresource is "status" for
	// writes through /status.
	Manager     string `json:"manager"`
	Subresource string `json:"subresource,omitempty"`
	Counts      `json:",inline"`
	PerMinute   float64 `json:"perMinute"`
	// Objects is how many objects the manager wrote (in the manager ranking).
	Objects int `json:"objects,omitempty"`
}

// Type is one resource type's churn.
type Type struct {
	Resource  string `json:"resource"`
	Objects   int    `json:"objects"`
	Counts    `json:",inline"`
	PerMinute float64 `json:"perMinute"`
	Created   int     `json:"created"`
	Deleted   int     `json:"deleted"`
}

// Loop is a self-loop: one manager rewriting one object without a
// generation change and with no other writer in between, faster than
// Config.LoopRate. Writes counts only those writes.
type Loop struct {
	Resource    string  `json:"resource"`
	Namespace   string  `json:"namespace,omitempty"`
	Name        string  `json:"name"`
	Manager     string  `json:"manager"`
	Subresource string  `json:"subresource,omitempty"`
	Writes      int     `json:"writes"`
	PerMinute   float64 `json:"perMinute"`
	// Class is the class of most of the loop's writes (status, metadata or other).
	Class follow.Class `json:"class"`
	// Explain names the fields that change, when the object was explained.
	Explain *Explanation `json:"explain,omitempty"`
}

// Fight is a field of one object changing hands between managers.
type Fight struct {
	Resource     string `json:"resource"`
	follow.Fight `json:",inline"`
}

// Explanation is what the full objects fetched on an object's writes show.
type Explanation struct {
	// Samples is how many pairs of fetched versions were compared.
	Samples int `json:"samples"`
	// Fields are the fields that changed, with how many samples they
	// changed in, most often first.
	Fields []ChangedField `json:"fields"`
	// TimestampOnly is true when every changed field holds a time: a write
	// that changes nothing but a timestamp.
	TimestampOnly bool `json:"timestampOnly,omitempty"`
}

// ChangedField is one field an explained object's writes change.
type ChangedField struct {
	Path    string `json:"path"`
	Samples int    `json:"samples"`
}

// Report is what a churn run saw.
type Report struct {
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Duration time.Duration `json:"-"`
	// TypesWatched and ObjectsWatched say what was followed; Writes counts
	// every write seen (not creations or deletions).
	TypesWatched   int             `json:"typesWatched"`
	ObjectsWatched int             `json:"objectsWatched"`
	Writes         int             `json:"writes"`
	Objects        []Object        `json:"objects"`
	Managers       []ManagerWrites `json:"managers"`
	Types          []Type          `json:"types"`
	Loops          []Loop          `json:"loops"`
	Fights         []Fight         `json:"fights"`
	Gaps           []follow.Gap    `json:"gaps,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`
}

// Findings are what churn --fail-on fails on.
var Findings = findings.Vocabulary{
	{Name: "loop", Noun: "self-loop", Help: "one manager rewriting an object faster than --loop-rate with no other writer between"},
	{Name: "fight", Noun: "fight", Help: "a field changing hands --fight-threshold times within a minute"},
}

// Findings counts the report's findings by class (Findings).
func (r *Report) Findings() findings.Counts {
	return findings.Counts{"loop": len(r.Loops), "fight": len(r.Fights)}
}

// FindingKinds are the kinds of finding, with what each means and its
// one-line fix, for the reports that explain them (a CI report's rules),
// in Findings' order: a self-loop (Report.Loops) and a fight
// (Report.Fights).
var FindingKinds = []findings.Kind{
	{ID: "loop", Name: "self-loop", Class: "loop",
		Help: "one manager rewrites one object faster than --loop-rate, with no other writer in between and no generation change: usually a status or metadata write that re-triggers its own watch",
		Fix:  "write only when something changed (compare before the update, leave timestamps alone when nothing else moved), or filter the controller's own status and metadata updates out of its watch"},
	{ID: "fight", Name: "fight", Class: "fight",
		Help: "a field changes hands between managers --fight-threshold times within a minute: each undoes the other's write",
		Fix:  "give the field one owner: leave it out of the other manager's writes (e.g. spec.replicas out of the manifest when an autoscaler scales), or make one manager yield"},
}
