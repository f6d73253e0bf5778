package predict

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

// runPredict runs kubectl rv predict with args and stdin, and returns its
// exit code and streams.
func runPredict(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := cmdtest.Root(genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, NewCmdPredict)
	root.SetArgs(append([]string{"predict"}, args...))
	return cmdutil.HandleError(&errOut, root.ExecuteContext(context.Background())), out.String(), errOut.String()
}

// TestPredictCIFormats predicts a manifest whose .spec.replicas (line 5,
// column 3) and first container's image (line 11, column 21, in a flow
// mapping) an HPA-like manager
// and kubectl-create own, offline: -o github annotates those lines of
// the file, named relative to the working directory; -o sarif validates
// against the SARIF 2.1.0 schema with its results at the same lines;
// -o junit parses and holds the failure; the exit code is the table's in
// every format.
func TestPredictCIFormats(t *testing.T) {
	dir, live := writePredictFixtures(t, 1)
	t.Chdir(dir)
	args := []string{"-f", "app-0000.yaml", "--offline", "--live", live, "--field-manager", "ci", "--method", "apply,update-no-rv"}
	for _, f := range []string{"table", "github", "junit", "sarif"} {
		code, _, stderr := runPredict(t, "", append(args, "-o", f)...)
		if code != 1 {
			t.Errorf("-o %s: exit %d, want 1 (an apply conflict)\n%s", f, code, stderr)
		}
	}
	_, gh, _ := runPredict(t, "", append(args, "-o", "github")...)
	for _, want := range []string{
		"::group::predict: Deployment/default/app-0000\n",
		`::error file=app-0000.yaml,line=5,col=3,title=apply conflict%3A Deployment/default/app-0000 apply::apply conflicts on .spec.replicas, owned by "hpa" using apps/v1%0AFix: give each field one owner`,
		`::error file=app-0000.yaml,line=11,col=21,title=apply conflict%3A Deployment/default/app-0000 apply::apply conflicts on .spec.template.spec.containers[name="app"].image, owned by "kubectl-create"`,
		`::warning file=app-0000.yaml,line=5,col=3,title=clobber%3A Deployment/default/app-0000 update-no-rv::update-no-rv takes .spec.replicas from "hpa"`,
	} {
		if !strings.Contains(gh, want) {
			t.Errorf("-o github lacks %q:\n%s", want, gh)
		}
	}
	_, sarif, _ := runPredict(t, "", append(args, "-o", "sarif")...)
	if err := sarifcheck.Validate([]byte(sarif)); err != nil {
		t.Errorf("-o sarif: %v", err)
	}
	var log struct {
		Runs []struct {
			Results []struct {
				Level     string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine int }
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(sarif), &log); err != nil || len(log.Runs[0].Results) == 0 {
		t.Fatalf("-o sarif: %v\n%s", err, sarif)
	}
	// update-no-rv's clobbers (warnings: --fail-on is conflict) come first.
	if r := log.Runs[0].Results[2]; r.Level != "error" || r.Locations[0].PhysicalLocation.ArtifactLocation.URI != "app-0000.yaml" || r.Locations[0].PhysicalLocation.Region.StartLine != 5 {
		t.Errorf("first SARIF result %+v, want an error at app-0000.yaml line 5", r)
	}
	_, junit, _ := runPredict(t, "", append(args, "-o", "junit")...)
	var rep junitread.Report
	if err := xml.Unmarshal([]byte(junit), &rep); err != nil {
		t.Fatalf("-o junit: %v\n%s", err, junit)
	}
	if c := rep.Suites[0].Cases[1]; rep.Failures != 1 || c.Name != "apply" || c.Failure == nil || c.Failure.Type != "predict/apply-conflict" ||
		!strings.HasPrefix(c.Failure.Text, "app-0000.yaml:5:3: error: apply conflicts on .spec.replicas") {
		t.Errorf("-o junit: %+v\n%s", rep, junit)
	}
}

// TestPredictCIStdin: objects from standard input have no file to
// annotate; the object's first line in the stream is said in the
// message. A helm template's "#
// Source:" comment names the template, annotated as a whole.
func TestPredictCIStdin(t *testing.T) {
	dir, live := writePredictFixtures(t, 1)
	manifest, err := os.ReadFile(filepath.Join(dir, "app-0000.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-f", "-", "--offline", "--live", live, "--field-manager", "ci", "--method", "apply", "-o", "github"}
	_, gh, _ := runPredict(t, string(manifest), args...)
	if !regexp.MustCompile(`(?m)^::error title=apply conflict%3A Deployment/default/app-0000 apply::apply conflicts on \.spec\.replicas, owned by "hpa".* \[<stdin>:1:1\]`).MatchString(gh) {
		t.Errorf("stdin: -o github:\n%s", gh)
	}
	helm := "---\n# Source: app/templates/deploy.yaml\n" + string(manifest)
	_, gh, _ = runPredict(t, helm, args...)
	if !strings.Contains(gh, `::error file=app/templates/deploy.yaml,title=apply conflict%3A Deployment/default/app-0000 apply::apply conflicts on .spec.replicas, owned by "hpa" using apps/v1 [app/templates/deploy.yaml (helm template; rendered <stdin>:7:3)]`) {
		t.Errorf("helm template: -o github:\n%s", gh)
	}
}
