//go:build e2e

package e2e

import (
	"fmt"
	"testing"
)

// TestConflictsCIFormatsOnAStaleLoop: the stale loop's writer has 5 of
// its 6 writes rejected; --fail-on-rate 0.5 exits 1 in the table and in
// every CI format, each holding its 409s, counted as its own log counts
// them, as an error of cause stale-own-cache at the ConfigMap.
func TestConflictsCIFormatsOnAStaleLoop(t *testing.T) {
	ns := cluster.Namespace(t)
	path, l := staleLoop(t, ns)
	runs := rvFormats(t, "conflicts", "--audit-log", path, "-n", ns, "--retry-window", "250ms", "--fail-on-rate", "0.5")
	checkCIFormats(t, t.TempDir(), runs, ciFinding{code: 1, rule: "conflicts/stale-own-cache", object: "configmaps/" + ns + "/stale",
		text: fmt.Sprintf("%d 409s of rv-admin/stale-loop", l.Conflicts)})
}
