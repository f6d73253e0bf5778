package conflicts

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
)

// floodLog is an audit log of 3 objects with 409s, each written 4 times
// by its own writer, and 30 without, each written 6 times by its own
// writer: the quiet objects have more attempts, so only the 409s can
// put the contended ones first.
func floodLog(t *testing.T) string {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	n := 0
	write := func(obj, manager string, code int) {
		at := t0.Add(time.Duration(n) * time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"id-%d","stage":"ResponseComplete","verb":"update","requestURI":"/api/v1/namespaces/ns/configmaps/%s?fieldManager=%s","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"%s"},"responseStatus":{"code":%d},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}`+"\n",
			n, obj, manager, obj, code, at, at)
		n++
	}
	for i := range 3 {
		for j := range 4 {
			write(fmt.Sprintf("hot-%d", i), fmt.Sprintf("hot-%d", i), []int{200, 409, 200, 409}[j])
		}
	}
	for i := range 30 {
		for range 6 {
			write(fmt.Sprintf("quiet-%02d", i), fmt.Sprintf("quiet-%02d", i), 200)
		}
	}
	return cmdtest.FileWriter(t, t.TempDir())("audit.log", b.String())
}

// TestConflictsTopKeepsFailOnRate: --top chooses the rows shown, not the
// writers --fail-on-rate judges: a writer past the top is still over the
// rate.
func TestConflictsTopKeepsFailOnRate(t *testing.T) {
	log := floodLog(t)
	// hot-0's rate is 50%; with --top 1 the quiet writers, at 0%, are
	// past the top, and so are hot-1 and hot-2.
	_, errOut, code := run(t, "conflicts", "--audit-log", log, "--top", "1", "--fail-on-rate", "0.4")
	if code != 1 || !strings.Contains(errOut, "3 writer(s) over --fail-on-rate 0.4") {
		t.Errorf("exit %d, stderr %q: want 1 naming the 3 writers over 40%%", code, errOut)
	}
}
