package conflictsprint

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// ciReport is the sample report with its 409s per object and writer: the
// contention of writer a on the ConfigMap, and b's apply conflicts on a
// Lease and on a Pod created with generateName.
func ciReport() *conflicts.Report {
	rep := report()
	a, b := rep.Writers[0].Writer.String(), rep.Writers[1].Writer.String()
	rep.Causes[0].Objects = []conflicts.CauseObject{{Object: rep.Objects[0].Object, Writer: a, Count: 2}}
	rep.Causes = append(rep.Causes, conflicts.CauseStats{Cause: conflicts.ApplyConflict, Count: 3, Writers: 1, Fix: conflicts.Fix(conflicts.ApplyConflict),
		Objects: []conflicts.CauseObject{
			{Object: conflicts.ObjectKey{Group: "coordination.k8s.io", Resource: "leases", Namespace: "ns", Name: "lock"}, Writer: b, Count: 2},
			{Object: conflicts.ObjectKey{Resource: "pods", Namespace: "ns"}, Writer: b, Count: 1},
		}})
	return rep
}

// failOnA is a --fail-on-rate that the first writer is over.
func failOnA(rep *conflicts.Report) CI {
	a := rep.Writers[0].Writer.String()
	return CI{Tool: cireport.Tool{Name: "kubectl-rv", Version: "0.1.0"}, Fails: func(w string) bool { return w == a }}
}

// TestPrintCI renders the sample in each CI format; the SARIF validates
// against the schema.
func TestPrintCI(t *testing.T) {
	rep := ciReport()
	cigolden.Assert(t, "report-ci", func(w io.Writer, f output.Format) error {
		return PrintCI(w, f, rep, failOnA(rep))
	})
}

// TestCIReportCauses: a rule, a group and a case per cause, with its fix;
// a finding per object and writer, an error for the writer over the rate
// and a warning for the other; the causes without 409s pass.
func TestCIReportCauses(t *testing.T) {
	rep := ciReport()
	r := CIReport(rep, failOnA(rep))
	if len(r.Rules) != len(conflicts.Causes) || len(r.Groups) != len(conflicts.Causes) {
		t.Fatalf("%d rules and %d groups, want %d each", len(r.Rules), len(r.Groups), len(conflicts.Causes))
	}
	for i, info := range conflicts.Causes {
		if ru := r.Rules[i]; ru.Fix != info.Fix || ru.Help == "" {
			t.Errorf("rule %s: fix %q, help %q", ru.ID, ru.Fix, ru.Help)
		}
	}
	type got struct {
		Case, Object string
		Level        cireport.Level
	}
	var gots []got
	for _, g := range r.Groups {
		for _, f := range g.Cases[0].Findings {
			gots = append(gots, got{g.Cases[0].Name, f.Object.String(), f.Level})
		}
	}
	want := []got{
		{"ssa-field-conflict", "leases.coordination.k8s.io/ns/lock", cireport.Warning},
		{"ssa-field-conflict", "pods/ns/(generated)", cireport.Warning},
		{"contention", "configmaps/ns/c", cireport.Error},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestCIJUnitHoldsTheWriterOverTheRate parses the JUnit XML: the
// contention case fails, naming the object and the writer.
func TestCIJUnitHoldsTheWriterOverTheRate(t *testing.T) {
	var out bytes.Buffer
	rep := ciReport()
	if err := PrintCI(&out, output.JUnit, rep, failOnA(rep)); err != nil {
		t.Fatal(err)
	}
	var doc junitread.Report
	if err := xml.Unmarshal(out.Bytes(), &doc); err != nil || doc.Tests != len(conflicts.Causes) || doc.Failures != 1 {
		t.Fatalf("tests %d, failures %d, %v:\n%s", doc.Tests, doc.Failures, err, out.Bytes())
	}
	for _, s := range doc.Suites {
		f := s.Cases[0].Failure
		if (f != nil) != (s.Name == "contention") {
			t.Errorf("suite %s: failure %+v", s.Name, f)
		}
		if f != nil && (f.Type != "conflicts/contention" ||
			!strings.HasPrefix(f.Text, "configmaps/ns/c: error: 2 409s of system:serviceaccount:kube-system:ctrl/ctrl@ctrl-7d9f (its conflict rate 66.7%)")) {
			t.Errorf("contention failure %+v", f)
		}
	}
}
