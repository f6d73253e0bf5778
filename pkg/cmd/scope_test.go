package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

// TestAuditScopeFlagsAlike: every command that reads audit logs
// (--audit-log) takes the one time scope, --since and --until, with the
// same help, from cmdutil.TimeScopeFlags.
func TestAuditScopeFlagsAlike(t *testing.T) {
	var want cmdutil.TimeScopeFlags
	wantFS := pflag.NewFlagSet("want", pflag.ContinueOnError)
	want.AddFlags(wantFS)
	root := NewCmdRV(genericiooptions.NewTestIOStreamsDiscard())
	readers := 0
	for _, path := range commandPaths(root, nil) {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.Flags().Lookup("audit-log") == nil {
			continue
		}
		readers++
		for _, name := range []string{"since", "until"} {
			got := c.Flags().Lookup(name)
			if got == nil {
				t.Errorf("kubectl rv %s reads --audit-log but has no --%s", strings.Join(path, " "), name)
				continue
			}
			if w := wantFS.Lookup(name); got.Usage != w.Usage || got.Value.Type() != w.Value.Type() {
				t.Errorf("kubectl rv %s --%s: %q, want cmdutil's %q", strings.Join(path, " "), name, got.Usage, w.Usage)
			}
		}
	}
	if readers < 2 {
		t.Errorf("%d commands read --audit-log, want conflicts and leases at least", readers)
	}
}
