package conflicts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// TestConflictsCIFormats: each CI format exits as the table does, 1 when
// --fail-on-rate fails on the writer and 0 without it, and reports the
// writer's 409 at its object: an error over the rate, a warning
// otherwise.
func TestConflictsCIFormats(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(log, []byte(conflictLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want map[string]string
	}{
		{[]string{"--fail-on-rate", "0.5"}, exitcode.CodeFinding, map[string]string{
			"github": "::error title=unknown%3A configmaps/ns/c::1 409 of u/w (its conflict rate 100.0%25)",
			"junit":  `<failure message="1 409 of u/w (its conflict rate 100.0%)" type="conflicts/unknown">configmaps/ns/c: error: 1 409 of u/w`,
			"sarif":  `"level": "error"`,
		}},
		{nil, 0, map[string]string{
			"github": "::warning title=unknown%3A configmaps/ns/c::1 409 of u/w",
			"junit":  `<system-out>configmaps/ns/c: warning: 1 409 of u/w`,
			"sarif":  `"fullyQualifiedName": "configmaps/ns/c"`,
		}},
	} {
		_, _, table := run(t, append([]string{"conflicts", "--audit-log", log}, tc.args...)...)
		if table != tc.code {
			t.Fatalf("%v: the table exits %d, want %d", tc.args, table, tc.code)
		}
		for _, f := range []string{"github", "junit", "sarif"} {
			out, errOut, code := run(t, append([]string{"conflicts", "--audit-log", log, "-o", f}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.want[f]) {
				t.Errorf("%v -o %s: exit %d (want %d), want %q in:\n%s%s", tc.args, f, code, tc.code, tc.want[f], out, errOut)
			}
		}
	}
}

// TestConflictsLiveRefusesCIFormats: --live reads /metrics, which names
// no object or writer: a CI format with it is a usage error naming both
// flags.
func TestConflictsLiveRefusesCIFormats(t *testing.T) {
	_, errOut, code := run(t, "conflicts", "--live", "--for", "1s", "-o", "sarif")
	if code != exitcode.CodeUsage || !strings.Contains(errOut, "--live and -o sarif cannot be used together") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming --live and -o sarif", code, errOut)
	}
}
