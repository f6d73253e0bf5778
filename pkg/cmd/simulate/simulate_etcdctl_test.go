package simulate

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

var updateEtcdctl = flag.Bool("update-etcdctl", false, "rewrite the simulate etcdctl golden files")

// runEtcdctl runs kubectl rv simulate etcdctl with args and stdin.
func runEtcdctl(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	c := newCmdSimulateEtcdctl(nil, streams)
	if args == nil {
		args = []string{}
	}
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SilenceUsage, c.SilenceErrors = true, true
	err := c.ExecuteContext(context.Background())
	if err != nil && !exitcode.IsSilent(err) {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), exitcode.Classify(err)
}

const transcript = `# REFERENCE.md section 1, after four other writes
put a 1
put b 1
put c 1
put d 1
put k1 a
put k2 b
put k1 c
get k1
del k1
get k1 --rev=6
put k1 d
get k1 -w json
`

func TestSimulateEtcdctlGolden(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"transcript-simple", strings.ReplaceAll(transcript, " -w json", ""), nil, 0},
		{"transcript-json", strings.ReplaceAll(transcript, " -w json", ""), []string{"-w", "json"}, 0},
		{"txn-create-if-absent", "txn\nmod(\"k1\") = \"0\"\n\nput k1 created\n\nget k1\n\ntxn\nmod(\"k1\") = \"0\"\n\nput k1 again\n\nget k1\n\n", nil, 0},
		{"txn-json", "put k1 v\ntxn\nvalue(\"k1\") = \"v\"\nver(\"k1\") > \"0\"\n\nput k1 w --prev-kv\nget k1\ndel k2\n\n\n", []string{"-w", "json"}, 0},
		{"watch-json", "put /r/a 1\nwatch /r/ --prefix --rev 1 --prev-kv\nput /r/a 2\ndel /r/a\nput /other x\n", []string{"-w", "json"}, 0},
		{"watch-simple", "put /r/a 1\nwatch /r/ --prefix --rev 1 --prev-kv\nput /r/a 2\ndel /r/a\n", nil, 0},
		{"compacted", "put k 1\nput k 2\ncompact 3\nget k --rev 2\n", nil, 1},
		{"watch-compacted", "put k 1\nput k 2\ncompact 3\nwatch k --rev 2\n", []string{"-w", "json"}, 0},
		{"future-rev", "get k --rev 5\n", nil, 1},
		{"prefix-limit-keys-only", "put a/1 x\nput a/2 y\nput a/3 z\nput b x\nget a/ --prefix --limit 2 --keys-only\nget a/ --prefix --count-only\n", []string{"-w", "json"}, 0},
		{"args-put-json", "", []string{"-w", "json", "put", "k1", "v1"}, 0},
		{"args-flags-after", "", []string{"get", "k1", "-w", "json"}, 0},
		{"bad-command", "put k1 v1\nfrobnicate k\n", nil, 2},
		{"bad-flag", "get k --revision 3\n", nil, 2},
		{"bad-compare", "txn\nmodd(\"k\") = \"0\"\n\n\n", nil, 2},
		{"bad-compare-value", "txn\nmod(\"k\") = \"x\"\n\n\n", nil, 2},
		{"bad-format", "", []string{"-w", "yaml", "get", "k"}, 2},
		{"count-only-simple", "get k --count-only\n", nil, 2},
		{"transcript-pasted", "etcdctl put k1 v1\netcdctl get k1 -w json\nput k1 v2\nget k1 --rev=2 --write-out=json\nget k1\n", nil, 0},
		{"keys-only-count-only", "put a 1\nget a --keys-only --count-only\n", nil, 2},
		{"bad-line-format", "put a 1\nget a -w yaml\n", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runEtcdctl(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			if tt.code == 2 && out != "" {
				t.Errorf("bad input wrote to stdout: %q", out)
			}
			got := "# stdout\n" + out + "# stderr\n" + errOut
			golden := filepath.Join("testdata", "simulate-etcdctl", tt.name+".golden")
			if *updateEtcdctl {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-etcdctl)", err)
			}
			if d := cmp.Diff(string(want), got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
}

// TestSimulateEtcdctlExamples runs the examples of --help (those that need
// no etcd and no file) and requires them to succeed.
func TestSimulateEtcdctlExamples(t *testing.T) {
	c := newCmdSimulateEtcdctl(nil, genericiooptions.IOStreams{})
	n := 0
	for _, line := range strings.Split(c.Example, "\n") {
		line = strings.TrimSpace(line)
		if !strings.Contains(line, "kubectl rv simulate etcdctl") || strings.Contains(line, "--etcd-endpoints") {
			continue
		}
		stdin := ""
		if pipe, rest, ok := strings.Cut(line, " | "); ok {
			q := strings.TrimSuffix(strings.TrimPrefix(pipe, "printf '"), "'")
			stdin = strings.ReplaceAll(q, `\n`, "\n")
			line = rest
		}
		args := strings.Fields(strings.TrimPrefix(line, "kubectl rv simulate etcdctl"))
		out, errOut, code := runEtcdctl(t, stdin, args...)
		if code != 0 || out == "" {
			t.Errorf("example %q: exit %d, stdout %q, stderr %q", line, code, out, errOut)
		}
		n++
	}
	if n < 3 {
		t.Errorf("found only %d runnable examples", n)
	}
}

// TestSimulateEtcdctlEmptyScriptNamesTheFile: a script file with no
// command is named in the error, so the user knows which file was read.
func TestSimulateEtcdctlEmptyScriptNamesTheFile(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, []byte("# nothing yet\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runEtcdctl(t, "", "-f", empty)
	want := "error: " + empty + ": no command in the script (only blank lines and # comments): write one command per line, e.g. put k1 v1\n"
	if code != exitcode.CodeUsage || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, want)
	}
}
