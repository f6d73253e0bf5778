package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/version"
)

// run executes kubectl rv ARGS in process and returns stdout, stderr and
// the exit code main would use.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewCmdRV(streams)
	root.SetArgs(args)
	code := cmdutil.HandleError(errOut, root.ExecuteContext(context.Background()))
	return out.String(), errOut.String(), code
}

func TestRootUsageSaysKubectlRV(t *testing.T) {
	out, _, code := run(t, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	if !strings.Contains(out, "kubectl rv [command]") {
		t.Errorf("usage should read kubectl rv [command]:\n%s", out)
	}
	for _, flag := range []string{"--kubeconfig", "--context", "--namespace", "--server", "--token", "--as", "--request-timeout"} {
		if !strings.Contains(out, flag) {
			t.Errorf("global flag %s missing from help", flag)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantText string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"version", "--nope"}, "--nope"},
		{"bad output", []string{"version", "--client", "-o", "xml"}, `--output "xml" is not supported`},
		{"extra argument", []string{"version", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, tt.wantText) {
				t.Errorf("stderr %q should contain %q", errOut, tt.wantText)
			}
		})
	}
}

func TestVersionClientJSON(t *testing.T) {
	out, errOut, code := run(t, "version", "--client", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep version.VersionReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "Version" || rep.ClientVersion.Version == "" || rep.ServerVersion != nil {
		t.Errorf("unexpected report: %+v", rep)
	}
}

func TestUnreachableServerExits3(t *testing.T) {
	_, errOut, code := run(t, "version", "--server", "https://127.0.0.1:1")
	if code != 3 {
		t.Fatalf("exit %d, want 3: %s", code, errOut)
	}
	if !strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("error should name the server: %q", errOut)
	}
}

func TestHandleErrorInterrupted(t *testing.T) {
	var buf bytes.Buffer
	if code := cmdutil.HandleError(&buf, context.Canceled); code != 130 {
		t.Errorf("interrupted exit %d, want 130", code)
	}
}
