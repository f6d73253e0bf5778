package conflicts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func newConflictsOptions(logs ...string) (*ConflictsOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &ConflictsOptions{
		Output: cmdutil.NewOutputFlags(output.Table, output.JSON, output.YAML), AuditLogs: logs, FailOnRate: -1, RetryWindow: 5 * time.Second, SourceTimeout: audit.DefaultSourceTimeout,
		IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
	}, &out, &errOut
}

func TestConflictsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*ConflictsOptions)
		want string
	}{
		{"no log", func(o *ConflictsOptions) { o.AuditLogs = nil }, "give --audit-log PATH"},
		{"bad view", func(o *ConflictsOptions) { o.View = "graph" }, `--view "graph" is not a view`},
		{"timeline without object", func(o *ConflictsOptions) { o.View = "timeline" }, "--view timeline needs --object"},
		{"rate over 1", func(o *ConflictsOptions) { o.FailOnRate = 5 }, "--fail-on-rate is a fraction"},
		{"zero window", func(o *ConflictsOptions) { o.RetryWindow = 0 }, "--retry-window must be positive"},
		{"bad since", func(o *ConflictsOptions) { o.Since = "yesterday" }, `--since "yesterday"`},
		{"until before since", func(o *ConflictsOptions) { o.Since, o.Until = "2026-11-24T10:00:00Z", "2026-11-24T09:00:00Z" }, "is not after --since"},
		{"bad object", func(o *ConflictsOptions) { o.Object = "leader" }, `--object "leader" is not TYPE/NAME or TYPE/NAMESPACE/NAME`},
		{"bad report", func(o *ConflictsOptions) { o.Report = "x.png" }, `--report "x.png"`},
		{"stdin twice", func(o *ConflictsOptions) { o.AuditLogs = []string{"-", "-"} }, "only once"},
		{"live and audit log", func(o *ConflictsOptions) { o.Live, o.changed = true, flagsGiven("audit-log") }, "--live and --audit-log cannot be used together"},
		{"live and scenario", func(o *ConflictsOptions) { o.Live, o.changed = true, flagsGiven("scenario") }, "--live and --scenario cannot"},
		{"live for zero", func(o *ConflictsOptions) { o.Live, o.AuditLogs = true, nil }, "--for must be positive"},
		{"for without live", func(o *ConflictsOptions) { o.changed = flagsGiven("for") }, "--for is the time --live reads"},
		{"scenario not yaml", func(o *ConflictsOptions) { o.Scenario = "x.json" }, `--scenario "x.json": give a file name ending in .yaml`},
		{"scenario from stdin", func(o *ConflictsOptions) { o.Scenario, o.AuditLogs = "x.yaml", []string{"-"} }, "not - (stdin)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _, _ := newConflictsOptions("audit.log")
			tc.set(o)
			err := o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || exitcode.Classify(err) != exitcode.CodeUsage {
				t.Fatalf("Validate() = %v, want exit 2 with %q", err, tc.want)
			}
		})
	}
}

const conflictLine = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"update","requestURI":"/api/v1/namespaces/ns/configmaps/c?fieldManager=w","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"c"},"responseStatus":{"code":409},"requestReceivedTimestamp":"2026-11-24T10:00:00Z","stageTimestamp":"2026-11-24T10:00:00.001Z"}`

func TestConflictsRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "audit.log")
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(good, []byte(conflictLine+"\n"+conflictLine[:30]), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(conflictLine+"\n{\"kind\":\"Pod\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, out, errOut := newConflictsOptions(good)
	o.FailOnRate = 0.5
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	if exitcode.Classify(err) != exitcode.CodeFinding || !strings.Contains(err.Error(), "u/w (100.0%)") {
		t.Errorf("Run() = %v, want exit 1 naming writer u/w", err)
	}
	if !strings.Contains(out.String(), "configmaps/ns/c") || !strings.Contains(errOut.String(), "warning: skipped 1 last line(s) cut short") {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	o, out, _ = newConflictsOptions(bad)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err = o.Run(context.Background())
	if exitcode.Classify(err) != exitcode.CodeUsage || !strings.Contains(err.Error(), "bad.log:2:") || out.Len() != 0 {
		t.Errorf("Run() = %v with stdout %q, want exit 2 naming bad.log:2 and no output", err, out)
	}
}

func TestConflictsLive(t *testing.T) {
	body := func(n int) []byte {
		return []byte(fmt.Sprintf("# TYPE apiserver_request_total counter\napiserver_request_total{code=\"409\",group=\"\",resource=\"configmaps\",subresource=\"\",verb=\"PUT\",version=\"v1\"} %d\n", n))
	}
	for _, tc := range []struct {
		name   string
		scrape func(int) ([]byte, error)
		code   int
		want   string
	}{
		{"409s counted", func(i int) ([]byte, error) { return body(10 + 5*i), nil }, 0, "configmaps"},
		{"forbidden", func(int) ([]byte, error) {
			return nil, apierrors.NewForbidden(schema.GroupResource{}, "", errors.New(`User "rv-nobody" cannot get path "/metrics"`))
		}, exitcode.CodeCluster, `needs get on the non-resource URL /metrics`},
		{"not metrics", func(int) ([]byte, error) { return []byte("<html>\n"), nil }, exitcode.CodeCluster, "bad metrics"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			o := newLiveOptions(genericiooptions.IOStreams{Out: &out, ErrOut: io.Discard})
			o.For, o.server = time.Millisecond, "https://127.0.0.1:6443"
			i := 0
			o.scrape = func(context.Context) ([]byte, error) { i++; return tc.scrape(i) }
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			err := o.Run(context.Background())
			if got := exitcode.Classify(err); got != tc.code {
				t.Fatalf("Run() = %v (exit %d), want exit %d", err, got, tc.code)
			}
			text := out.String()
			if err != nil {
				text = err.Error()
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("got %q, want %q in it", text, tc.want)
			}
		})
	}
}

func TestConflictsScenario(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	ok := strings.Replace(conflictLine, `"code":409`, `"code":200`, 1)
	if err := os.WriteFile(log, []byte(ok+"\n"+conflictLine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.yaml")
	o, _, _ := newConflictsOptions(log)
	o.Scenario = file
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(b), "kind: Scenario") {
		t.Fatalf("scenario %q: %v", b, err)
	}
	// Nothing to reproduce: exit 2, nothing printed or written.
	empty := filepath.Join(dir, "empty.log")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(dir, "none.yaml")
	o, out, _ := newConflictsOptions(empty)
	o.Scenario = file
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err = o.Run(context.Background())
	if _, statErr := os.Stat(file); exitcode.Classify(err) != exitcode.CodeUsage || !os.IsNotExist(statErr) || out.Len() != 0 {
		t.Errorf("Run() = %v, file %v, stdout %q: want exit 2, no file, no output", err, statErr, out)
	}
}

// TestConflictsSinceDuration: Validate scopes the analysis by
// --since/--until (cmdutil.TimeScopeFlags, whose test covers the values)
// and refuses a bad one with exit 2.
func TestConflictsSinceDuration(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	o, _, _ := newConflictsOptions("audit.log")
	o.Since, o.Until, o.now = "2h", "2026-11-24T09:30:00Z", func() time.Time { return now }
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !o.cfg.Since.Equal(now.Add(-2*time.Hour)) || !o.cfg.Until.Equal(now.Add(-30*time.Minute)) {
		t.Errorf("since %v until %v, want 08:00 and 09:30", o.cfg.Since, o.cfg.Until)
	}
	o, _, _ = newConflictsOptions("audit.log")
	o.Since = "-5m"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--since") || exitcode.Classify(err) != exitcode.CodeUsage {
		t.Errorf("Validate() = %v, want exit 2 naming --since", err)
	}
}

// flagsGiven is SeeFlags' answer when exactly names were given.
func flagsGiven(names ...string) func(string) bool {
	return func(name string) bool { return slices.Contains(names, name) }
}

// TestConflictsSeesFlagsThroughRunE: RunE tells the options which flags
// were given (cmdutil.FlagsSeer), so --live refuses the audit-log flags
// from the command line, not only when a test sets them.
func TestConflictsSeesFlagsThroughRunE(t *testing.T) {
	_, errOut, code := run(t, "conflicts", "--live", "--audit-log", "audit.log")
	if code != 2 || !strings.Contains(errOut, "--live and --audit-log cannot be used together") {
		t.Errorf("exit %d, stderr %q: want 2 refusing --audit-log with --live", code, errOut)
	}
}
