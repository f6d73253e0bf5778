package simulate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/watch"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

func TestSimulateCommand(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario\nactors:\n- name: a\n  speed: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dep := filepath.Join(dir, "dep.yaml")
	if err := os.WriteFile(dep, []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badRV := filepath.Join(dir, "badrv.jsonl")
	rec := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z"}` + "\n" +
		`{"type":"ADDED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":"abc"}}}` + "\n"
	if err := os.WriteFile(badRV, []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "run.svg")
	tests := []struct {
		name     string
		args     []string
		code     int
		inOut    string
		inErr    string
		emptyOut bool
	}{
		{"bare simulate tells the story", []string{"simulate"}, 0, "409 Conflict: Operation cannot be fulfilled on configmaps \"demo\"", "", false},
		{"list", []string{"simulate", "list"}, 0, "retry-storm", "", false},
		{"run a built-in as yaml", []string{"simulate", "run", "--builtin", "lost-update", "-o", "yaml"}, 0, "kind: SimulationReport", "", false},
		{"picture", []string{"simulate", "run", "--builtin", "two-clients", "--report", svg}, 0, "Scenario two-clients", "Wrote the picture", false},
		{"unknown field names its line", []string{"simulate", "run", bad}, 2, "", "bad.yaml:5: unknown field \"speed\" in an actor", true},
		{"unknown built-in", []string{"simulate", "run", "--builtin", "nope"}, 2, "", "no built-in scenario \"nope\"", true},
		{"file and built-in", []string{"simulate", "run", bad, "--builtin", "quota"}, 2, "", "give a scenario FILE or --builtin NAME", true},
		{"report into a missing directory is bad input", []string{"simulate", "run", "--builtin", "two-clients", "--report", filepath.Join(dir, "nonexistent", "s.svg")}, 2, "", "writing --report", true},
		{"a seed that is not a number", []string{"simulate", "run", "--builtin", "quota", "--seed", "abc"}, 2, "", `invalid argument "abc" for "--seed" flag: the seed is an integer, such as 7`, true},
		{"a Deployment is not a Scenario", []string{"simulate", "run", dep}, 2, "", `dep.yaml:2: not a Scenario: the file holds kind "Deployment"`, true},
		{"a recording with a bad resourceVersion", []string{"simulate", "replay", badRV}, 2, "", `badrv.jsonl: line 2: object metadata.resourceVersion "abc" is not a resourceVersion`, true},
		{"replay without a recording", []string{"simulate", "replay"}, 2, "", "give the RECORDING to replay, a file written by kubectl rv watch --record", true},
		{"replay with two recordings", []string{"simulate", "replay", "a", "b"}, 2, "", "simulate replay takes one RECORDING, got 2 arguments", true},
		{"--keep without a real etcd", []string{"simulate", "run", "--builtin", "quota", "--keep"}, 2, "", "--keep keeps the keys of a run on a real etcd: add --etcd-endpoints", true},
		{"bad report extension", []string{"simulate", "run", "--builtin", "quota", "--report", "x.png"}, 2, "", "--report \"x.png\"", true},
		{"missing recording", []string{"simulate", "replay", filepath.Join(dir, "none.jsonl")}, 2, "", "--replay: open", true},
		{"the alias says where replay moved", []string{"simulate", "replay", filepath.Join(dir, "none.jsonl"), "--object", "cm/x", "-o", "yaml"}, 2, "", "kubectl rv simulate replay is deprecated and will be removed: run kubectl rv watch --replay " + filepath.Join(dir, "none.jsonl") + " --object cm/x -o yaml", true},
		{"replay needs --object for --at", []string{"simulate", "replay", bad, "--at", "5"}, 2, "", "need --object", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			if !strings.Contains(out, tc.inOut) || !strings.Contains(errOut, tc.inErr) {
				t.Errorf("want %q in stdout and %q in stderr, got:\n%s\n---\n%s", tc.inOut, tc.inErr, out, errOut)
			}
			if tc.emptyOut && out != "" {
				t.Errorf("nothing should be written to stdout on bad input, got %q", out)
			}
		})
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(b), "<svg") {
		t.Errorf("the --report picture was not written: %v", err)
	}
}

func TestSimulateSameSeedSameJSON(t *testing.T) {
	a, _, _ := run(t, "simulate", "run", "--builtin", "ssa-fight", "--seed", "9", "-o", "json", "--steps")
	b, _, _ := run(t, "simulate", "run", "--builtin", "ssa-fight", "--seed", "9", "-o", "json", "--steps")
	if a != b {
		t.Fatal("two runs with the same seed differ")
	}
	var rep struct {
		Kind string
		Seed int64
	}
	if err := json.Unmarshal([]byte(a), &rep); err != nil || rep.Kind != "SimulationReport" || rep.Seed != 9 {
		t.Errorf("report: %+v %v", rep, err)
	}
}

// TestSimulateRunReadsStdin: FILE - is standard input, and errors name it.
func TestSimulateRunReadsStdin(t *testing.T) {
	src, err := os.ReadFile("../../../examples/scenarios/counter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin, inOut, inErr string
		code                      int
	}{
		{"a scenario", string(src), "Scenario counter (seed 7)", "", 0},
		{"a bad scenario names stdin", "apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario\nspeed: 3\n", "", `<stdin>:3: unknown field "speed"`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			streams, in, out, errOut := genericiooptions.NewTestIOStreams()
			in.WriteString(tc.stdin)
			root := cmdtest.Root(streams, NewCmdSimulate)
			root.SetArgs([]string{"simulate", "run", "-"})
			code := cmdutil.HandleError(errOut, root.ExecuteContext(context.Background()))
			if code != tc.code || !strings.Contains(out.String(), tc.inOut) || !strings.Contains(errOut.String(), tc.inErr) {
				t.Errorf("exit %d (want %d), want %q in stdout and %q in stderr, got:\n%s\n---\n%s", code, tc.code, tc.inOut, tc.inErr, out, errOut)
			}
		})
	}
}

// TestSimulateErrorsEscapeInput: a scenario whose kind holds a terminal
// escape ("ESC]0;title BEL" retitles the terminal) is reported with the
// escape shown, not sent to the terminal.
func TestSimulateErrorsEscapeInput(t *testing.T) {
	esc := filepath.Join(t.TempDir(), "esc.yaml")
	src := "apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario\nactors:\n- name: a\n  target: {apiVersion: v1, kind: \"\\e]0;title\\a\", name: c}\n  method: update\n  change: {increment: data.x}\n  rate: 1\n"
	if err := os.WriteFile(esc, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "simulate", "run", esc)
	if code != 2 || strings.ContainsAny(errOut, "\x1b\a") || !strings.Contains(errOut, "unknown kind ^[]0;title^G") {
		t.Errorf("exit %d, stderr %q: want exit 2 and the kind escaped", code, errOut)
	}
}

func TestEscapedErrorKeepsLinesAndMarks(t *testing.T) {
	err := escapeErr(exitcode.Usagef("a\x1b[31m\nb\a"))
	if got, want := err.Error(), "a^[[31m\nb^G"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if exitcode.Classify(err) != exitcode.CodeUsage {
		t.Errorf("the exit-code mark was lost")
	}
	if escapeErr(nil) != nil {
		t.Errorf("escapeErr(nil) must be nil")
	}
}

// TestSimulateHelpNeedsNoRepository: a krew install ships no examples/
// directory, so the help of the simulate commands must not point there.
func TestSimulateHelpNeedsNoRepository(t *testing.T) {
	root := NewCmdSimulate(nil, genericiooptions.IOStreams{})
	cmds := append([]*cobra.Command{root}, root.Commands()...)
	for _, c := range cmds {
		if strings.Contains(c.Example+c.Long, "examples/") {
			t.Errorf("%s: the help refers to examples/, which a krew install does not have", c.CommandPath())
		}
	}
}

// run executes kubectl rv ARGS in process, with simulate the only
// command, and watch's replay alias under it as pkg/cmd wires it.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	simulate := func(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
		c := NewCmdSimulate(f, streams)
		c.AddCommand(watch.NewCmdSimulateReplay(f, streams))
		return c
	}
	return cmdtest.Run(t, []cmdtest.NewCmd{simulate}, args...)
}
