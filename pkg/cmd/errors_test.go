package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// captureStderr runs fn with os.Stderr sent to a file and returns what was
// written there: client-go's klog writes to os.Stderr, not to the streams.
func captureStderr(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = saved }()
	fn()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestUnreachableClusterOneLine: an unreachable cluster is one line,
// "error: cluster at SERVER: ...", without client-go's klog noise
// (memcache.go "Unhandled Error" lines) before it; -v brings klog back.
func TestUnreachableClusterOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"watch", "deployments"},
		{"owners", "deployment/web"},
		{"lag", "deployments"},
		{"predict", "deployment/web", "--type", "merge", "--patch", "{}"},
		{"version"},
	} {
		t.Run(args[0], func(t *testing.T) {
			var errOut string
			var code int
			noise := captureStderr(t, func() {
				_, errOut, code = run(t, append(args, "--server", "https://127.0.0.1:1", "--cache-dir", t.TempDir())...)
			})
			if noise != "" {
				t.Errorf("klog wrote to stderr:\n%s", noise)
			}
			if code != 3 || !strings.HasPrefix(errOut, "error: cluster at https://127.0.0.1:1: ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q: want exit 3 and one line \"error: cluster at https://127.0.0.1:1: ...\"", code, errOut)
			}
		})
	}
	t.Run("-v 6 shows client-go's logs", func(t *testing.T) {
		defer cmdutil.SetKlogLevel(0)
		noise := captureStderr(t, func() {
			_, _, _ = run(t, "watch", "deployments", "--server", "https://127.0.0.1:1", "--cache-dir", t.TempDir(), "-v", "6")
		})
		if !strings.Contains(noise, "127.0.0.1:1") {
			t.Errorf("-v 6 should show client-go's requests, stderr:\n%s", noise)
		}
	})
}

// TestMissingKubeconfig: a kubeconfig the user named that does not exist
// is bad input (exit 2) said as such, not a silent fall back to
// http://localhost:8080 and a refused connection.
func TestMissingKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	tests := []struct {
		name, env string
		args      []string
		want      string
	}{
		{"KUBECONFIG", missing, []string{"lag", "deployments"}, "error: KUBECONFIG=" + missing + ": no such file: point KUBECONFIG at your kubeconfig"},
		{"KUBECONFIG, version", missing, []string{"version"}, "KUBECONFIG=" + missing + ": no such file"},
		{"KUBECONFIG, watch", missing, []string{"watch", "deployments"}, "KUBECONFIG=" + missing + ": no such file"},
		{"--kubeconfig", "", []string{"owners", "deployment/web", "--kubeconfig", missing}, "error: --kubeconfig " + missing + ": no such file"},
		{"--kubeconfig, version", "", []string{"version", "--kubeconfig", missing}, "--kubeconfig " + missing + ": no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			out, errOut, code := run(t, append(tt.args, "--cache-dir", t.TempDir())...)
			if code != 2 || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "localhost:8080") || strings.Contains(out, "Server") {
				t.Errorf("exit %d, stderr %q: want exit 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

// TestFindingHasNoErrorPrefix: a finding (exit 1) is the answer the
// command was asked for, so its summary line is not "error: ...".
func TestFindingHasNoErrorPrefix(t *testing.T) {
	var buf bytes.Buffer
	code := cmdutil.HandleError(&buf, exitcode.Findingf("%s seen (--fail-on-fight)", text.Plural(1, "fight")))
	if code != exitcode.CodeFinding || buf.String() != "1 fight seen (--fail-on-fight)\n" {
		t.Errorf("exit %d, stderr %q: want exit 1 and \"1 fight seen (--fail-on-fight)\"", code, buf.String())
	}
}

// TestInputMessages pins what a user reads for bad input files: the flag
// that named the file, what is wrong with it and how to fix it, exit 2.
func TestInputMessages(t *testing.T) {
	dir := t.TempDir()
	write := cmdtest.FileWriter(t, dir)
	desired := write("desired.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 2}\n")
	scenario := write("scenarios/counter.yaml", "apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario\nname: counter\n")
	av5 := write("av5.yaml", "apiVersion: 5\nkind: ConfigMap\nmetadata: {name: x}\n")
	missing := filepath.Join(dir, "nonexist.yaml")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"owners, empty stdin", []string{"owners", "-f", "-"}, "error: <stdin>: no objects found: standard input was empty"},
		{"owners, a Scenario in the directory", []string{"owners", "-f", filepath.Dir(scenario)}, "error: " + scenario + ":1: a kubectl rv Scenario, not a Kubernetes object: run it with kubectl rv simulate run " + scenario + "\n"},
		{"predict, a Scenario as --live", []string{"predict", "-f", desired, "--offline", "--live", scenario}, "error: --live " + scenario + ":1: a kubectl rv Scenario"},
		{"predict, missing --live", []string{"predict", "-f", desired, "--offline", "--live", missing}, "error: --live " + missing + ": no such file or directory\n"},
		{"predict, missing -f", []string{"predict", "-f", missing}, "error: -f " + missing + ": no such file or directory\n"},
		{"owners, apiVersion a number", []string{"owners", "-f", av5}, "error: " + av5 + ":1: apiVersion must be a string, got a number\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != 2 || out != "" || !strings.HasPrefix(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 2, no output and %q", code, out, errOut, tt.want)
			}
		})
	}
}

// TestMessagesEscapeTerminalControls: a file or server string holding a
// terminal escape (ESC ] 0 ; title BEL retitles the terminal) reaches
// standard error escaped, in every message.
func TestMessagesEscapeTerminalControls(t *testing.T) {
	dir := t.TempDir()
	hostile := filepath.Join(dir, "hostile.yaml")
	doc := "apiVersion: v1\nkind: \"Widget\\e]0;pwned\\a\"\nmetadata: {name: \"w\\e[2J\", namespace: default}\n"
	if err := os.WriteFile(hostile, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"owners", "-f", hostile},
		{"predict", "-f", hostile, "--offline", "--live", hostile},
	} {
		t.Run(args[0], func(t *testing.T) {
			_, errOut, code := run(t, args...)
			if code != 2 || strings.ContainsAny(errOut, "\x1b\a") || !strings.Contains(errOut, "^[") {
				t.Errorf("exit %d, stderr %q: want exit 2 and the escapes shown as ^[", code, errOut)
			}
		})
	}
	var buf bytes.Buffer
	cmdutil.HandleError(&buf, exitcode.Usagef("x.yaml:1: %s\n- second line", "kind \x1b]0;title\a"))
	if want := "error: x.yaml:1: kind ^[]0;title^G\n- second line\n"; buf.String() != want {
		t.Errorf("HandleError wrote %q, want %q", buf.String(), want)
	}
}

func TestServerWarningsEscaped(t *testing.T) {
	var buf bytes.Buffer
	h := cmdutil.NewWarningHandler(&buf)
	h.HandleWarningHeader(299, "", "webhook says \x1b]0;pwned\a")
	h.HandleWarningHeader(299, "", "webhook says \x1b]0;pwned\a")
	if want := "Warning: webhook says ^[]0;pwned^G\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}
