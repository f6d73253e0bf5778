package leases

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
)

func newLeasesOptionsForTest() *LeasesOptions {
	return &LeasesOptions{Output: cmdutil.NewOutputFlags("table", "json", "yaml"), LeaseDuration: 15 * time.Second, View: "table", IOStreams: genericiooptions.NewTestIOStreamsDiscard()}
}

func TestLeasesValidate(t *testing.T) {
	tests := []struct {
		name string
		set  func(o *LeasesOptions)
		msg  string
	}{
		{"a look", func(o *LeasesOptions) {}, ""},
		{"a watch judged", func(o *LeasesOptions) { o.For, o.FailOn = time.Minute, "takeover" }, ""},
		{"a history judged", func(o *LeasesOptions) { o.AuditLogs, o.FailOn = []string{"a.log"}, "split-brain" }, ""},
		{"negative for", func(o *LeasesOptions) { o.For = -1 }, "--for must be positive"},
		{"audit log and watch", func(o *LeasesOptions) { o.AuditLogs, o.Watch = []string{"a.log"}, true }, "--audit-log and --watch/--for cannot be used together"},
		{"zero lease duration", func(o *LeasesOptions) { o.LeaseDuration = 0 }, "--lease-duration must be positive"},
		{"bad view", func(o *LeasesOptions) { o.View = "svg" }, `--view "svg": use table or timeline`},
		{"bad fail-on", func(o *LeasesOptions) { o.For, o.FailOn = time.Minute, "never" }, `--fail-on "never"`},
		{"fail-on on a look", func(o *LeasesOptions) { o.FailOn = "any" }, "--fail-on needs a history"},
		{"split-brain on a watch", func(o *LeasesOptions) { o.Watch, o.FailOn = true, "split-brain" }, "--fail-on split-brain needs --audit-log"},
		{"stdin twice", func(o *LeasesOptions) { o.AuditLogs = []string{"-", "-"} }, "--audit-log - (stdin) can be given only once"},
		{"bad output", func(o *LeasesOptions) { o.Output.Output = "wide" }, "--output"},
		{"report not svg or html", func(o *LeasesOptions) { o.For, o.Report = time.Minute, "x.png" }, `--report "x.png": give a file name ending in .svg or .html`},
		{"report of a look", func(o *LeasesOptions) { o.Report = "x.svg" }, "--report draws a history"},
		{"a history scoped", func(o *LeasesOptions) {
			o.AuditLogs, o.Since, o.Until = []string{"a.log"}, "2026-11-24T09:00:00Z", "2026-11-24T10:00:00Z"
		}, ""},
		{"since on a look", func(o *LeasesOptions) { o.Since = "5m" }, "--since and --until scope an audit log: add --audit-log PATH"},
		{"until on a watch", func(o *LeasesOptions) { o.For, o.Until = time.Minute, "5m" }, "--since and --until scope an audit log"},
		{"bad since", func(o *LeasesOptions) { o.AuditLogs, o.Since = []string{"a.log"}, "yesterday" }, `--since "yesterday": give an RFC 3339 time`},
		{"until before since", func(o *LeasesOptions) { o.AuditLogs, o.Since, o.Until = []string{"a.log"}, "1h", "2h" }, "--until 2h is not after --since 1h"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newLeasesOptionsForTest()
			tt.set(o)
			err := o.Validate()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.msg)
			}
			if got := exitcode.Classify(err); got != exitcode.CodeUsage {
				t.Errorf("exit code %d, want %d", got, exitcode.CodeUsage)
			}
		})
	}
}

func TestLeasesExit(t *testing.T) {
	takeover := &leases.Report{Takeovers: []leases.Takeover{{To: "b"}}}
	acting := &leases.Report{Acting: []leases.Acting{{Writer: "a"}}}
	late := &leases.Report{Locks: []leases.Lock{{Renewals: &leases.Renewals{Late: 2}}}}
	var got []int
	for _, tc := range []struct {
		failOn string
		rep    *leases.Report
	}{{"", takeover}, {"takeover", takeover}, {"takeover", acting}, {"split-brain", acting}, {"late-renew", late}, {"late-renew", takeover}, {"any", late}, {"any", &leases.Report{}}} {
		o := newLeasesOptionsForTest()
		o.FailOn = tc.failOn
		o.failOn, _ = leases.Findings.Parse("--fail-on", o.FailOn)
		got = append(got, exitcode.Classify(o.exit(tc.rep)))
	}
	if diff := cmp.Diff([]int{0, 1, 0, 1, 1, 0, 1, 0}, got); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
}

// TestLeasesHistoryCommand runs the command over an audit log: no cluster
// is needed, and a line that is not an audit event exits 2 naming file:line.
func TestLeasesHistoryCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "audit.log")
	line := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"%s","stage":"ResponseComplete","requestURI":"/apis/coordination.k8s.io/v1/namespaces/ns/leases/l","verb":"update","user":{"username":"admin"},"userAgent":"%s/v0","objectRef":{"resource":"leases","namespace":"ns","name":"l","apiGroup":"coordination.k8s.io","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}` + "\n"
	var b strings.Builder
	for i, w := range []struct{ agent, at string }{{"cand-a", "2026-11-27T10:00:00Z"}, {"cand-a", "2026-11-27T10:00:02Z"}, {"cand-b", "2026-11-27T10:00:20Z"}} {
		fmt.Fprintf(&b, line, string(rune('a'+i)), w.agent, w.at, w.at)
	}
	if err := os.WriteFile(good, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(bad, []byte("{\"kind\":\"Pod\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "leases", "--audit-log", good, "--fail-on", "takeover")
	if code != exitcode.CodeFinding || !strings.Contains(out, "after expiry, unheld 3s") {
		t.Errorf("exit %d, out:\n%s\nerr:\n%s", code, out, errOut)
	}
	_, errOut, code = run(t, "leases", "--audit-log", bad)
	if code != exitcode.CodeUsage || !strings.Contains(errOut, "bad.log:1") {
		t.Errorf("bad log: exit %d, err:\n%s", code, errOut)
	}
	// --since and --until keep the requests received in [since, until):
	// cand-b's write at 10:00:20 alone, then cand-a's two alone.
	for _, tc := range []struct {
		scope      []string
		wantEvents int
		holder     string
	}{
		{[]string{"--since", "2026-11-27T10:00:20Z"}, 1, "cand-b"},
		{[]string{"--until", "2026-11-27T10:00:20Z"}, 2, "cand-a"},
		{[]string{"--since", "2026-11-27T10:00:01Z", "--until", "2026-11-27T10:00:03Z"}, 1, "cand-a"},
	} {
		out, errOut, code := run(t, append([]string{"leases", "--audit-log", good, "-o", "json", "--fail-on", "takeover"}, tc.scope...)...)
		var doc struct {
			Events int
			Locks  []struct{ Holder string }
		}
		err := json.Unmarshal([]byte(out), &doc)
		if code != 0 || err != nil || doc.Events != tc.wantEvents || len(doc.Locks) != 1 || doc.Locks[0].Holder != "admin/"+tc.holder {
			t.Errorf("%v: exit %d, want 0 with %d event(s) held by %s; out:\n%s\nerr:\n%s", tc.scope, code, tc.wantEvents, tc.holder, out, errOut)
		}
	}
}

// run executes kubectl rv ARGS in process, with leases the only command.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return cmdtest.Run(t, []cmdtest.NewCmd{NewCmdLeases}, args...)
}
