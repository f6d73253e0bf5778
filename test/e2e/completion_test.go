//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

// complete runs `kubectl __complete rv ARGS...`, as a shell does on TAB:
// kubectl finds the plugin, runs kubectl_complete-rv from PATH, and that
// asks kubectl-rv. It returns the candidates (without descriptions) and the
// directive.
func complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	r := cluster.Kubectl(t, append([]string{"__complete", "rv"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("kubectl __complete rv %s: %s", strings.Join(args, " "), r)
	}
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("kubectl __complete rv %s: no directive line:\n%s", strings.Join(args, " "), r.Stdout)
	}
	d, err := strconv.Atoi(last[1:])
	if err != nil {
		t.Fatalf("directive %q: %v", last, err)
	}
	var cands []string
	for _, l := range lines[:len(lines)-1] {
		if l == "" {
			continue
		}
		c, _, _ := strings.Cut(l, "\t")
		cands = append(cands, c)
	}
	return cands, cobra.ShellCompDirective(d)
}

func mustContain(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s: candidate %q missing from %q", what, w, got)
		}
	}
}

func TestCompletionOfSubcommandsAndFlagsThroughKubectl(t *testing.T) {
	// Every command users can see is offered after "kubectl rv ".
	var visible []string
	for _, c := range cmd.NewCmdRV(genericiooptions.NewTestIOStreamsDiscard()).Commands() {
		if c.IsAvailableCommand() {
			visible = append(visible, c.Name())
		}
	}
	got, _ := complete(t, "")
	mustContain(t, "kubectl rv <TAB>", got, visible...)
	mustContain(t, "kubectl rv <TAB>", got, "version")

	got, _ = complete(t, "ver")
	if !slices.Equal(got, []string{"version"}) {
		t.Errorf("kubectl rv ver<TAB>: want [version], got %q", got)
	}

	got, _ = complete(t, "version", "--c")
	mustContain(t, "kubectl rv version --c<TAB>", got, "--client", "--context", "--cluster", "--color")
}

func TestCompletionOfResourceTypesAndNamesThroughKubectl(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "-n", ns, "create", "configmap", "rvcomp-alpha", "--from-literal=k=v")
	cluster.MustKubectl(t, "-n", ns, "create", "configmap", "rvcomp-beta", "--from-literal=k=v")
	cluster.MustKubectl(t, "-n", ns, "create", "deployment", "rvcomp-web", "--image=registry.k8s.io/pause:3.10")

	tests := []struct {
		name      string
		args      []string
		want      []string
		exact     bool
		noSpace   bool
		forbidden []string
	}{
		{name: "types", args: []string{"owners", "config"}, want: []string{"configmaps"}, exact: true},
		{name: "grouped types", args: []string{"owners", "deployments.a"}, want: []string{"deployments.apps"}, exact: true},
		{name: "types after a comma", args: []string{"watch", "configmaps,deployments.a"}, want: []string{"configmaps,deployments.apps"}, exact: true},
		{name: "names in -n", args: []string{"owners", "-n", ns, "configmaps", "rvcomp-"}, want: []string{"rvcomp-alpha", "rvcomp-beta"}, exact: true},
		{name: "names by short name", args: []string{"owners", "-n", ns, "cm", "rvcomp-a"}, want: []string{"rvcomp-alpha"}, exact: true},
		{name: "names not repeated", args: []string{"watch", "-n", ns, "configmaps", "rvcomp-alpha", "rvcomp-"}, want: []string{"rvcomp-beta"}, exact: true},
		{name: "type/name", args: []string{"owners", "-n", ns, "deployment/rvcomp"}, want: []string{"deployment/rvcomp-web"}, exact: true},
		{name: "names in every namespace with -A", args: []string{"watch", "-A", "deployments.apps", "rvcomp-"}, want: []string{"rvcomp-web"}},
		{name: "names only from -n", args: []string{"owners", "-n", "default", "configmaps", "rvcomp-"}, forbidden: []string{"rvcomp-alpha", "rvcomp-beta"}},
		{name: "lag types", args: []string{"lag", "statefulsets.a"}, want: []string{"statefulsets.apps"}, exact: true},
		{name: "predict TYPE/", args: []string{"predict", "deployments.a"}, want: []string{"deployments.apps/"}, exact: true, noSpace: true},
		{name: "predict TYPE/NAME", args: []string{"predict", "-n", ns, "deploy/"}, want: []string{"deploy/rvcomp-web"}, exact: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := complete(t, tc.args...)
			what := "kubectl rv " + strings.Join(tc.args, " ") + "<TAB>"
			if tc.exact && !slices.Equal(got, tc.want) {
				t.Errorf("%s: want %q, got %q", what, tc.want, got)
			}
			mustContain(t, what, got, tc.want...)
			for _, f := range tc.forbidden {
				if slices.Contains(got, f) {
					t.Errorf("%s: %q should not be offered: %q", what, f, got)
				}
			}
			if directive&cobra.ShellCompDirectiveNoFileComp == 0 {
				t.Errorf("%s: file names should not be offered (directive %d)", what, directive)
			}
			if got := directive&cobra.ShellCompDirectiveNoSpace != 0; got != tc.noSpace {
				t.Errorf("%s: no-space directive = %v, want %v", what, got, tc.noSpace)
			}
		})
	}
}

func TestCompletionHelperRunsOnItsOwn(t *testing.T) {
	// kubectl_complete-rv is what krew users put on PATH (see the caveats).
	helper := filepath.Join(filepath.Dir(cluster.RVBin), "kubectl_complete-rv")
	r := cluster.Run(t, nil, helper, "vers")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "version\t") {
		t.Fatalf("kubectl_complete-rv vers: %s", r)
	}
}

// TestCompletionStepsWorkAfterAKrewInstall follows what kubectl rv
// completion prints, as a krew user would: kubectl-rv linked into krew's
// bin folder and nothing else of it on PATH, then the helper written by the
// printed commands, run as written. Before them kubectl completes nothing
// after "kubectl rv"; after them it completes through kubectl-rv. fish's
// commands are also valid sh, so they run here too.
func TestCompletionStepsWorkAfterAKrewInstall(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			tmp := t.TempDir()
			home := filepath.Join(tmp, "home")
			binDir := filepath.Join(home, ".krew", "bin")
			if err := os.MkdirAll(binDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(cluster.RVBin, filepath.Join(binDir, "kubectl-rv")); err != nil {
				t.Fatal(err)
			}
			env := []string{"HOME=" + home, "PATH=" + binDir + string(os.PathListSeparator) + cluster.BinDir + string(os.PathListSeparator) + "/usr/bin:/bin"}
			for _, e := range cluster.Env() {
				if !strings.HasPrefix(e, "PATH=") && !strings.HasPrefix(e, "HOME=") && !strings.HasPrefix(e, "KREW_ROOT=") {
					env = append(env, e)
				}
			}
			// run returns the standard output (kubectl's completion writes
			// its debug lines to standard error).
			run := func(name string, args ...string) (string, error) {
				c := exec.Command(name, args...)
				c.Env = env
				var stderr strings.Builder
				c.Stderr = &stderr
				out, err := c.Output()
				if err != nil {
					err = fmt.Errorf("%w: %s", err, stderr.String())
				}
				return string(out), err
			}
			kubectl := filepath.Join(cluster.BinDir, "kubectl")

			steps, err := run(kubectl, "rv", "completion", sh)
			if err != nil {
				t.Fatalf("kubectl rv completion %s: %v\n%s", sh, err, steps)
			}
			var helperCmds []string
			inStep2 := false
			for _, l := range strings.Split(strings.TrimSuffix(steps, "\n"), "\n") {
				if !strings.HasPrefix(l, "#") {
					t.Fatalf("kubectl rv completion %s: %q is not a comment: sourcing the output would run it\n%s", sh, l, steps)
				}
				switch l = strings.TrimPrefix(l, "#"); {
				case strings.HasPrefix(l, " 2. "):
					inStep2 = true
				case inStep2 && strings.HasPrefix(l, "      "):
					helperCmds = append(helperCmds, strings.TrimSpace(l))
				case inStep2 && strings.TrimSpace(l) == "":
					inStep2 = false
				}
			}
			if len(helperCmds) != 2 {
				t.Fatalf("kubectl rv completion %s: want the helper's two commands under step 2, got %q\n%s", sh, helperCmds, steps)
			}

			if out, _ := run(kubectl, "__complete", "rv", "vers"); strings.Contains(out, "version") {
				t.Fatalf("kubectl completed kubectl rv before the helper was installed:\n%s", out)
			}
			// bash runs bash's; zsh and fish are not installed here, and
			// their commands are also sh.
			shell := "sh"
			if sh == "bash" {
				shell = "bash"
			}
			if out, err := run(shell, "-c", strings.Join(helperCmds, "\n")); err != nil {
				t.Fatalf("the printed commands failed: %v\n%s\n%s", err, strings.Join(helperCmds, "\n"), out)
			}
			out, err := run(kubectl, "__complete", "rv", "vers")
			if err != nil || !strings.HasPrefix(out, "version\t") {
				t.Fatalf("kubectl __complete rv vers after the printed steps: %v\n%s", err, out)
			}
		})
	}
}
