package conflictsprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// CI says how a report becomes a CI report (-o github, junit, sarif).
type CI struct {
	Tool cireport.Tool
	// Fails reports whether --fail-on-rate fails on a writer (as
	// WriterStats.Writer.String names it): its 409s are errors, the
	// others warnings.
	Fails func(writer string) bool
}

// RuleID is the CI rule of a cause: "conflicts/contention".
func RuleID(c conflicts.Cause) string { return "conflicts/" + string(c) }

// CIReport turns rep into a CI report: a rule, a group and a case per
// cause (conflicts.Causes, with its help and fix), the case holding a
// finding per object and writer with 409s of the cause
// (CauseStats.Objects, which Config.CauseObjects fills), located at the
// object (TYPE/NS/NAME, the type as resource.group), its message naming
// the writer, its 409s and its conflict rate. A cause without 409s is a
// passing case.
func CIReport(rep *conflicts.Report, ci CI) cireport.Report {
	out := cireport.Report{Tool: ci.Tool, Command: "conflicts"}
	rates := map[string]float64{}
	for _, w := range rep.Writers {
		rates[w.Writer.String()] = w.ConflictRate
	}
	byCause := map[conflicts.Cause][]conflicts.CauseObject{}
	for _, c := range rep.Causes {
		byCause[c.Cause] = c.Objects
	}
	for _, info := range conflicts.Causes {
		out.Rules = append(out.Rules, cireport.Rule{ID: RuleID(info.Cause), Name: strings.ReplaceAll(string(info.Cause), "-", " "), Help: info.Help, Fix: info.Fix})
		var fs []cireport.Finding
		for _, o := range byCause[info.Cause] {
			level := cireport.LevelOf(ci.Fails, o.Writer)
			obj := cireport.Object{Type: resourceGroup(o.Object), Namespace: o.Object.Namespace, Name: o.Object.Name}
			if obj.Name == "" {
				obj.Name = "(generated)"
			}
			msg := fmt.Sprintf("%s of %s (its conflict rate %.1f%%)", text.Plural(o.Count, "409"), o.Writer, 100*rates[o.Writer])
			fs = append(fs, cireport.Finding{Rule: RuleID(info.Cause), Level: level, Object: obj, Message: msg})
		}
		out.Groups = append(out.Groups, cireport.Group{Name: string(info.Cause), Cases: []cireport.Case{{Name: string(info.Cause), Findings: fs}}})
	}
	return out
}

// resourceGroup is an object's type as kubectl reads it: resource.group,
// or the resource for the core group.
func resourceGroup(k conflicts.ObjectKey) string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}

// PrintCI writes the report in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, rep *conflicts.Report, ci CI) error {
	return cireport.Write(out, f, CIReport(rep, ci))
}
