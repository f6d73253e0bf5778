package lagprint

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

var tool = cireport.Tool{Name: "kubectl-rv", Version: "0.1.0"}

func TestPrintCI(t *testing.T) {
	for name, rep := range map[string]func() *lag.Report{"ci": sampleReport, "ci-rollout": rolloutReport} {
		cigolden.Assert(t, name, func(w io.Writer, f output.Format) error {
			return PrintCI(w, f, rep(), tool)
		})
	}
}

// TestCIReportCases: a group per type, a case per listed object and one
// for the objects not listed; an object that counts is an error of its
// state's rule at TYPE/NS/NAME, one that does not a warning; a type that
// could not be listed a warning; every state that is not done has its
// rule, with a fix.
func TestCIReportCases(t *testing.T) {
	type got struct {
		Group, Case, Rule string
		Level             cireport.Level
		Object            string
	}
	cases := func(r cireport.Report) []got {
		var gots []got
		for _, g := range r.Groups {
			for _, c := range g.Cases {
				if len(c.Findings) == 0 {
					gots = append(gots, got{Group: g.Name, Case: c.Name})
				}
				for _, f := range c.Findings {
					gots = append(gots, got{g.Name, c.Name, f.Rule, f.Level, f.Object.String()})
				}
			}
		}
		return gots
	}
	want := []got{
		{"deployments.apps", "shop/api", "lag/lagging", cireport.Error, "deployments.apps/shop/api"},
		{"deployments.apps", "shop/web", "lag/lagging", cireport.Error, "deployments.apps/shop/web"},
		{Group: "deployments.apps", Case: OtherObjects},
		{"widgets.example.com", "shop/blue\x1b[31m", "lag/lagging", cireport.Error, "widgets.example.com/shop/blue\x1b[31m"},
		{"widgets.example.com", "shop/green", "lag/never-observed", cireport.Warning, "widgets.example.com/shop/green"},
		{Group: "widgets.example.com", Case: OtherObjects},
		{"secrets", "list", NotListedRule, cireport.Warning, "secrets"},
	}
	if diff := cmp.Diff(want, cases(CIReport(sampleReport(), tool))); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	want = []got{
		{"deployments.apps", "shop/api", "lag/paused", cireport.Error, "deployments.apps/shop/api"},
		{"deployments.apps", "shop/web", "lag/stalled", cireport.Error, "deployments.apps/shop/web"},
		{Group: "deployments.apps", Case: OtherObjects},
		{"statefulsets.apps", "shop/db", "lag/rolling-out", cireport.Error, "statefulsets.apps/shop/db"},
	}
	r := CIReport(rolloutReport(), tool)
	if diff := cmp.Diff(want, cases(r)); diff != "" {
		t.Errorf("rollout cases (-want +got):\n%s", diff)
	}
	if len(r.Rules) != len(lag.NotDone)+1 {
		t.Errorf("%d rules, want one per state that is not done and %s", len(r.Rules), NotListedRule)
	}
	for _, ru := range r.Rules {
		if ru.Help == "" || ru.Fix == "" {
			t.Errorf("rule %s: help %q, fix %q", ru.ID, ru.Help, ru.Fix)
		}
	}
}
