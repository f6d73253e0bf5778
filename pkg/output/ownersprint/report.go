package ownersprint

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// Kind is the kind of the structured report.
const Kind = "OwnersReport"

// Options tune the renderers.
type Options struct {
	// Now is the time ages are measured from.
	Now time.Time
	// ShowSecrets prints Secret values in the blame view.
	ShowSecrets bool
	// Color paints hazards and shared fields.
	Color bool
	// ObjectColumns adds NAMESPACE and OBJECT columns to the tables even for
	// one object (as kubectl does with -A); they are always there for several.
	ObjectColumns bool
	// Time says how the entries' times are shown; the zero value is
	// TimeRelative.
	Time TimeFormat
	// Locate places the fields of objects read from files: with it, -o
	// wide adds a POSITION column (file:line:column) to the table and
	// drift views.
	Locate Locate
}

// TimeFormat says how the tree, blame, table and summary views show the
// time of an entry's last write.
type TimeFormat string

// The time formats.
const (
	// TimeRelative is the age, kubectl style ("5m", "3h"); a time ahead of
	// Now shows as "in 5m (clock skew)".
	TimeRelative TimeFormat = "relative"
	// TimeFull is the time itself, RFC 3339 in UTC: output that does not
	// change from run to run.
	TimeFull TimeFormat = "full"
	// TimeNone leaves the time out.
	TimeNone TimeFormat = "none"
)

// TimeFormats are the accepted formats, the default first.
var TimeFormats = []TimeFormat{TimeRelative, TimeFull, TimeNone}

// Report is the structured output of kubectl rv owners.
type Report struct {
	output.TypeMeta `json:",inline"`
	Items           []ObjectReport `json:"items"`
}

// ObjectReport is one object's ownership.
type ObjectReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Source is the file and line the object was read from; empty for the cluster.
	Source  string                 `json:"source,omitempty"`
	Entries []EntryReport          `json:"entries"`
	Fields  []FieldReport          `json:"fields"`
	Hazards []managedfields.Hazard `json:"hazards"`
	// Drift is there with --expect-manager or --drift.
	Drift *DriftReport `json:"drift,omitempty"`
}

// DriftReport is an object's drift from its expected manager.
type DriftReport struct {
	// ExpectedManager is empty when none could be inferred (no Apply entry).
	ExpectedManager string `json:"expectedManager"`
	// Inferred is true when the expected manager is the main applier
	// kubectl rv chose (no name given).
	Inferred bool `json:"inferred"`
	// ExpectedLeaves is how many of the object's owned leaves (before any
	// filter) the expected manager owns, of Leaves.
	ExpectedLeaves int `json:"expectedLeaves"`
	Leaves         int `json:"leaves"`
	// Fields are the fields owned by other managers.
	Fields []DriftFieldReport `json:"fields"`
	// StatusFieldsLeftOut is how many fields only /status writers own
	// besides the expected manager, left out of Fields (without
	// --include-status).
	StatusFieldsLeftOut int `json:"statusFieldsLeftOut,omitempty"`
	// ScaleFieldsLeftOut is the same for /scale writers (without
	// --include-scale).
	ScaleFieldsLeftOut int `json:"scaleFieldsLeftOut,omitempty"`
}

// DriftFieldReport is a field owned by a manager other than the expected one.
type DriftFieldReport struct {
	Path     string   `json:"path"`
	Elements []string `json:"elements"`
	// Owners are the owners other than the expected manager; subresource
	// says when one wrote through /scale or /status.
	Owners []managedfields.Owner `json:"owners"`
	// Shared is true when the expected manager owns the field too.
	Shared bool `json:"shared"`
	// Line and Column are where the field is written in the file the
	// object was read from (-f), as in FieldReport.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

func newDriftReport(o owners.Object, locate Locate) *DriftReport {
	d := o.Drift
	if d == nil {
		return nil
	}
	r := &DriftReport{ExpectedManager: d.Expected, Inferred: d.Inferred, ExpectedLeaves: d.ExpectedLeaves, Leaves: d.Leaves,
		StatusFieldsLeftOut: d.StatusFields, ScaleFieldsLeftOut: d.ScaleFields, Fields: make([]DriftFieldReport, 0, len(d.Fields))}
	for _, f := range d.Fields {
		p := f.Node.Path()
		at := locate.field(o, p)
		r.Fields = append(r.Fields, DriftFieldReport{Path: managedfields.PathString(p), Elements: managedfields.PathElements(p), Owners: f.Others, Shared: f.Shared,
			Line: at.Line, Column: at.Column})
	}
	return r
}

// EntryReport is one managedFields entry.
type EntryReport struct {
	Index       int       `json:"index"`
	Manager     string    `json:"manager"`
	Operation   string    `json:"operation"`
	APIVersion  string    `json:"apiVersion,omitempty"`
	Subresource string    `json:"subresource,omitempty"`
	Time        time.Time `json:"time,omitzero"`
	// Fields is how many fields the entry owns.
	Fields int `json:"fields"`
}

// FieldReport is one owned field.
type FieldReport struct {
	// Path is the field's kubectl-style path, as the API server prints it in
	// conflict messages: .spec.template.spec.containers[name="nginx"].image
	Path string `json:"path"`
	// Elements are the path's elements as FieldsV1 keys ("f:metadata",
	// "f:annotations", "f:deployment.kubernetes.io/revision",
	// "k:{\"name\":\"nginx\"}", "v:\"x\"", "i:0"): unlike Path, they are
	// unambiguous when a field name holds a dot.
	Elements []string              `json:"elements"`
	Owners   []managedfields.Owner `json:"owners"`
	// Present is false when the object no longer has the field.
	Present bool `json:"present"`
	// Line and Column are where the field is written in the file the
	// object was read from (-f): its key, or a list item's first line
	// (docs/positions.md). Absent for the cluster, standard input and a
	// field the file does not write.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

// NewReport builds the structured report; locate places the fields of
// objects read from files (nil: no positions).
func NewReport(objs []owners.Object, locate Locate) Report {
	r := Report{TypeMeta: output.NewTypeMeta(Kind), Items: make([]ObjectReport, 0, len(objs))}
	for _, o := range objs {
		or := ObjectReport{
			APIVersion: o.Object.GetAPIVersion(), Kind: o.Object.GetKind(),
			Namespace: o.Object.GetNamespace(), Name: o.Object.GetName(), Source: o.Source,
			Entries: []EntryReport{}, Fields: []FieldReport{}, Hazards: o.Hazards,
			Drift: newDriftReport(o, locate),
		}
		if or.Hazards == nil {
			or.Hazards = []managedfields.Hazard{}
		}
		for _, e := range o.Entries {
			or.Entries = append(or.Entries, EntryReport{Index: e.Index, Manager: e.Manager, Operation: string(e.Operation),
				APIVersion: e.APIVersion, Subresource: e.Subresource, Time: e.Time, Fields: e.FieldCount()})
		}
		or.Fields = make([]FieldReport, 0, o.Ownership.OwnedCount())
		o.Ownership.EachField(true, func(n *managedfields.Node, path string, elems []string) {
			fr := FieldReport{Path: path, Elements: slices.Clone(elems), Owners: n.Owners, Present: n.Present}
			if locate != nil && n.Present {
				at := locate.field(o, n.Path())
				fr.Line, fr.Column = at.Line, at.Column
			}
			or.Fields = append(or.Fields, fr)
		})
		r.Items = append(r.Items, or)
	}
	return r
}

// SkewNote is the suffix of a time ahead of now.
const SkewNote = " (clock skew)"

// age is t relative to now, kubectl style ("5m", "3h"), or "in 5m (clock
// skew)" when t is ahead of now; empty for no time.
func age(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	if d < 0 {
		// A writer's clock (or this machine's) is off: "0s" would hide it.
		return "in " + duration.HumanDuration(-d) + SkewNote
	}
	return duration.HumanDuration(d)
}

// timeText shows t in format f: an age, the RFC 3339 time in UTC, or
// nothing; empty for no time.
func timeText(f TimeFormat, now, t time.Time) string {
	switch {
	case t.IsZero() || f == TimeNone:
		return ""
	case f == TimeFull:
		return t.UTC().Format(time.RFC3339)
	}
	return age(now, t)
}

// describe names an object: "Deployment default/web".
func describe(o owners.Object) string {
	name := o.Object.GetName()
	if ns := o.Object.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	s := o.Object.GetKind()
	if name != "" {
		// An object without a name (a dump cut short) has none to show.
		s += " " + name
	}
	if o.Source != "" {
		s += " (" + o.Source + ")"
	}
	return s
}

// ownerLabel is "kubectl (Apply, 2m)" or "kube-controller-manager
// (Update/status, 1m)"; the time as opts.Time says.
func ownerLabel(ow managedfields.Owner, opts Options) string {
	name := ow.Manager
	if name == "" {
		name = `""`
	}
	s := name + " (" + string(ow.Operation)
	if ow.Subresource != "" {
		s += "/" + ow.Subresource
	}
	if a := timeText(opts.Time, opts.Now, ow.Time); a != "" {
		s += ", " + a
	}
	return s + ")"
}

func ownersLabel(owners []managedfields.Owner, opts Options) string {
	s := ""
	for i, ow := range owners {
		if i > 0 {
			s += ", "
		}
		s += ownerLabel(ow, opts)
	}
	return s
}

// labeler remembers owner labels: every field of an entry (or of the same
// few entries) has the same one, and a large object has thousands of fields.
type labeler struct {
	opts  Options
	cache map[[4]int]string
}

func newLabeler(opts Options) *labeler { return &labeler{opts: opts, cache: map[[4]int]string{}} }

func (l *labeler) label(owners []managedfields.Owner) string {
	key, ok := ownersKey(owners)
	if !ok {
		return ownersLabel(owners, l.opts)
	}
	if s, ok := l.cache[key]; ok {
		return s
	}
	s := ownersLabel(owners, l.opts)
	l.cache[key] = s
	return s
}
