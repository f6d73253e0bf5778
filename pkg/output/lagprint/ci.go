package lagprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// NotListedRule is the CI rule of a type lag could not list.
const NotListedRule = "lag/not-listed"

// OtherObjects names a type's case for the objects the report does not
// list (current, or without a generation, unless --all lists them). The
// name holds no count: CI systems track a testcase by its name.
const OtherObjects = "other objects: current or no generation"

// RuleID is the CI rule of a state: "lag/paused".
func RuleID(st lag.State) string { return "lag/" + string(st) }

// CIRules are lag's CI rules: one per state that is not done
// (lag.NotDone), then NotListedRule.
func CIRules() []cireport.Rule {
	var out []cireport.Rule
	for _, s := range lag.NotDone {
		out = append(out, cireport.Rule{ID: RuleID(s.State), Name: string(s.State), Help: s.Help, Fix: s.Fix})
	}
	return append(out, cireport.Rule{ID: NotListedRule, Name: "not listed",
		Help: "lag could not list the type (the user may not, or the list failed): its objects were not checked, so the results are partial",
		Fix:  "grant list and watch on the type (kubectl auth can-i list TYPE), or leave it out of the TYPE list"})
}

// CIReport turns rep into a CI report: a group per type, a case per
// object the report lists, and one more for the type's objects it does
// not list (OtherObjects); a type that could not be listed has a case
// "list" with a warning. An object that is not done is a finding of its
// state's rule, an Error when it counts (Item.Finding: lag exits 1 on it)
// and a Warning otherwise (under --max-lag or --min-age, or of a type not
// known to report an observedGeneration), located at TYPE/NS/NAME.
//
// The groups are types rather than namespaces: a scan, its counts and a
// list error are per type, and cluster-scoped objects have no namespace.
func CIReport(rep *lag.Report, tool cireport.Tool) cireport.Report {
	out := cireport.Report{Tool: tool, Command: "lag", Rules: CIRules()}
	byType := map[string][]lag.Item{}
	for _, it := range rep.Items {
		byType[it.Resource] = append(byType[it.Resource], it)
	}
	for _, t := range rep.Types {
		name := t.Name()
		g := cireport.Group{Name: name}
		if t.Error != "" {
			g.Cases = append(g.Cases, cireport.Case{Name: "list", Findings: []cireport.Finding{
				{Rule: NotListedRule, Level: cireport.Warning, Message: t.Error, Object: cireport.Object{Type: name}},
			}})
		}
		items := byType[name]
		for _, it := range items {
			g.Cases = append(g.Cases, itemCase(rep, it))
		}
		if t.Objects > len(items) {
			g.Cases = append(g.Cases, cireport.Case{Name: OtherObjects})
		}
		out.Groups = append(out.Groups, g)
	}
	return out
}

// itemCase is the case of one object: passing when it is done (current,
// or no-generation, listed with --all).
func itemCase(rep *lag.Report, it lag.Item) cireport.Case {
	obj := cireport.Object{Type: it.Resource, Namespace: it.Namespace, Name: it.Name}
	c := cireport.Case{Name: it.Name}
	if it.Namespace != "" {
		c.Name = it.Namespace + "/" + it.Name
	}
	if it.State == lag.Current || it.State == lag.NoGeneration {
		return c
	}
	level := cireport.Warning
	if it.Finding {
		level = cireport.Error
	}
	msg := fmt.Sprintf("generation %s, observed %s, newest spec %s old", optInt(it.Generation), optInt(it.ObservedGeneration), Age(rep.Now, it.SpecChangedAt))
	if len(it.Explanations) > 0 {
		msg += ": " + strings.Join(it.Explanations, "; ")
	}
	c.Findings = []cireport.Finding{{Rule: RuleID(it.State), Level: level, Message: msg, Object: obj}}
	return c
}

// PrintCI writes rep in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, rep *lag.Report, tool cireport.Tool) error {
	return cireport.Write(out, f, CIReport(rep, tool))
}
