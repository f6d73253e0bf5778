package doctorprint

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/doctor"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func report() *doctor.Report {
	rep := &doctor.Report{Resources: []doctor.Resource{
		{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Checks: []doctor.Check{
			{ID: doctor.ListConsistent, Status: doctor.Pass, Observed: "resourceVersion 613, 5 items, in 3ms"},
			{ID: doctor.WatchBookmarks, Status: doctor.Warn, Observed: "no BOOKMARK in a watch of 4s"},
		}},
		{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true, Checks: []doctor.Check{
			{ID: doctor.ItemsHaveRV, Status: doctor.Fail, Observed: "2 of 2 items carry no resourceVersion, e.g. ns/\x1b]0;title\x07w",
				Values: map[string]string{"items": "2", "missing": "2", "itemNamespace": "ns", "itemName": "\x1b]0;title\x07w"}},
			{ID: doctor.Paging, Status: doctor.Skip, Observed: "1 item: nothing to page"},
		}},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, Checks: []doctor.Check{
			{ID: doctor.ListAny, Status: doctor.Pass, Observed: "resourceVersion 9, 0 items"},
		}},
		{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true, Warning: "not probed: secrets is forbidden"},
	}}
	rep.Summary = doctor.Summary{Resources: 4, Forbidden: 1, Pass: 2, Fail: 1, Warn: 1, Skip: 1}
	return rep
}

// TestPrint shows the summary, the details of the resources that failed or
// warned only, escaped server strings, and with Details every resource.
func TestPrint(t *testing.T) {
	for _, tc := range []struct {
		name    string
		details bool
	}{{"table.txt", false}, {"wide.txt", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &output.Printer{Out: &buf, Format: output.Table}
			if err := Print(p, report(), Options{Details: tc.details}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tc.name, buf.Bytes())
		})
	}
}

// TestSummaryCountsOne pins the summary's grammar for counts of one
// ("1 checks passed" was printed).
func TestSummaryCountsOne(t *testing.T) {
	rep := &doctor.Report{Resources: []doctor.Resource{{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Checks: []doctor.Check{
		{ID: doctor.ListConsistent, Status: doctor.Pass, Observed: "resourceVersion 613, 1 item, in 3ms"},
	}}}}
	rep.Summary = doctor.Summary{Resources: 1, Pass: 1}
	var buf bytes.Buffer
	if err := Print(&output.Printer{Out: &buf, Format: output.Table}, rep, Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if got, want := lines[len(lines)-1], "1 resource: 1 check passed, 0 failed, 0 warned, 0 skipped"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
