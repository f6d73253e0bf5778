//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conflictsLiveReport mirrors the documented schema of kubectl rv
// conflicts --live -o json (docs/conflicts.md).
type conflictsLiveReport struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Note       string    `json:"note"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Conflicts  float64   `json:"conflicts"`
	Requests   float64   `json:"requests"`
	Restarted  bool      `json:"restarted"`
	Rows       []struct {
		Group, Resource, Subresource, Verb string
		Conflicts, PerSecond               float64
		Reset                              bool
	} `json:"rows"`
}

func parseLive(t *testing.T, stdout string) conflictsLiveReport {
	t.Helper()
	var rep conflictsLiveReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("conflicts --live -o json: %v\n%s", err, stdout)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "ConflictsLiveReport" {
		t.Fatalf("conflicts --live -o json: apiVersion %q kind %q", rep.APIVersion, rep.Kind)
	}
	if !strings.Contains(rep.Note, "one API-server replica") {
		t.Errorf("the report does not say what one scrape sees: note %q", rep.Note)
	}
	return rep
}

// TestConflictsLive: while --live waits between its two reads of
// /metrics, four writers update one ConfigMap with RetryOnConflict; the
// 409s it reports for configmaps PUT are at least the 409s the writers
// saw themselves (other clients may add their own).
func TestConflictsLive(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	setup := cluster.Clientset(t, "e2e-setup")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot", Namespace: ns}, Data: map[string]string{}}
	if _, err := setup.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := cluster.Command(cctx, "kubectl", "rv", "conflicts", "live", "--for", "20s", "-o", "json")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The command says on stderr when its first read of /metrics is done:
	// the writers start after it.
	var stderr strings.Builder
	started, drained := make(chan bool, 1), make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(errPipe)
		once := false
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if !once && strings.HasPrefix(sc.Text(), "read ") {
				once = true
				started <- true
			}
		}
		if !once {
			started <- false
		}
	}()
	if !<-started {
		<-drained
		_ = cmd.Wait()
		t.Fatalf("conflicts --live ended before its first read of /metrics:\n%s%s", stdout.String(), stderr.String())
	}
	const nWriters, nRounds = 4, 6
	logs := raceRMW(t, ns, "rv-e2e-live", "live", nWriters, nRounds, 0)
	writersDone := time.Now()
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Fatalf("conflicts --live: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	rep := parseLive(t, stdout.String())
	seen := 0
	for _, l := range logs {
		seen += l.Conflicts
	}
	if seen == 0 {
		t.Fatalf("four writers at once made no 409: the test made no contention")
	}
	if writersDone.After(rep.End) {
		t.Fatalf("the writers were still running at the second read of /metrics (%s after it): raise --for", writersDone.Sub(rep.End))
	}
	var got float64
	for _, r := range rep.Rows {
		if r.Group == "" && r.Resource == "configmaps" && r.Subresource == "" && r.Verb == "PUT" {
			got += r.Conflicts
		}
		if r.Conflicts < 0 || r.Reset {
			t.Errorf("row %+v: a negative count or a reset on a server that did not restart", r)
		}
	}
	t.Logf("writers saw %d 409s; --live counted %g for configmaps PUT, %g in all, of %g requests", seen, got, rep.Conflicts, rep.Requests)
	if got < float64(seen) {
		t.Errorf("--live counted %g 409s for configmaps PUT, fewer than the %d the writers saw: %+v", got, seen, rep.Rows)
	}
	if rep.Restarted || rep.Requests < float64(nWriters*nRounds) {
		t.Errorf("restarted %v, %g requests counted: want no restart and at least the writers' %d updates", rep.Restarted, rep.Requests, nWriters*nRounds)
	}
}

// TestConflictsLivePermissions: a user who may read everything but
// /metrics gets an error naming the permission, exit 3 and nothing on
// stdout; rv-readonly, allowed every non-resource URL, gets its report.
func TestConflictsLivePermissions(t *testing.T) {
	ns := cluster.Namespace(t)
	grantConfigMapReader(t, ns, "rv-nobody")
	if r := cluster.Kubectl(t, "get", "configmaps", "-n", ns, "--context", "rv-nobody"); r.Code != 0 {
		t.Fatalf("the read-only user cannot read ConfigMaps: %s", r)
	}
	r := cluster.RV(t, "conflicts", "live", "--for", "1s", "--context", "rv-nobody")
	if r.Code != 3 || r.Stdout != "" || !strings.Contains(r.Stderr, "403 Forbidden") ||
		!strings.Contains(r.Stderr, "needs get on the non-resource URL /metrics") || !strings.Contains(r.Stderr, `User "rv-nobody" cannot get path "/metrics"`) ||
		strings.Count(r.Stderr, "error:") != 1 {
		t.Errorf("a user without get on /metrics: want exit 3, one error naming the permission, no stdout: %s", r)
	}
	r = cluster.RV(t, "conflicts", "live", "--for", "1s", "--context", "rv-readonly", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("rv-readonly: %s", r)
	}
	parseLive(t, r.Stdout)
	// The deprecated --live is still conflicts live, and says so.
	r = cluster.RV(t, "conflicts", "--live", "--audit-log", cluster.AuditLog)
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "--live and --audit-log cannot be used together") ||
		!strings.Contains(r.Stderr, "Flag --live has been deprecated, use kubectl rv conflicts live") {
		t.Errorf("--live with --audit-log: want exit 2 and the deprecation: %s", r)
	}
}
