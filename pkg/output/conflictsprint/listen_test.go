package conflictsprint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// TestListenStatsOrdersRefusals: the refusals by reason, the most first
// and ties by name, then the first ones kept and how many there were.
func TestListenStatsOrdersRefusals(t *testing.T) {
	var w bytes.Buffer
	ListenStats(&w, audit.ListenStats{Events: 3, Batches: 1, Rejected: 5, RejectedEvents: 1,
		RejectedBy: map[string]int64{audit.RejectWrongToken: 1, audit.RejectNoCredentials: 3, audit.RejectContentType: 1},
		Rejects:    []audit.Reject{{Remote: "127.0.0.1:1", Reason: audit.RejectNoCredentials}}})
	for _, want := range []string{
		"received 3 audit events in 1 batches",
		"skipped 1 events",
		"refused 5 requests or connections, none counted: 3 no credentials, 1 not application/json, 1 wrong token\n",
		"  refused from 127.0.0.1:1: no credentials\n  (the first 1 of 6 shown)\n",
	} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, w.String())
		}
	}
}
