package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/doctorprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/lagprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/loadprint"
)

// TestCIFormatsDocListsDoctorAndLagRules: docs/ci-formats.md has a row
// for each of doctor's, lag's and the hot loops' CI rules, with the fix
// the report gives.
func TestCIFormatsDocListsDoctorAndLagRules(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ci-formats.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(doc), "\n") {
		if id, rest, ok := strings.Cut(strings.TrimPrefix(l, "| `"), "` |"); ok && strings.HasPrefix(l, "| `") {
			rows[id] = rest
		}
	}
	for _, rules := range [][]cireport.Rule{doctorprint.CIRules(), lagprint.CIRules(), loadprint.CIRules()} {
		for _, r := range rules {
			row, ok := rows[r.ID]
			if !ok || !strings.HasSuffix(strings.TrimSpace(row), "| "+r.Fix+" |") {
				t.Errorf("docs/ci-formats.md: the row of %s should end with its fix %q, got %q", r.ID, r.Fix, row)
			}
		}
	}
}
