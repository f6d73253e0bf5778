package predictprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// CI says how a report becomes a CI report (-o github, junit, sarif).
type CI struct {
	Tool cireport.Tool
	// Fails reports whether --fail-on fails on a findings class: the
	// findings of such a class are errors, the others warnings.
	Fails func(class string) bool
	// Locate returns where a finding about field (a field path as the
	// API server prints it, "" for the object itself) of the object read
	// from ref.Source points. It is nil, or returns the zero Location,
	// where the object was read from no file (TYPE/NAME with --patch).
	Locate func(ref predict.ObjectRef, field string) cireport.Location
}

// RuleID is the CI rule of a verdict: "predict/apply-conflict".
func RuleID(v predict.Verdict) string { return "predict/" + string(v) }

// CIReport turns r into a CI report: a rule per verdict that is a
// finding (predict.FindingVerdicts), a group per object, a case per
// method, and a finding per conflicting field of an apply conflict, per
// field a clobber takes or removes, and per other verdict that is a
// finding. Each is located at its field's line and column (an apply
// conflict's field, a clobbered field, the resourceVersion of a 409) or
// at the object's first line.
func CIReport(r Report, ci CI) cireport.Report {
	out := cireport.Report{Tool: ci.Tool, Command: "predict"}
	for _, v := range predict.FindingVerdicts {
		out.Rules = append(out.Rules, cireport.Rule{ID: RuleID(v.Verdict), Name: strings.ReplaceAll(string(v.Verdict), "-", " "), Help: v.Help, Fix: v.Fix})
	}
	for _, o := range r.Objects {
		obj := cireport.Object{Type: o.Object.Kind, Namespace: o.Object.Namespace, Name: o.Object.Name}
		g := cireport.Group{Name: obj.String()}
		for _, m := range o.Methods {
			g.Cases = append(g.Cases, cireport.Case{Name: caseName(m), Findings: methodFindings(ci, o, m, obj)})
		}
		out.Groups = append(out.Groups, g)
	}
	return out
}

// caseName is a method, and the field manager of one of kubectl's verbs.
func caseName(m predict.MethodResult) string {
	if m.Manager != "" {
		return fmt.Sprintf("%s (field manager %q)", m.Method, m.Manager)
	}
	return string(m.Method)
}

// methodFindings are the findings of one method's verdict.
func methodFindings(ci CI, o predict.Result, m predict.MethodResult, obj cireport.Object) []cireport.Finding {
	class := predict.FindingClass(m.Verdict)
	if class == "" {
		return nil
	}
	level := cireport.LevelOf(ci.Fails, class)
	at := func(field, msg string) cireport.Finding {
		f := cireport.Finding{Rule: RuleID(m.Verdict), Level: level, Message: msg, Object: obj}
		if ci.Locate != nil {
			f.Location = ci.Locate(o.Object, field)
		}
		return f
	}
	var out []cireport.Finding
	switch m.Verdict {
	case predict.ApplyConflict:
		for _, c := range m.Conflicts {
			out = append(out, at(c.Field, fmt.Sprintf("%s conflicts on %s, owned by %s", m.Method, c.Field, c.Owner())))
		}
	case predict.Clobber:
		removed := map[string]bool{}
		for _, c := range m.Changed {
			removed[c.Path] = c.Change == "removed"
		}
		for _, c := range m.Clobbered {
			for _, f := range c.Fields {
				verb := "takes"
				if removed[f] {
					verb = "removes"
				}
				out = append(out, at(f, fmt.Sprintf("%s %s %s from %q", m.Method, verb, f, c.Manager)))
			}
		}
	case predict.Conflict:
		out = append(out, at(".metadata.resourceVersion", fmt.Sprintf("%s: %s", m.Method, detail(o, m, true))))
	}
	if len(out) == 0 {
		out = append(out, at("", fmt.Sprintf("%s: %s: %s", m.Method, m.Verdict, detailOf(o, m, true))))
	}
	return out
}

// PrintCI writes the report in the CI format f to out, and its notes to
// errOut as the table does. Like Print, it refuses a Secret's result
// that has not been through pkg/redact.
func PrintCI(out, errOut io.Writer, f output.Format, r Report, ci CI) error {
	if err := r.CheckSecrets(); err != nil {
		return err
	}
	if err := cireport.Write(out, f, CIReport(r, ci)); err != nil {
		return err
	}
	return printNotes(errOut, r)
}
