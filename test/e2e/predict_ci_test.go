//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/internal/junitread"
	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
)

// rvIn runs kubectl rv ARGS in dir, as a CI job runs it in its checkout,
// and returns its exit code and streams.
func rvIn(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := cluster.Command(ctx, "kubectl", append([]string{"rv"}, args...)...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("kubectl rv %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errOut.String()
}

// lineOf is the 1-based line of text that starts with prefix.
func lineOf(t *testing.T, text, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starts with %q", prefix)
	return 0
}

// TestPredictCIFormatsAtTheReplicasLine: web.yaml's .spec.replicas is
// owned by another manager, an HPA-like one that wrote it through the
// /scale subresource with its own field manager. predict -f web.yaml
// -o github prints an error annotation at the `replicas:` line of
// web.yaml and exits 1, as the table does; -o sarif validates against the
// SARIF 2.1.0 schema (and with Microsoft's SARIF multitool where it is
// installed) and has its result at the same line; -o junit parses and
// holds the failure.
func TestPredictCIFormatsAtTheReplicasLine(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	manifest := strings.ReplaceAll(predictWeb, "NS", ns)
	cluster.KubectlStdin(t, manifest, "create", "-f", "-")
	dyn := cluster.Dynamic(t, "hpa-controller")
	if _, err := dyn.Resource(deploymentsGVR).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "hpa-controller"}, "scale"); err != nil {
		t.Fatalf("patch /scale: %v", err)
	}
	waitScaled(t, deploymentsGVR, ns, "web")
	predictWriteFile(t, dir, "web.yaml", manifest)
	n := lineOf(t, manifest, "  replicas:")
	args := []string{"predict", "-f", "web.yaml", "--field-manager", "ci"}

	code, table, stderr := rvIn(t, dir, args...)
	if code != 1 || !strings.Contains(table, "apply-conflict") {
		t.Fatalf("table: exit %d, want 1 and an apply conflict\n%s%s", code, table, stderr)
	}
	code, gh, stderr := rvIn(t, dir, append(args, "-o", "github")...)
	want := fmt.Sprintf(`::error file=web.yaml,line=%d,col=3,title=apply conflict%%3A Deployment/%s/web apply::apply conflicts on .spec.replicas, owned by "hpa-controller" with subresource "scale"`, n, ns)
	if code != 1 || !strings.Contains(gh, want) {
		t.Errorf("-o github: exit %d, want 1 and %q\n%s%s", code, want, gh, stderr)
	}

	code, sarif, stderr := rvIn(t, dir, append(args, "-o", "sarif")...)
	if code != 1 {
		t.Errorf("-o sarif: exit %d, want 1\n%s", code, stderr)
	}
	validateSARIF(t, dir, sarif)
	if got := sarifResultLine(t, sarif, "predict/apply-conflict", "web.yaml"); got != n {
		t.Errorf("-o sarif: the apply conflict is at web.yaml line %d, want %d\n%s", got, n, sarif)
	}

	code, junit, stderr := rvIn(t, dir, append(args, "-o", "junit")...)
	var rep junitread.Report
	if err := xml.Unmarshal([]byte(junit), &rep); err != nil || code != 1 || len(rep.Suites) != 1 {
		t.Fatalf("-o junit: exit %d, %v\n%s%s", code, err, junit, stderr)
	}
	found := false
	for _, c := range rep.Suites[0].Cases {
		if c.Name == "apply" && c.Failure != nil && c.Failure.Type == "predict/apply-conflict" &&
			strings.HasPrefix(c.Failure.Text, fmt.Sprintf("web.yaml:%d:3: error: apply conflicts on .spec.replicas", n)) {
			found = true
		}
	}
	if !found || rep.Failures == 0 {
		t.Errorf("-o junit holds no apply-conflict failure at web.yaml:%d\n%s", n, junit)
	}
}

// validateSARIF checks the log against the vendored SARIF 2.1.0 schema,
// and with Microsoft's SARIF multitool (npm @microsoft/sarif-multitool)
// too when the machine has it on PATH or in $SARIF_MULTITOOL.
func validateSARIF(t *testing.T, dir, sarif string) {
	t.Helper()
	if err := sarifcheck.Validate([]byte(sarif)); err != nil {
		t.Errorf("-o sarif against the SARIF 2.1.0 schema: %v", err)
	}
	tool := os.Getenv("SARIF_MULTITOOL")
	if tool == "" {
		tool, _ = exec.LookPath("sarif-multitool")
	}
	if tool == "" {
		t.Log("sarif-multitool not installed: validated against the vendored schema only")
		return
	}
	log := filepath.Join(dir, "predict.sarif")
	if err := os.WriteFile(log, []byte(sarif), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "validation.sarif")
	out, err := exec.Command(tool, "validate", log, "--output", report).CombinedOutput()
	if err != nil {
		t.Fatalf("sarif-multitool validate: %v\n%s", err, out)
	}
	// The tool exits 0 whatever it found: its errors are the results of
	// level error in its own SARIF report (its warnings are advice).
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("sarif-multitool validate wrote no report: %v\n%s", err, out)
	}
	var v struct {
		Runs []struct {
			Results []struct {
				RuleID  string `json:"ruleId"`
				Level   string `json:"level"`
				Message struct {
					Arguments []string `json:"arguments"`
				} `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Runs) == 0 {
		t.Fatalf("sarif-multitool's report: %v\n%s", err, b)
	}
	for _, r := range v.Runs[0].Results {
		if r.Level == "error" {
			t.Errorf("sarif-multitool validate: %s %v", r.RuleID, r.Message.Arguments)
		}
	}
}
