//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// Tests of what a new user reads when something is wrong: one clear line
// on standard error, the right exit code, nothing on standard output.

// oneLine fails unless r exited with code, wrote nothing to stdout and
// exactly one line to stderr that starts with prefix.
func oneLine(t *testing.T, r framework.Result, code int, prefix string) {
	t.Helper()
	if r.Code != code || r.Stdout != "" || strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, prefix) {
		t.Errorf("want exit %d, no output and one line starting %q; got %s", code, prefix, r)
	}
}

func TestPredictBadBaseRVSameForBothEngines(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	desired := predictWriteFile(t, dir, "desired.yaml", strings.ReplaceAll(predictWeb, "NS", ns))
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "yaml", "--show-managed-fields"))
	want := `error: --base-rv "abc" is not a resourceVersion: `
	server := cluster.RV(t, "predict", "-f", desired, "--base-rv", "abc")
	oneLine(t, server, 2, want)
	offline := cluster.RV(t, "predict", "-f", desired, "--base-rv", "abc", "--offline", "--live", live)
	oneLine(t, offline, 2, want)
	if server.Stderr != offline.Stderr {
		t.Errorf("the engines disagree:\nserver:  %q\noffline: %q", server.Stderr, offline.Stderr)
	}
}

func TestPredictReadOnlyUserRefusedOnce(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	desired := predictWriteFile(t, dir, "desired.yaml", strings.ReplaceAll(predictWeb, "NS", ns))
	r := cluster.RV(t, "predict", "-f", desired, "--context", "rv-readonly", "--field-manager", "ci")
	oneLine(t, r, 3, "error: cluster at https://")
	if strings.Count(r.Stderr, "forbidden") != 1 || !strings.Contains(r.Stderr, "--offline --live FILE") {
		t.Errorf("want the refusal once, with the offline way out: %s", r)
	}
}

func TestPredictJSONPatchShowsServerReason(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	noSelector := strings.Replace(strings.ReplaceAll(predictWeb, "NS", ns), "  selector: {matchLabels: {app: web}}\n", "", 1)
	desired := predictWriteFile(t, dir, "desired.yaml", noSelector)
	rep, _ := predictReport(t, "-f", desired, "--method", "json-patch")
	mr := methodMap(rep)["json-patch"]
	if mr.Verdict != "invalid" || !strings.Contains(mr.Reason, "spec.selector: Required value") || strings.Contains(mr.Reason, "test operation") {
		t.Errorf("json-patch without a selector: want invalid with the server's reason, got %s %q", mr.Verdict, mr.Reason)
	}
}

func TestUnreachableClusterIsOneLine(t *testing.T) {
	for _, args := range [][]string{{"watch", "deployments"}, {"owners", "deployment/web"}, {"lag"}} {
		r := cluster.RV(t, append(args, "--server", "https://127.0.0.1:1")...)
		oneLine(t, r, 3, "error: cluster at https://127.0.0.1:1: ")
	}
}

func TestMissingKubeconfigSaysSo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := cluster.Command(ctx, "kubectl", "rv", "lag", "deployments")
	cmd.Env = append(cmd.Env, "KUBECONFIG=/nonexistent")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	r := framework.Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
	oneLine(t, r, 2, "error: KUBECONFIG=/nonexistent: no such file: ")
}

func TestUnknownTypeSuggestsNearNames(t *testing.T) {
	for _, args := range [][]string{{"watch", "deploymnts"}, {"lag", "deploymnts"}, {"owners", "deploymnts/web"}} {
		r := cluster.RV(t, args...)
		oneLine(t, r, 2, `error: unknown resource type "deploymnts": did you mean deployments.apps?`)
	}
}
