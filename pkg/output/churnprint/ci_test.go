package churnprint

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/pkg/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

// failOnLoop is --fail-on loop.
var failOnLoop = CI{Tool: cireport.Tool{Name: "kubectl-rv", Version: "0.1.0"}, Fails: func(class string) bool { return class == "loop" }}

// TestPrintCI renders the sample's loop and fight in each CI format; the
// SARIF validates against the schema.
func TestPrintCI(t *testing.T) {
	cigolden.Assert(t, "report-ci", func(w io.Writer, f output.Format) error {
		return PrintCI(w, f, report(), failOnLoop)
	})
}

// TestCIReportLevels: a group and a case per kind; a finding per loop and
// fight at its object, an error where --fail-on fails on its class and a
// warning otherwise; a kind without findings passes.
func TestCIReportLevels(t *testing.T) {
	type got struct {
		Group, Case, Rule, Object string
		Level                     cireport.Level
	}
	collect := func(r cireport.Report) []got {
		var out []got
		for _, g := range r.Groups {
			for _, c := range g.Cases {
				if len(c.Findings) == 0 {
					out = append(out, got{Group: g.Name, Case: c.Name})
				}
				for _, f := range c.Findings {
					out = append(out, got{g.Name, c.Name, f.Rule, f.Object.String(), f.Level})
				}
			}
		}
		return out
	}
	want := []got{
		{"self-loop", "self-loop", "churn/loop", "configmaps/shop/hot", cireport.Error},
		{"fight", "fight", "churn/fight", "deployments.apps/shop/web", cireport.Warning},
	}
	r := CIReport(report(), failOnLoop)
	if diff := cmp.Diff(want, collect(r)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(r.Rules) != len(churn.FindingKinds) || r.Rules[0].Fix == "" {
		t.Errorf("rules %+v", r.Rules)
	}
	empty := collect(CIReport(&churn.Report{}, CI{}))
	if diff := cmp.Diff([]got{{Group: "self-loop", Case: "self-loop"}, {Group: "fight", Case: "fight"}}, empty); diff != "" {
		t.Errorf("an empty report (-want +got):\n%s", diff)
	}
}

// TestCIJUnitHoldsTheLoop parses the JUnit XML: the loop's case fails
// with the object and its writer, the fight's case passes with the fight
// in its output.
func TestCIJUnitHoldsTheLoop(t *testing.T) {
	var out bytes.Buffer
	if err := PrintCI(&out, output.JUnit, report(), failOnLoop); err != nil {
		t.Fatal(err)
	}
	var rep junitread.Report
	if err := xml.Unmarshal(out.Bytes(), &rep); err != nil || rep.Failures != 1 || len(rep.Suites) != 2 {
		t.Fatalf("failures %d, suites %d, %v:\n%s", rep.Failures, len(rep.Suites), err, out.Bytes())
	}
	loop, fight := rep.Suites[0].Cases[0], rep.Suites[1].Cases[0]
	if loop.Failure == nil || loop.Failure.Type != "churn/loop" || !strings.Contains(loop.Failure.Text, "configmaps/shop/hot: error: looper rewrote it 300 times") {
		t.Errorf("loop case %+v", loop)
	}
	if fight.Failure != nil || !strings.Contains(fight.SystemOut, "deployments.apps/shop/web: warning: .spec.replicas changed hands 51+ times between ^[[31mevil, hpa") {
		t.Errorf("fight case %+v", fight)
	}
}
