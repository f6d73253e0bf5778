//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/chfake"
	"github.com/kubectl-rv/kubectl-rv/internal/osfake"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// TestConflictsSourceLogServices: the busy scene's real audit log, indexed
// into a local server that speaks OpenSearch's point-in-time API and
// stored in one that speaks ClickHouse's HTTP interface (each refusing
// what the real service refuses), read with --source through kubectl rv,
// gives the report of the same log's
// completed writes read from a file, 409s and all; each server sends only
// those writes.
func TestConflictsSourceLogServices(t *testing.T) {
	s := sharedBusyScene(t)
	raw, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	fields := make([]map[string]string, len(lines))
	var writes []string
	for i, l := range lines {
		var e struct{ Verb, Stage, RequestReceivedTimestamp string }
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("%s:%d: %v", s.log, i+1, err)
		}
		fields[i] = map[string]string{"verb": e.Verb, "stage": e.Stage, "requestReceivedTimestamp": e.RequestReceivedTimestamp}
		if slices.Contains(audit.WriteVerbs, e.Verb) && (e.Stage == audit.StageResponseComplete || e.Stage == audit.StagePanic) {
			writes = append(writes, l)
		}
	}
	file := filepath.Join(t.TempDir(), "writes.log")
	if err := os.WriteFile(file, []byte(strings.Join(writes, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := cluster.RV(t, "conflicts", "--audit-log", file, "-n", s.ns, "--view", "writers", "-o", "json")
	var rep struct {
		Summary struct{ Conflicts int } `json:"summary"`
	}
	if want.Code != 0 || json.Unmarshal([]byte(want.Stdout), &rep) != nil || rep.Summary.Conflicts == 0 {
		t.Fatalf("the log's writes: want a report with 409s: %s", want)
	}

	osSrv := &osfake.Server{Index: "k8s-audit", N: len(lines), User: "reader", Password: "os-e2e-pw", Doc: func(i int) osfake.Doc {
		return osfake.Doc{Fields: fields[i], Source: lines[i]}
	}}
	chSrv := &chfake.Server{Database: "logs", Table: "k8s_audit", N: len(lines), BlockRows: 500, User: "reader", Password: "ch-e2e-pw",
		Row: func(i int) (map[string]string, string) { return fields[i], lines[i] }}
	osTS, chTS := httptest.NewServer(osSrv), httptest.NewServer(chSrv)
	defer osTS.Close()
	defer chTS.Close()
	for _, tc := range []struct {
		source string
		env    []string
		sent   func() int
	}{
		{"opensearch:" + osTS.URL + "/k8s-audit", []string{"OPENSEARCH_USERNAME=reader", "OPENSEARCH_PASSWORD=os-e2e-pw"}, func() int { return osSrv.Counts().Sent }},
		{"clickhouse:" + chTS.URL + "/logs/k8s_audit", []string{"CLICKHOUSE_USER=reader", "CLICKHOUSE_PASSWORD=ch-e2e-pw"}, func() int { return chSrv.Counts().Sent }},
	} {
		cmd := cluster.Command(context.Background(), "kubectl", "rv", "conflicts", "--source", tc.source, "-n", s.ns, "--view", "writers", "-o", "json")
		cmd.Env = append(cluster.Env(), tc.env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("--source %s: %v: %s", tc.source, err, stderr.String())
		}
		if a, b := dropInput(t, want.Stdout), dropInput(t, stdout.String()); a != b {
			t.Errorf("--source %s gives another report than the log's writes:\nfile:   %s\nsource: %s", tc.source, a, b)
		}
		if got := tc.sent(); got != len(writes) {
			t.Errorf("--source %s: the server sent %d events, want the log's %d completed writes", tc.source, got, len(writes))
		}
		if strings.Contains(stdout.String()+stderr.String(), "e2e-pw") {
			t.Errorf("--source %s printed a password", tc.source)
		}
	}
}
