package leasesprint

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// ciReport is the history with a finding of every kind: its takeover
// after expiry, expiry and acting window, two late renewals of the lock,
// and the acting window of a shared identity.
func ciReport() *leases.Report {
	rep := historyReport()
	rep.Locks[0].Renewals.Late, rep.Locks[0].Renewals.MinSlack = 2, d(3.5)
	rep.SharedWriters = sharedReport().SharedWriters
	return rep
}

// failOnSplitBrain is --fail-on split-brain.
var failOnSplitBrain = CI{Tool: cireport.Tool{Name: "kubectl-rv", Version: "0.1.0"}, Fails: func(class string) bool { return class == "split-brain" }}

// TestPrintCI renders the sample in each CI format; the SARIF validates
// against the schema.
func TestPrintCI(t *testing.T) {
	cigolden.Assert(t, "history-ci", func(w io.Writer, f output.Format) error {
		return PrintCI(w, f, ciReport(), failOnSplitBrain)
	})
}

// TestCIReportKinds: a group and a case per kind, a finding of every
// kind at the lock; the acting window an error under --fail-on
// split-brain, the rest (and the kinds no --fail-on word names) warnings.
func TestCIReportKinds(t *testing.T) {
	r := CIReport(ciReport(), failOnSplitBrain)
	type got struct {
		Case, Rule, Object string
		Level              cireport.Level
	}
	var gots []got
	for _, g := range r.Groups {
		for _, f := range g.Cases[0].Findings {
			gots = append(gots, got{g.Cases[0].Name, f.Rule, f.Object.String(), f.Level})
		}
	}
	want := []got{
		{"takeover", "leases/takeover", "Lease/kube-system/sched", cireport.Warning},
		{"late renewal", "leases/late-renew", "Lease/kube-system/sched", cireport.Warning},
		{"acting while not leader", "leases/split-brain", "Lease/kube-system/sched", cireport.Error},
		{"expiry", "leases/expiry", "Lease/kube-system/sched", cireport.Warning},
		{"acting by a shared identity", "leases/shared-writer", "Lease/kube-system/sched", cireport.Warning},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(r.Rules) != len(leases.FindingKinds) {
		t.Errorf("%d rules, want %d", len(r.Rules), len(leases.FindingKinds))
	}
}

// TestCIJUnitHoldsTheActingWindow parses the JUnit XML: only the acting
// window's case fails, naming the lock and the former holder.
func TestCIJUnitHoldsTheActingWindow(t *testing.T) {
	var out bytes.Buffer
	if err := PrintCI(&out, output.JUnit, ciReport(), failOnSplitBrain); err != nil {
		t.Fatal(err)
	}
	var doc junitread.Report
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil || doc.Failures != 1 {
		t.Fatalf("failures %d, %v:\n%s", doc.Failures, err, out.Bytes())
	}
	for _, s := range doc.Suites {
		f := s.Cases[0].Failure
		if (f != nil) != (s.Name == "acting while not leader") {
			t.Errorf("suite %s: failure %+v", s.Name, f)
		}
		if f != nil && !strings.HasPrefix(f.Text, "Lease/kube-system/sched: error: admin/cand-a") {
			t.Errorf("acting failure %q", f.Text)
		}
	}
}
