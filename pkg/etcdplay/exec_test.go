package etcdplay

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// TestRunAllStopsAtTheFirstFailure: the commands run in order, and the
// first that fails (a compaction past the store's revision) ends the run
// as a CommandError, the later commands not run.
func TestRunAllStopsAtTheFirstFailure(t *testing.T) {
	cmds, err := ParseScript("script", strings.NewReader("put a 1\ncompact 100\nput b 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	r := &Runner{KV: mvcc.NewDefault(), Emit: func(res Result) error { ran = append(ran, res.Command.Key); return nil }}
	defer r.Close()
	err = r.RunAll(context.Background(), cmds, 0)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Command.Kind != Compact {
		t.Fatalf("RunAll = %v, want the compaction's CommandError", err)
	}
	if diff := cmp.Diff([]string{"a"}, ran); diff != "" {
		t.Errorf("results (-want +got)\n%s", diff)
	}
}
