package predictprint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// fakeLines places the sample's fields on the lines of a web.yaml.
var fakeLines = map[string]cireport.Location{
	"":                          {File: "web.yaml", Line: 1, Column: 1},
	".spec.replicas":            {File: "web.yaml", Line: 7, Column: 3},
	".metadata.resourceVersion": {File: "web.yaml", Line: 5, Column: 3},
}

func sampleCI() CI {
	return CI{
		Tool:  cireport.Tool{Name: "kubectl-rv", Version: "v0.1.0"},
		Fails: func(class string) bool { return class == "conflict" },
		Locate: func(ref predict.ObjectRef, field string) cireport.Location {
			if ref.Source != "web.yaml:1" {
				return cireport.Location{}
			}
			return fakeLines[field]
		},
	}
}

func TestPrintCI(t *testing.T) {
	for _, f := range output.CIFormats {
		t.Run(string(f), func(t *testing.T) {
			var out, errOut bytes.Buffer
			r := NewReport("server", sample())
			r.Objects[0].Rules = "the rules that ran"
			if err := PrintCI(&out, &errOut, f, r, sampleCI()); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "one-ci."+string(f), out.Bytes())
			if !strings.HasPrefix(errOut.String(), "note: server dry runs") || !strings.HasSuffix(errOut.String(), "note: Deployment default/web: the rules that ran\n") {
				t.Errorf("notes on the error stream: %q", errOut.String())
			}
			if f == output.SARIF {
				if err := sarifcheck.Validate(out.Bytes()); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestCIReportFindings: a case per method; a finding per verdict that is
// one, at its field, an error when --fail-on fails on its class and a
// warning otherwise; none for ok.
func TestCIReportFindings(t *testing.T) {
	r := CIReport(NewReport("server", sample()), sampleCI())
	type got struct {
		Case, Rule string
		Level      cireport.Level
		Line       int
	}
	var gots []got
	for _, c := range r.Groups[0].Cases {
		if len(c.Findings) == 0 {
			gots = append(gots, got{Case: c.Name})
		}
		for _, f := range c.Findings {
			gots = append(gots, got{c.Name, f.Rule, f.Level, f.Location.Line})
		}
	}
	want := []got{
		{"update", "predict/conflict", cireport.Error, 5},
		{"update-no-rv", "predict/clobber", cireport.Warning, 7},
		{"json-patch", "predict/invalid", cireport.Warning, 1},
		{"merge-patch", "", "", 0},
		{"apply", "predict/apply-conflict", cireport.Error, 7},
		{"apply-force", "predict/clobber", cireport.Warning, 7},
	}
	if diff := cmp.Diff(want, gots); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	if len(r.Rules) != len(predict.FindingVerdicts) || r.Groups[0].Name != "Deployment/default/web" {
		t.Errorf("rules %d, group %q", len(r.Rules), r.Groups[0].Name)
	}
}
