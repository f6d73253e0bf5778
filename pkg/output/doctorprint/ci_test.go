package doctorprint

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/pkg/doctor"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

var tool = cireport.Tool{Name: "kubectl-rv", Version: "0.1.0"}

func TestPrintCI(t *testing.T) {
	cigolden.Assert(t, "ci", func(w io.Writer, f output.Format) error {
		return PrintCI(w, f, report(), tool)
	})
}

// TestCIReportVerdicts: a group per type and a case per check; a failure
// is an error at the item it names, a warning a warning at the type, a
// skip a skipped case with its reason, a pass nothing; a type not probed
// a warning of its own. Every check has its rule, with a fix.
func TestCIReportVerdicts(t *testing.T) {
	r := CIReport(report(), tool)
	type got struct {
		Group, Case, Rule string
		Level             cireport.Level
		Object, Skipped   string
	}
	var gots []got
	for _, g := range r.Groups {
		for _, c := range g.Cases {
			if len(c.Findings) == 0 {
				gots = append(gots, got{Group: g.Name, Case: c.Name, Skipped: c.Skipped})
			}
			for _, f := range c.Findings {
				gots = append(gots, got{g.Name, c.Name, f.Rule, f.Level, f.Object.String(), c.Skipped})
			}
		}
	}
	want := []got{
		{Group: "configmaps", Case: "list-consistent"},
		{"configmaps", "watch-bookmarks", "doctor/watch-bookmarks", cireport.Warning, "configmaps", ""},
		{"widgets.example.com", "items-have-rv", "doctor/items-have-rv", cireport.Error, "widgets.example.com/ns/\x1b]0;title\x07w", ""},
		{Group: "widgets.example.com", Case: "paging", Skipped: "1 item: nothing to page"},
		{Group: "deployments.apps", Case: "list-any"},
		{"secrets", "probe", NotProbedRule, cireport.Warning, "secrets", ""},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if len(r.Rules) != len(doctor.Checks)+1 {
		t.Errorf("%d rules, want one per check and %s", len(r.Rules), NotProbedRule)
	}
	for _, ru := range r.Rules {
		if ru.Help == "" || ru.Fix == "" {
			t.Errorf("rule %s: help %q, fix %q", ru.ID, ru.Help, ru.Fix)
		}
	}
}
