package cireport

import (
	"fmt"
	"io"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// Level is how a finding weighs.
type Level string

// The levels, as SARIF names them. A finding the command's gate fails on
// (its --fail-on) is an Error; one it reports without failing, a Warning.
const (
	Error   Level = "error"
	Warning Level = "warning"
	Note    Level = "note"
)

// LevelOf is the level of a finding that a command's gate judges by key
// (a --fail-on class, or conflicts' writer for --fail-on-rate): Error
// when fails is set and fails on key, Warning otherwise. The command
// layer passes its gate, so that -o never changes the exit code.
func LevelOf(fails func(key string) bool, key string) Level {
	if fails != nil && fails(key) {
		return Error
	}
	return Warning
}

// Tool names the program that made the report.
type Tool struct {
	Name, Version, InformationURI string
}

// Rule is one kind of finding.
type Rule struct {
	// ID is stable and unique in a report: "predict/apply-conflict".
	ID string
	// Name is the kind in a few words: "apply conflict".
	Name string
	// Help says what the finding means.
	Help string
	// Fix is the one-line fix.
	Fix string
}

// Object is the logical location of a finding: the Kubernetes object it
// is about, or a whole type (Name "") for a finding about an endpoint.
type Object struct {
	Type, Namespace, Name string
}

// String is TYPE/NS/NAME, TYPE/NAME for a cluster-scoped object, or TYPE
// for a whole type.
func (o Object) String() string {
	switch {
	case o.Name == "":
		return o.Type
	case o.Namespace == "":
		return o.Type + "/" + o.Name
	}
	return o.Type + "/" + o.Namespace + "/" + o.Name
}

// localName is the object within its type: NS/NAME, NAME, or "" for a
// whole type.
func (o Object) localName() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Location is where in a file a finding points.
type Location struct {
	// File is the path of the file that was read, relative to the working
	// directory where it is inside it, with forward slashes; "" when the
	// objects came from standard input.
	File string
	// Line and Column count from 1; 0 is not known (a column is unknown
	// when only the object's first line is).
	Line, Column int
	// Template is the file the object was rendered from (helm template's
	// "# Source:", kustomize's origin annotation), or "": when set, Line
	// and Column are in the rendered output, and the file a pull request
	// changes is Template.
	Template string
	// TemplateTool is "helm" or "kustomize" when Template is set.
	TemplateTool string
}

// Known reports whether l names a line.
func (l Location) Known() bool { return l.Line > 0 }

// Finding is one finding.
type Finding struct {
	// Rule is the ID of a Rule of the report.
	Rule    string
	Level   Level
	Message string
	Object  Object
	// Location is the finding's place in a file; the zero Location when
	// the finding is about the cluster only.
	Location Location
}

// Case is one testcase: a unit that passes, fails or was skipped.
type Case struct {
	// Name is the unit within its group: a write method, a check, or the
	// object itself (NS/NAME), which the writers then do not repeat after
	// the object.
	Name     string
	Findings []Finding
	// Skipped, when set, says why the case could not be judged (a doctor
	// check the cluster cannot show); a skipped case has no findings.
	Skipped string
}

// Group is the cases of one object (predict, lag), one type (doctor) or
// one finding kind (churn, conflicts, leases): a GitHub log group and a
// JUnit testsuite.
type Group struct {
	Name  string
	Cases []Case
}

// Report is what a command found, for a CI system.
type Report struct {
	Tool Tool
	// Command is the command that made it: "predict".
	Command string
	Rules   []Rule
	Groups  []Group
}

// Write renders r in the CI format f (output.GitHub, JUnit or SARIF) to
// w.
func Write(w io.Writer, f output.Format, r Report) error {
	switch f {
	case output.GitHub:
		return WriteGitHub(w, r)
	case output.JUnit:
		return WriteJUnit(w, r)
	case output.SARIF:
		return WriteSARIF(w, r)
	}
	return fmt.Errorf("unknown CI format %q", f)
}

// rule returns the rule of id and its index, or -1.
func (r Report) rule(id string) (Rule, int) {
	for i, ru := range r.Rules {
		if ru.ID == id {
			return ru, i
		}
	}
	return Rule{ID: id}, -1
}

// about names what a finding of case c of group g is about: the object
// and the case ("Deployment/shop/web apply"), or the object alone when the
// case is the object ("deployments.apps/shop/web", not "... shop/web"), is
// named as the finding's rule is (a doctor check: "configmaps", not
// "configmaps paging" after the rule "paging") or as its group is (a
// finding kind of churn's, conflicts' or leases').
func (r Report) about(g Group, c Case, f Finding) string {
	if rule, _ := r.rule(f.Rule); c.Name == "" || c.Name == g.Name || c.Name == f.Object.localName() || c.Name == rule.Name {
		return f.Object.String()
	}
	return f.Object.String() + " " + c.Name
}

// where is a location in words, for text that is not a file annotation:
// "web.yaml:7:3", "web.yaml" (no line known), "<stdin>:7",
// "chart/templates/web.yaml (helm template; rendered <stdin>:7:3)". It is
// "" when l names no file, no line and no template.
func where(l Location) string {
	file := l.File
	if file == "" {
		file = "<stdin>"
	}
	at := l.File
	if l.Known() {
		at = fmt.Sprintf("%s:%d", file, l.Line)
		if l.Column > 0 {
			at += fmt.Sprintf(":%d", l.Column)
		}
	}
	if l.Template == "" {
		return at
	}
	s := fmt.Sprintf("%s (%s template", l.Template, l.TemplateTool)
	if at != "" {
		s += "; rendered " + at
	}
	return s + ")"
}

// Kind is one kind of finding in a report made of a rule, a group and a
// case per kind (churn's, leases', conflicts' hot loops).
type Kind struct {
	Rule Rule
	// Class is the --fail-on class that makes its findings errors.
	Class string
	// Findings need only their Object and Message: PerKind sets their
	// Rule and Level.
	Findings []Finding
}

// PerKind is a report with a rule, a group and a case per kind, in
// order, group and case named after the rule. A finding is an error when
// fails fails on its kind's class, else a warning; a kind without a
// finding is a passing case.
func PerKind(tool Tool, command string, fails func(class string) bool, kinds []Kind) Report {
	out := Report{Tool: tool, Command: command}
	for _, k := range kinds {
		out.Rules = append(out.Rules, k.Rule)
		level := LevelOf(fails, k.Class)
		fs := make([]Finding, len(k.Findings))
		for i, f := range k.Findings {
			f.Rule, f.Level = k.Rule.ID, level
			fs[i] = f
		}
		if len(fs) == 0 {
			fs = nil
		}
		out.Groups = append(out.Groups, Group{Name: k.Rule.Name, Cases: []Case{{Name: k.Rule.Name, Findings: fs}}})
	}
	return out
}
