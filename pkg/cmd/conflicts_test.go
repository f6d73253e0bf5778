package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

func newConflictsOptions(logs ...string) (*ConflictsOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &ConflictsOptions{
		Output: NewOutputFlags(output.Table, output.JSON, output.YAML), AuditLogs: logs, FailOnRate: -1, RetryWindow: 5 * time.Second,
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
		{"bad object", func(o *ConflictsOptions) { o.Object = "leader" }, `--object "leader": give TYPE/NAME`},
		{"bad report", func(o *ConflictsOptions) { o.Report = "x.png" }, `--report "x.png"`},
		{"stdin twice", func(o *ConflictsOptions) { o.AuditLogs = []string{"-", "-"} }, "only once"},
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
