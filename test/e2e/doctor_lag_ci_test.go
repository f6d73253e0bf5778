//go:build e2e

package e2e

import (
	"encoding/json"
	"encoding/xml"
	"maps"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
)

// dlJUnit is the JUnit XML of doctor and lag as a report parser reads it.
type dlJUnit = junitread.Report

// dlSARIFResult is a SARIF result: its rule, level and logical location.
type dlSARIFResult struct {
	RuleID, Level, Location string
}

// dlCIFormats runs kubectl rv ARGS in the table and in the three CI
// formats: each exits as the table does. It checks that SARIF validates
// (against the vendored schema, and with the multitool where installed),
// and returns the GitHub lines, the parsed JUnit and the SARIF results.
func dlCIFormats(t *testing.T, want int, args ...string) (github string, junit dlJUnit, sarif []dlSARIFResult) {
	t.Helper()
	dir := t.TempDir()
	if code, out, stderr := rvIn(t, dir, args...); code != want {
		t.Fatalf("table: exit %d, want %d\n%s%s", code, want, out, stderr)
	}
	out := map[string]string{}
	for _, f := range []string{"github", "junit", "sarif"} {
		code, stdout, stderr := rvIn(t, dir, append(args, "-o", f)...)
		if code != want {
			t.Errorf("-o %s: exit %d, want %d as in the table\n%s%s", f, code, want, stdout, stderr)
		}
		out[f] = stdout
	}
	t.Logf("kubectl rv %s -o github:\n%s", strings.Join(args, " "), out["github"])
	if err := xml.Unmarshal([]byte(out["junit"]), &junit); err != nil {
		t.Fatalf("-o junit does not parse: %v\n%s", err, out["junit"])
	}
	validateSARIF(t, dir, out["sarif"])
	var log struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					LogicalLocations []struct {
						FullyQualifiedName string `json:"fullyQualifiedName"`
					} `json:"logicalLocations"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out["sarif"]), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("-o sarif: %v\n%s", err, out["sarif"])
	}
	for _, r := range log.Runs[0].Results {
		res := dlSARIFResult{RuleID: r.RuleID, Level: r.Level}
		if len(r.Locations) == 1 && len(r.Locations[0].LogicalLocations) == 1 {
			res.Location = r.Locations[0].LogicalLocations[0].FullyQualifiedName
		}
		sarif = append(sarif, res)
	}
	return out["github"], junit, sarif
}

// TestDoctorCIFormatsAtTheItem: behind a proxy that strips the items'
// resourceVersions from lists, doctor exits 1 in every format as in the
// table; items-have-rv is an error annotation, a failed JUnit testcase and
// a SARIF error located at the item it names; list-rv-covers-items, which
// the fault leaves nothing to compare, a skipped testcase; list-consistent
// passes.
func TestDoctorCIFormatsAtTheItem(t *testing.T) {
	t.Parallel() // see TestMain: reads one namespace of its own, through its own proxy
	ns, _ := doctorNamespace(t, 2)
	kc := badProxy(t, stripItemRVs)
	gh, junit, sarif := dlCIFormats(t, 1, "doctor", "configmaps", "-n", ns, "--kubeconfig", kc,
		"--check", "list-consistent,items-have-rv,list-rv-covers-items")

	for _, want := range []string{
		"::group::doctor: configmaps\n",
		"ok: configmaps list-consistent\n",
		"\n::error title=items-have-rv%3A configmaps/" + ns + "/",
		"skipped: configmaps list-rv-covers-items: ",
	} {
		if !strings.Contains(gh, want) {
			t.Errorf("-o github lacks %q:\n%s", want, gh)
		}
	}
	if !strings.Contains(gh, "items carry no resourceVersion") || !strings.Contains(gh, "%0AFix: set metadata.resourceVersion on every item") {
		t.Errorf("-o github: the annotation should say what was seen and the fix:\n%s", gh)
	}

	if len(junit.Suites) != 1 || junit.Failures != 1 || junit.Suites[0].Name != "configmaps" || junit.Suites[0].Skipped != 1 {
		t.Fatalf("-o junit: want one suite, configmaps, with one failure and one skip: %+v", junit)
	}
	cases := map[string]string{}
	for _, c := range junit.Suites[0].Cases {
		switch {
		case c.Failure != nil && c.Failure.Type == "doctor/items-have-rv" && strings.Contains(c.Failure.Text, "error: "):
			cases[c.Name] = "fail"
		case c.Skipped != nil && c.Skipped.Message != "":
			cases[c.Name] = "skip"
		case c.Failure == nil && c.Skipped == nil:
			cases[c.Name] = "pass"
		}
	}
	if want := map[string]string{"list-consistent": "pass", "items-have-rv": "fail", "list-rv-covers-items": "skip"}; !maps.Equal(cases, want) {
		t.Errorf("-o junit testcases %v, want %v", cases, want)
	}

	if len(sarif) != 1 || sarif[0].RuleID != "doctor/items-have-rv" || sarif[0].Level != "error" ||
		!strings.HasPrefix(sarif[0].Location, "configmaps/"+ns+"/") {
		t.Errorf("-o sarif: want one error of doctor/items-have-rv at configmaps/%s/NAME, got %+v", ns, sarif)
	}
}

// TestLagCIFormatsPausedRollout: a paused Deployment with a new image has
// observed its generation but does not roll out. lag --wait --for rollout
// times out (exit 1) in every format as in the table, and the report is
// the state at the end: an error annotation, a failed JUnit testcase and
// a SARIF error of lag/paused at deployments.apps/NS/web. The generation
// gate (--wait alone) passes it, exit 0, with a passing testcase.
func TestLagCIFormatsPausedRollout(t *testing.T) {
	t.Parallel() // see TestMain: reads one namespace of its own
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=1", "-n", ns)
	cluster.MustKubectl(t, "rollout", "pause", "deployment/web", "-n", ns)
	cluster.MustKubectl(t, "set", "image", "deployment/web", "pause=registry.k8s.io/pause:3.9", "-n", ns)
	lagWaitCurrent(t, "deployments", "-n", ns)

	gh, junit, sarif := dlCIFormats(t, 1, "lag", "deployments", "-n", ns, "--wait", "--for", "rollout", "--timeout", "1s")
	want := "::group::lag: deployments.apps\n::error title=paused%3A deployments.apps/" + ns + "/web::generation "
	if !strings.Contains(gh, want) || !strings.Contains(gh, "spec.paused is true") || !strings.Contains(gh, "%0AFix: resume it (kubectl rollout resume)") {
		t.Errorf("-o github lacks %q, what kubectl says and the fix:\n%s", want, gh)
	}
	if len(junit.Suites) != 1 || junit.Failures != 1 || len(junit.Suites[0].Cases) != 1 {
		t.Fatalf("-o junit: want one suite with one failed testcase: %+v", junit)
	}
	if c := junit.Suites[0].Cases[0]; c.Name != ns+"/web" || c.ClassName != "deployments.apps" || c.Failure == nil || c.Failure.Type != "lag/paused" {
		t.Errorf("-o junit testcase: %+v", c)
	}
	if len(sarif) != 1 || sarif[0] != (dlSARIFResult{"lag/paused", "error", "deployments.apps/" + ns + "/web"}) {
		t.Errorf("-o sarif: want one error of lag/paused at deployments.apps/%s/web, got %+v", ns, sarif)
	}

	// The generation gate passes the same Deployment at once.
	code, out, stderr := rvIn(t, t.TempDir(), "lag", "deployments", "-n", ns, "--wait", "--timeout", "10s", "-o", "junit")
	var pass dlJUnit
	if err := xml.Unmarshal([]byte(out), &pass); code != 0 || err != nil || pass.Tests != 1 || pass.Failures != 0 {
		t.Errorf("lag --wait -o junit: want exit 0 and one passing testcase, got exit %d, %v\n%s%s", code, err, out, stderr)
	}
}
