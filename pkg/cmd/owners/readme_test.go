package owners

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// readmeBlock returns the output the README shows under the line that
// starts with "$ " + command.
func readmeBlock(t *testing.T, command string) string {
	t.Helper()
	data, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "$ "+command+"\n")
	if !ok {
		t.Fatalf("README.md shows no %q", command)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("README.md: the block of %q does not end", command)
	}
	return block
}

// TestREADMEOwnersExample runs the README's owners example on the file it
// names (examples/web.yaml), 110 minutes after the newest write in it, and
// compares the output with what the README shows.
func TestREADMEOwnersExample(t *testing.T) {
	const command = "kubectl rv owners -f examples/web.yaml --field '.spec.template.spec.containers[name=nginx].image' --view table"
	want := readmeBlock(t, command)
	var out, errOut bytes.Buffer
	sel := cmdutil.NewSelectionFlags(true)
	sel.Filenames = []string{"../../../examples/web.yaml"}
	o := &OwnersOptions{
		Selection: sel,
		Output:    cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML),
		View:      ViewTable,
		Field:     ".spec.template.spec.containers[name=nginx].image",
		now:       func() time.Time { return time.Date(2026, 11, 24, 13, 34, 42, 0, time.UTC).Add(110 * time.Minute) },
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if got := out.String(); got != want {
		t.Errorf("README.md shows:\n%s\nthe command prints:\n%s", want, got)
	}
}
