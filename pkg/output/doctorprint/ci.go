package doctorprint

import (
	"io"

	"github.com/kubectl-rv/kubectl-rv/pkg/doctor"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// NotProbedRule is the CI rule of a type doctor could not probe: the user
// may not list it, its first list did not answer, or it was removed during
// the run.
const NotProbedRule = "doctor/not-probed"

// RuleID is the CI rule of a check: "doctor/items-have-rv".
func RuleID(check string) string { return "doctor/" + check }

// CIRules are doctor's CI rules: one per check (doctor.Checks: what the
// endpoint must do and who breaks, and the fix), then NotProbedRule.
func CIRules() []cireport.Rule {
	var out []cireport.Rule
	for _, c := range doctor.Checks {
		out = append(out, cireport.Rule{ID: RuleID(c.ID), Name: c.ID,
			Help: "The endpoint must keep this contract: " + c.Contract + ". Without it, these break: " + c.Breaks + ".", Fix: c.Fix})
	}
	return append(out, cireport.Rule{ID: NotProbedRule, Name: "not probed",
		Help: "doctor could not probe the type: the user may not list or watch it, its first list did not answer in time, or it was removed during the run; its checks did not run, so the results are partial.",
		Fix:  "grant list and watch on the type (kubectl auth can-i list TYPE), check that its server and storage answer, or leave it out of the TYPE list"})
}

// CIReport turns rep into a CI report: a group per type, a case per check
// it ran. A failed check is a finding of level Error (doctor exits 1 on
// it), a warned one a Warning, a skipped one a skipped case that says
// why, a passed one a passing case. A type that could not be probed has
// one case, "probe", with a warning. Findings are located at the type
// (TYPE), or at the object a check names (TYPE/NS/NAME: the item without
// a resourceVersion, the item newer than its list).
func CIReport(rep *doctor.Report, tool cireport.Tool) cireport.Report {
	out := cireport.Report{Tool: tool, Command: "doctor", Rules: CIRules()}
	for _, r := range rep.Resources {
		g := cireport.Group{Name: r.Name()}
		typ := cireport.Object{Type: r.Name()}
		if r.Warning != "" {
			g.Cases = append(g.Cases, cireport.Case{Name: "probe", Findings: []cireport.Finding{
				{Rule: NotProbedRule, Level: cireport.Warning, Message: r.Warning, Object: typ},
			}})
		}
		for _, c := range r.Checks {
			g.Cases = append(g.Cases, checkCase(typ, c))
		}
		out.Groups = append(out.Groups, g)
	}
	return out
}

// checkCase is the case of one check's verdict on the type typ.
func checkCase(typ cireport.Object, c doctor.Check) cireport.Case {
	cs := cireport.Case{Name: c.ID}
	level := cireport.Warning
	switch c.Status {
	case doctor.Pass:
		return cs
	case doctor.Skip:
		cs.Skipped = c.Observed
		return cs
	case doctor.Fail:
		level = cireport.Error
	}
	obj := typ
	if name := c.Values["itemName"]; name != "" {
		obj.Namespace, obj.Name = c.Values["itemNamespace"], name
	}
	cs.Findings = []cireport.Finding{{Rule: RuleID(c.ID), Level: level, Message: c.Observed, Object: obj}}
	return cs
}

// PrintCI writes rep in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, rep *doctor.Report, tool cireport.Tool) error {
	return cireport.Write(out, f, CIReport(rep, tool))
}
