package leases

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// exampleLog is docs/leases.md's audit log: two takeovers after expiry,
// and leasecand-a acting while not leader.
const exampleLog = "../../../examples/leases-audit.log.gz"

// TestLeasesCIFormats: over the example's history, each CI format exits
// 1 as the table does under --fail-on split-brain, with the acting window
// an error at the Lease naming the former holder, and the takeovers
// warnings.
func TestLeasesCIFormats(t *testing.T) {
	args := []string{"leases", "--audit-log", exampleLog, "--lease-duration", "6s", "--fail-on", "split-brain"}
	if _, errOut, code := run(t, args...); code != exitcode.CodeFinding {
		t.Fatalf("the table exits %d, want 1: %s", code, errOut)
	}
	out, errOut, code := run(t, append(args, "-o", "github")...)
	for _, want := range []string{
		"::error title=acting while not leader%3A Lease/demo/lock::rv-admin/leasecand-a wrote 19 times after it lost the lock",
		"::warning title=takeover%3A Lease/demo/lock::rv-admin/leasecand-b took the lock from rv-admin/leasecand-a",
		"ok: late renewal\n",
	} {
		if code != exitcode.CodeFinding || !strings.Contains(out, want) {
			t.Errorf("-o github: exit %d, want 1 and %q in:\n%s%s", code, want, out, errOut)
		}
	}
	out, errOut, code = run(t, append(args, "-o", "junit")...)
	var doc struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil || code != exitcode.CodeFinding || doc.Failures != 1 {
		t.Errorf("-o junit: exit %d, %d failures (%v), want 1 and 1:\n%s%s", code, doc.Failures, err, out, errOut)
	}
	out, errOut, code = run(t, append(args, "-o", "sarif")...)
	if err := sarifcheck.Validate([]byte(out)); err != nil || code != exitcode.CodeFinding {
		t.Errorf("-o sarif: exit %d, %v:\n%s", code, err, errOut)
	}
}

// TestLeasesCIFormatsNeedAHistory: one look has no finding to report, so
// a CI format without --for, --watch or --audit-log is a usage error.
func TestLeasesCIFormatsNeedAHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(o *LeasesOptions)
		want string
	}{
		{"a look", func(o *LeasesOptions) {}, "-o junit reports a history's findings, which one look has none of: add --for DURATION, --watch or --audit-log PATH"},
		{"a watch", func(o *LeasesOptions) { o.Watch = true }, ""},
		{"a history", func(o *LeasesOptions) { o.AuditLogs = []string{"a.log"} }, ""},
	} {
		o := newLeasesOptionsForTest()
		o.Output = cmdutil.NewOutputFlags("junit")
		tc.set(o)
		err := o.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want || err != nil && exitcode.Classify(err) != exitcode.CodeUsage {
			t.Errorf("%s: Validate() = %v, want %q (exit 2)", tc.name, err, tc.want)
		}
	}
}
