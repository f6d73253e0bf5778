package ownersprint

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/internal/cigolden"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// fakeLocate places a field of an object read from a file on the line
// after its object's, one per path element, at the column of its depth;
// .spec.gone and below, which the hazards fixture does not write, at
// .spec.
func fakeLocate(o owners.Object, p fieldpath.Path) (cireport.Location, bool) {
	if o.Origin.File == "" {
		return cireport.Location{}, false
	}
	exact := true
	if s := managedfields.PathString(p); len(s) >= 10 && s[:10] == ".spec.gone" {
		p, exact = p[:1], false
	}
	return cireport.Location{File: o.Origin.File, Line: o.Origin.Line + len(p), Column: 2*len(p) + 1}, exact
}

// ciObjects are the fixtures' Deployment, with the drift of its nginx
// container's env from team-a (a field team-a shares, one it does not
// own), and the hazards fixture's object.
func ciObjects(t *testing.T) []owners.Object {
	t.Helper()
	env, err := managedfields.ParsePath(".spec.template.spec.containers[name=nginx].env")
	if err != nil {
		t.Fatal(err)
	}
	var out []owners.Object
	for _, tc := range []struct {
		file   string
		filter managedfields.Filter
		drift  *owners.DriftConfig
	}{{"deployment.yaml", managedfields.Filter{Field: env}, &owners.DriftConfig{ExpectedManager: "team-a"}}, {"hazards.yaml", managedfields.Filter{}, nil}} {
		objs, err := objects.Read(context.Background(), []string{filepath.Join(inputs, tc.file)}, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		objs[0].Source.File = tc.file
		r, err := owners.Analyze(objs, owners.Config{Filter: tc.filter, Drift: tc.drift})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Objects...)
	}
	return out
}

func sampleOwnersCI(fails bool) CI {
	return CI{
		Tool:   cireport.Tool{Name: "kubectl-rv", Version: "0.1.0"},
		Fails:  func(class string) bool { return fails && class == "hazard" },
		Locate: fakeLocate,
	}
}

// TestPrintCIGolden renders the fixtures' drift and hazards in each CI
// format; the SARIF validates against the schema.
func TestPrintCIGolden(t *testing.T) {
	objs := ciObjects(t)
	cigolden.Assert(t, "ci", func(w io.Writer, f output.Format) error {
		return PrintCI(w, f, objs, sampleOwnersCI(false))
	})
}

// TestCIReportLevelsAndPlaces: drift is an error; a hazard a warning, and
// an error when --fail-on hazard; a field's finding is at the field, a
// stale field's at its nearest written ancestor, an entry's hazard at the
// entry in metadata.managedFields.
func TestCIReportLevelsAndPlaces(t *testing.T) {
	type got struct {
		Case, Rule string
		Level      cireport.Level
		Line, Col  int
	}
	for _, fails := range []bool{false, true} {
		r := CIReport(ciObjects(t)[1:], sampleOwnersCI(fails))
		var gots []got
		for _, c := range r.Groups[0].Cases {
			for _, f := range c.Findings {
				gots = append(gots, got{c.Name, f.Rule, f.Level, f.Location.Line, f.Location.Column})
			}
		}
		level := cireport.Warning
		if fails {
			level = cireport.Error
		}
		// hazards.yaml's object starts on line 3: .spec.size is 2 elements
		// deep; .spec.gone.deep falls back to .spec; .spec.steps[2].run
		// is 4 deep; entries 2 and 3 are metadata.managedFields[i], 3 deep.
		want := []got{
			{"ClientSideApplyMigration", "owners/ClientSideApplyMigration", level, 5, 5},
			{"StaleFields", "owners/StaleFields", level, 4, 3},
			{"StaleFields", "owners/StaleFields", level, 7, 9},
			{"AncientChanges", "owners/AncientChanges", level, 6, 7},
			{"GenericManager", "owners/GenericManager", level, 6, 7},
		}
		if diff := cmp.Diff(want, gots); diff != "" {
			t.Errorf("fails %v: findings (-want +got):\n%s", fails, diff)
		}
	}
	r := CIReport(ciObjects(t)[:1], sampleOwnersCI(false))
	cases := r.Groups[0].Cases
	drift := cases[len(cases)-1]
	if drift.Name != `drift from "team-a"` || len(drift.Findings) == 0 {
		t.Fatalf("the drift case is %+v", drift)
	}
	for _, f := range drift.Findings {
		if f.Level != cireport.Error || f.Rule != DriftRule || f.Location.Line < 2 {
			t.Errorf("drift finding %+v: want an error at its field", f)
		}
	}
}
