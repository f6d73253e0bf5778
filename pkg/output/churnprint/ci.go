package churnprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// CI says how a report becomes a CI report (-o github, junit, sarif).
type CI struct {
	Tool cireport.Tool
	// Fails reports whether --fail-on fails on a findings class: the
	// findings of such a class are errors, the others warnings.
	Fails func(class string) bool
}

// RuleID is the CI rule of a kind of finding: "churn/loop".
func RuleID(k string) string { return "churn/" + k }

// CIReport turns rep into a CI report: a rule, a group and a case per
// kind of finding (churn.FindingKinds), the case holding a finding per
// self-loop or fight, located at its object (TYPE/NS/NAME, the type as
// resource.group), its message naming the writers. A kind with no
// finding is a passing case.
func CIReport(rep *churn.Report, ci CI) cireport.Report {
	var kinds []cireport.Kind
	for _, k := range churn.FindingKinds {
		ck := cireport.Kind{Rule: cireport.Rule{ID: RuleID(k.ID), Name: k.Name, Help: k.Help, Fix: k.Fix}, Class: k.Class}
		add := func(obj cireport.Object, msg string) {
			ck.Findings = append(ck.Findings, cireport.Finding{Object: obj, Message: msg})
		}
		switch k.ID {
		case "loop":
			for _, l := range rep.Loops {
				add(cireport.Object{Type: l.Resource, Namespace: l.Namespace, Name: l.Name}, loopMessage(l))
			}
		case "fight":
			for _, f := range rep.Fights {
				add(cireport.Object{Type: f.Resource, Namespace: f.Namespace, Name: strings.TrimPrefix(f.Object, f.Resource+"/")}, fightMessage(f))
			}
		}
		kinds = append(kinds, ck)
	}
	return cireport.PerKind(ci.Tool, "churn", ci.Fails, kinds)
}

// loopMessage says who loops, how fast, and what changes when the object
// was explained.
func loopMessage(l churn.Loop) string {
	s := fmt.Sprintf("%s rewrote it %d times (%s a minute) with no other writer between and no generation change, mostly %s writes",
		manager(l.Manager, l.Subresource), l.Writes, num(l.PerMinute), l.Class)
	if l.Explain != nil {
		s += "; changing: " + Explain(l.Explain)
	}
	return s
}

// fightMessage says which field changed hands between whom, how often.
func fightMessage(f churn.Fight) string {
	return fmt.Sprintf("%s changed hands %s times between %s (%s a minute)",
		f.Field, output.AtLeast(f.Flips, f.Capped), strings.Join(f.Managers, ", "), num(f.PerMinute))
}

// PrintCI writes the report in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, rep *churn.Report, ci CI) error {
	return cireport.Write(out, f, CIReport(rep, ci))
}
