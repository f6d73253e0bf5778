//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// TestConflictsListenReceivesTheWebhook: a real kube-apiserver started
// with the audit webhook backend sends its events to conflicts --listen;
// the 409s a writer made through it appear with the counts the writer
// logged itself, and the --record file read back with --audit-log gives
// the same writers as the listener did.
func TestConflictsListenReceivesTheWebhook(t *testing.T) {
	t.Parallel() // see TestMain: its own plane
	addr := freeLoopbackAddr(t)
	dir := t.TempDir()
	rec, kubeconfig := filepath.Join(dir, "received.log"), filepath.Join(dir, "webhook.kubeconfig")
	bg := cluster.StartRV(t, "conflicts", "--listen", addr, "--webhook-kubeconfig", kubeconfig, "--record", rec, "--view", "writers", "-o", "json")
	waitFile(t, kubeconfig)

	p, err := cluster.StartPlane(framework.PlaneOptions{AuditWebhookKubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.StopPlane(); err != nil {
			t.Error(err)
		}
	}()

	// The writer: one good update, then updates with the stale
	// resourceVersion it read first; it counts its own outcomes.
	const agent = "e2e-listen-writer/1.0"
	own, ns := staleWriter(t, p, agent)
	// The webhook flushes its batches every second.
	time.Sleep(5 * time.Second)
	r := bg.Stop(t)
	if r.Code != 0 || !strings.Contains(r.Stderr, "receiving audit events at https://"+addr) || !strings.Contains(r.Stderr, "received ") {
		t.Fatalf("conflicts --listen: %s", r)
	}
	var live conflictsReport
	if err := json.Unmarshal([]byte(r.Stdout), &live); err != nil {
		t.Fatalf("conflicts --listen -o json: %v\n%s", err, r.Stdout)
	}
	got := writerByAgent(live, agent)
	if got == nil {
		t.Fatalf("no writer with user agent %s in the listener's report: %s", agent, r.Stdout)
	}
	if got.Attempts != own.Attempts || got.Conflicts != own.Conflicts || got.Successes != own.Successes {
		t.Errorf("the listener counts %d attempts, %d 409s, %d successes; the writer logged %d, %d, %d",
			got.Attempts, got.Conflicts, got.Successes, own.Attempts, own.Conflicts, own.Successes)
	}
	back := runConflicts(t, "--audit-log", rec, "--view", "writers")
	if fmt.Sprint(back.Writers) != fmt.Sprint(live.Writers) || back.Summary != live.Summary {
		t.Errorf("--audit-log of the --record file differs from the listener's report:\nrecord: %+v\nlive:   %+v", back, live)
	}
	// The API server's own log file has the same writes of this writer.
	file := runConflicts(t, "--audit-log", p.AuditLog, "-n", ns, "--view", "writers")
	if f := writerByAgent(file, agent); f == nil || f.conflictsTally != got.conflictsTally {
		t.Errorf("the API server's log file counts %+v for %s, the listener %+v", f, agent, got)
	}
	// The time its 409s took, from the log's own timestamps.
	if want := conflictTime(t, p.AuditLog, agent); math.Abs(got.ConflictSeconds-want) > 1e-6 || want == 0 {
		t.Errorf("conflictSeconds %g, the log's 409s of %s took %gs", got.ConflictSeconds, agent, want)
	}
}

// conflictTime sums stageTimestamp - requestReceivedTimestamp over the
// ResponseComplete 409s of userAgent in the audit log at path.
func conflictTime(t *testing.T, path, userAgent string) float64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e struct {
			Stage, UserAgent                         string
			ResponseStatus                           struct{ Code int }
			RequestReceivedTimestamp, StageTimestamp time.Time
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatal(err)
		}
		if e.Stage == "ResponseComplete" && e.UserAgent == userAgent && e.ResponseStatus.Code == 409 {
			sum += e.StageTimestamp.Sub(e.RequestReceivedTimestamp).Seconds()
		}
	}
	return sum
}

func writerByAgent(rep conflictsReport, agent string) *writerRow {
	for i, w := range rep.Writers {
		if w.UserAgent == agent {
			return &rep.Writers[i]
		}
	}
	return nil
}

// freeLoopbackAddr is a loopback address with a port free a moment ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			_ = c.Close()
			return
		}
	}
	t.Fatalf("nothing listens on %s after a minute", addr)
}
