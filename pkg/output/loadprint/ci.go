package loadprint

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/load"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// CI says how a report becomes a CI report (-o github, junit, sarif).
type CI struct {
	Tool cireport.Tool
	// Fails reports whether --fail-on fails on a kind of hot loop: its
	// loops are errors, the others warnings.
	Fails func(kind string) bool
}

// hotKinds are the kinds of hot loop, as CI rules.
var hotKinds = []cireport.Rule{
	{ID: load.HotRead, Name: "hot read loop",
		Help: "one client got one object at --hot-rate per second or faster for --hot-for or longer",
		Fix:  "read the object from an informer's cache (a shared informer, controller-runtime's client) instead of getting it in a loop, and back off on errors"},
	{ID: load.WastedWrite, Name: "wasted write loop",
		Help: "one client wrote one object without effect (a create of a name that exists, an update or patch that changed nothing, a 409) at --hot-rate per second or faster for --hot-for or longer",
		Fix:  "treat AlreadyExists as success, skip a write that changes nothing, and re-read before retrying a 409"},
}

// CIRules are the CI rules of the hot loops, as the reports give them.
func CIRules() []cireport.Rule {
	out := make([]cireport.Rule, len(hotKinds))
	for i, k := range hotKinds {
		out[i] = k
		out[i].ID = RuleID(k.ID)
	}
	return out
}

// RuleID is the CI rule of a kind of hot loop: "conflicts/hot-read".
func RuleID(kind string) string { return "conflicts/" + kind }

// CIReport turns rep into a CI report: a rule, a group and a case per
// kind of hot loop, the case holding a finding per loop, located at its
// object. A kind with no loop is a passing case.
func CIReport(rep *load.Report, ci CI) cireport.Report {
	var kinds []cireport.Kind
	for i, r := range CIRules() {
		k := cireport.Kind{Rule: r, Class: hotKinds[i].ID}
		for _, f := range rep.Findings {
			if f.Kind != k.Class {
				continue
			}
			typ := f.Ref.Resource
			if f.Ref.APIGroup != "" {
				typ += "." + f.Ref.APIGroup
			}
			k.Findings = append(k.Findings, cireport.Finding{
				Object: cireport.Object{Type: typ, Namespace: f.Ref.Namespace, Name: f.Ref.Name}, Message: hotMessage(f)})
		}
		kinds = append(kinds, k)
	}
	return cireport.PerKind(ci.Tool, "conflicts", ci.Fails, kinds)
}

// hotMessage says who looped, how often and when.
func hotMessage(f load.Finding) string {
	return fmt.Sprintf("%s sent %d requests (%.1f a second) from %s for %s", f.Client, f.Count, f.PerSecond,
		f.From.UTC().Format(time.RFC3339), output.Duration(f.To.Sub(f.From)))
}

// PrintCI writes the report in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, rep *load.Report, ci CI) error {
	return cireport.Write(out, f, CIReport(rep, ci))
}
