package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

// docExample is one "$ kubectl rv ..." session shown in a document.
type docExample struct {
	where   string // file:line
	command string // the line after "$ "
	want    string // what the document shows below it
}

// docExamples reads every "$ " line of the fenced blocks of README.md and
// docs/*.md, with the output shown under it (up to the next "$ " line or
// the block's end).
func docExamples(t *testing.T) []docExample {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	for _, f := range append([]string{"../../README.md"}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(f, "../../")
		in, cur := false, -1
		for i, l := range strings.Split(string(data), "\n") {
			switch {
			case strings.HasPrefix(l, "```"):
				in, cur = !in, -1
			case in && strings.HasPrefix(l, "$ ") && isSession(l):
				out = append(out, docExample{where: name + ":" + strconv.Itoa(i+1), command: strings.TrimPrefix(l, "$ ")})
				cur = len(out) - 1
			case in && cur >= 0:
				out[cur].want += l + "\n"
			}
		}
	}
	return out
}

// isSession reports whether a "$ " line runs kubectl rv (other lines are
// benchmarks and scripts).
func isSession(l string) bool {
	return strings.HasPrefix(l, "$ kubectl rv ") || strings.HasPrefix(l, "$ printf ") && strings.Contains(l, " | kubectl rv ")
}

// needsACluster are the documented sessions that talk to a cluster (or,
// for conflicts, whose output another change is reworking): the e2e suite
// covers those commands. Every other example runs here, offline.
var needsACluster = map[string]bool{
	"kubectl rv churn -A --for 1m --explain 3":                 true,
	"kubectl rv doctor configmaps,deployments.apps -n default": true,
	"kubectl rv doctor configmaps -n e2e-testdoctorciformatsattheitem-1 --kubeconfig proxy.kubeconfig --check list-consistent,items-have-rv,list-rv-covers-items -o github": true,
	"kubectl rv lag deployments -n e2e-testlagciformatspausedrollout-2 --wait --for rollout --timeout 1s -o github":                                                         true,
	"kubectl rv leases -n kube-system":                                                        true,
	"kubectl rv leases -n kube-system --for 25s":                                              true,
	"kubectl rv owners deploy/web --expect-manager ci --field .spec --include-scale":          true,
	"kubectl rv predict -n demo -f examples/client-apply/settings.yaml --method client-apply": true,
	"kubectl rv predict -n demo -f examples/client-apply/settings.yaml --method kubectl":      true,
	"kubectl rv watch deployment/web -n shop":                                                 true,
}

// testedElsewhere are the sessions another test runs with what they need
// (a fixed now for ages).
var testedElsewhere = map[string]string{
	"kubectl rv owners -f examples/web.yaml --field '.spec.template.spec.containers[name=nginx].image' --view table": "TestREADMEOwnersExample",
}

// TestDocsExamples runs every session the README and docs/ show that can
// run offline (simulate, owners -f, predict --offline, simulate etcdctl)
// from the repository's root, and compares what it prints (stdout and
// stderr as a terminal shows them) with what the document shows. An
// example that needs a cluster must be listed in needsACluster, so that a
// new one is not skipped silently. docs/conflicts.md is left out while its
// command's output is being reworked.
func TestDocsExamples(t *testing.T) {
	examples := docExamples(t)
	t.Chdir("../..")
	ran := 0
	for _, ex := range examples {
		if strings.HasPrefix(ex.where, "docs/conflicts.md:") || needsACluster[ex.command] || testedElsewhere[ex.command] != "" {
			continue
		}
		t.Run(ex.where, func(t *testing.T) {
			stdin, args, discardOut := parseSession(t, ex.command)
			var both bytes.Buffer
			streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &both, ErrOut: &both}
			if discardOut {
				streams.Out = io.Discard
			}
			root := NewCmdRV(streams)
			root.SetArgs(args)
			cmdutil.HandleError(&both, root.ExecuteContext(context.Background()))
			if diff := cmp.Diff(ex.want, both.String()); diff != "" {
				t.Errorf("%s: $ %s\nthe document shows (-) what the command prints (+):\n%s", ex.where, ex.command, diff)
			}
		})
		ran++
	}
	if ran < 4 {
		t.Errorf("ran %d examples: the documents' sessions were not found", ran)
	}
}

// parseSession reads the shell line of an example: an optional
// "printf 'TEXT' | " feeding stdin, then kubectl rv and its arguments
// (single quotes group words), and an optional ">/dev/null" at the end.
func parseSession(t *testing.T, line string) (stdin string, args []string, discardOut bool) {
	t.Helper()
	if rest, ok := strings.CutPrefix(line, "printf '"); ok {
		text, after, ok := strings.Cut(rest, "' | ")
		if !ok {
			t.Fatalf("cannot read the printf of %q", line)
		}
		stdin, line = strings.ReplaceAll(text, `\n`, "\n"), after
	}
	if rest, ok := strings.CutSuffix(line, " >/dev/null"); ok {
		line, discardOut = rest, true
	}
	words, quoted, cur := []string{}, false, ""
	for _, r := range line {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == ' ' && !quoted:
			if cur != "" {
				words, cur = append(words, cur), ""
			}
		default:
			cur += string(r)
		}
	}
	if cur != "" {
		words = append(words, cur)
	}
	if len(words) < 2 || words[0] != "kubectl" || words[1] != "rv" {
		t.Fatalf("not a kubectl rv session: %q", line)
	}
	return stdin, words[2:], discardOut
}
