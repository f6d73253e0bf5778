package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

// TestWatchReplayCutShort: a recording whose last line is cut short (what a
// killed recorder leaves) replays up to the cut with a warning naming
// file:line; the same damage in the middle of the recording exits 2.
func TestWatchReplayCutShort(t *testing.T) {
	dir := t.TempDir()
	lines := recordingLines()
	whole := strings.Join(lines, "\n") + "\n"
	cut := whole[:len(whole)-40] // the last line, without its end and newline
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, content string
		code          int
		inOut, inErr  string
		notOut        string
	}{
		{"whole", whole, 0, `"resourceVersion":"12"`, "", ""},
		{"cut at the end", cut, 0, `"resourceVersion":"11"`, "trunc.jsonl:5: the last line is cut short (the recorder was stopped while writing it); replaying the 4 lines before it", `"resourceVersion":"12"`},
		{"cut in the middle", cut + "\n" + lines[3] + "\n", 2, "", "trunc.jsonl: line 5: invalid JSON", `"resourceVersion"`},
		{"cut at the end, ended by a newline", cut + "\n", 2, "", "trunc.jsonl: line 5: invalid JSON", `"resourceVersion"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write("trunc.jsonl", tt.content)
			out, errOut, code := run(t, "watch", "--replay", p, "-o", "json")
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.inOut) || !strings.Contains(errOut, tt.inErr) {
				t.Errorf("want %q in stdout and %q in stderr, got:\n%s\n---\n%s", tt.inOut, tt.inErr, out, errOut)
			}
			if tt.notOut != "" && strings.Contains(out, tt.notOut) {
				t.Errorf("want no %q in stdout, got:\n%s", tt.notOut, out)
			}
		})
	}
}

// TestWatchReplayTravels: --replay with --list, --object, --at, --from and
// --to travels in the recording (what simulate replay did, which is now
// its deprecated alias and prints the same); the flags are refused where
// they mean nothing.
func TestWatchReplayTravels(t *testing.T) {
	p := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(recordingLines(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		args         []string
		code         int
		inOut, inErr string
	}{
		{"list", []string{"watch", "--replay", p, "--list"}, 0, "shop/web", ""},
		{"list as yaml", []string{"watch", "--replay", p, "--list", "-o", "yaml"}, 0, "kind: ReplayList", ""},
		{"one object at a version", []string{"watch", "--replay", p, "--object", "deploy/web", "-n", "shop", "--at", "11"}, 0, "replicas: 2", ""},
		{"a namespace -n contradicts", []string{"watch", "--replay", p, "--object", "deploy/shop/web", "-n", "other", "--at", "11"}, 2, "", `--object deploy/shop/web names namespace "shop", -n names "other": give one`},
		{"its last state", []string{"watch", "--replay", p, "--object", "deployments.apps/shop/web"}, 0, "replicas: 3", ""},
		{"a diff", []string{"watch", "--replay", p, "--object", "deploy/shop/web", "--from", "10", "--to", "12"}, 0, ".spec.replicas", ""},
		{"an unknown object", []string{"watch", "--replay", p, "--object", "deploy/shop/api"}, 2, "", "--object: "},
		{"--at without --object", []string{"watch", "--replay", p, "--at", "11"}, 2, "", "--at, --from and --to need --object"},
		{"--from without --to", []string{"watch", "--replay", p, "--object", "deploy/shop/web", "--from", "10"}, 2, "", "--from and --to go together"},
		{"--list and --object", []string{"watch", "--replay", p, "--list", "--object", "deploy/shop/web"}, 2, "", "give --list, or --object, not both"},
		{"--list without --replay", []string{"watch", "deployments", "--list"}, 2, "", "--list travels in a recording: give it with --replay FILE"},
		{"yaml for the stream", []string{"watch", "--replay", p, "-o", "yaml"}, 2, "", "-o yaml is for --replay's --list and --object views"},
		{"the alias lists", []string{"simulate", "replay", p}, 0, "shop/web", "run kubectl rv watch --replay " + p + " --list\n"},
		{"the alias shows an object", []string{"simulate", "replay", p, "--object", "deploy/shop/web", "--at", "11"}, 0, "replicas: 2", "run kubectl rv watch --replay " + p + " --object deploy/shop/web --at 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if !strings.Contains(out, tt.inOut) || !strings.Contains(errOut, tt.inErr) {
				t.Errorf("want %q in stdout and %q in stderr, got:\n%s\n---\n%s", tt.inOut, tt.inErr, out, errOut)
			}
		})
	}
}

// recordingLines is a recording of a Deployment scaled from 1 to 3.
func recordingLines() []string {
	deploy := func(rv, replicas string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u1","resourceVersion":"` + rv + `","generation":1,` +
			`"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","time":"2026-11-21T15:00:0` + replicas + `Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},"spec":{"replicas":` + replicas + `}}`
	}
	return []string{
		`{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z","secretsRedacted":true}`,
		`{"type":"LIST","time":"2026-11-21T15:00:00Z","resource":"apps/v1/deployments","reason":"initial","object":` + deploy("10", "1") + `}`,
		`{"type":"SYNCED","time":"2026-11-21T15:00:00Z","resource":"apps/v1/deployments","reason":"initial","resourceVersion":"10"}`,
		`{"type":"MODIFIED","time":"2026-11-21T15:00:02Z","resource":"apps/v1/deployments","object":` + deploy("11", "2") + `}`,
		`{"type":"MODIFIED","time":"2026-11-21T15:00:03Z","resource":"apps/v1/deployments","object":` + deploy("12", "3") + `}`,
	}
}

// run executes kubectl rv ARGS in process, with watch and simulate's
// replay alias the only commands.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	simulate := func(f *cmdutil.Factory, streams genericiooptions.IOStreams) *cobra.Command {
		c := &cobra.Command{Use: "simulate"}
		c.AddCommand(NewCmdSimulateReplay(f, streams))
		return c
	}
	return cmdtest.Run(t, []cmdtest.NewCmd{NewCmdWatch, simulate}, args...)
}

// TestWatchOutputHelpSaysWhereYAMLGoes: -o yaml is refused by a live
// watch and a replayed stream, so the flag's help says where it applies.
func TestWatchOutputHelpSaysWhereYAMLGoes(t *testing.T) {
	out, _, code := run(t, "watch", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "--output") {
			line = l
		}
	}
	if !strings.Contains(line, "yaml only with --replay and --list or --object") {
		t.Errorf("-o's help does not say where yaml applies: %q", line)
	}
}
