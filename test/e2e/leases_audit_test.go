//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// auditWrite is one completed write of the audit log, as the log says.
type auditWrite struct {
	AuditID, Stage, Verb, RequestURI, UserAgent string
	User                                        struct{ Username string }
	ObjectRef                                   struct{ Resource, Namespace, Name string }
	ResponseStatus                              struct{ Code int }
	RequestReceivedTimestamp, StageTimestamp    time.Time
}

// auditWrites reads the successful writes of the audit log into
// namespaces ns, each auditID once, with encoding/json.
func auditWrites(t *testing.T, ns ...string) []auditWrite {
	t.Helper()
	f, err := os.Open(cluster.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []auditWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e auditWrite
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Stage != "ResponseComplete" || seen[e.AuditID] ||
			!slices.Contains(ns, e.ObjectRef.Namespace) || e.ResponseStatus.Code/100 != 2 ||
			!slices.Contains([]string{"create", "update", "patch", "delete"}, e.Verb) {
			continue
		}
		seen[e.AuditID] = true
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

const sharedLease = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: made-by-hand
spec:
  holderIdentity: admin
  leaseDurationSeconds: 2
`

// TestLeasesSharedIdentityIsNotSplitBrain (#51 item 3): a Lease created
// with kubectl create is held, in the audit log, by
// rv-admin/kubectl-create, which never renews it. Once its 2 s have
// passed, two other sessions of the same kubectl run kubectl create in
// other namespaces, as the issue saw: one kubectl version on one machine,
// so one user agent and no pod. Any kubectl session of rv-admin is
// rv-admin/kubectl-create, so those creates cannot prove that the Lease's
// holder acted: leases --fail-on split-brain exits 0, lists them apart,
// marked as kubectl outside a pod, and names the identity on stderr.
func TestLeasesSharedIdentityIsNotSplitBrain(t *testing.T) {
	t.Parallel() // see TestMain: waits, not the CPU
	ns, other1, other2 := cluster.Namespace(t), cluster.Namespace(t), cluster.Namespace(t)
	cluster.KubectlStdin(t, sharedLease, "create", "-n", ns, "-f", "-")
	time.Sleep(3 * time.Second)
	cluster.MustKubectl(t, "create", "configmap", "from-one-session", "-n", other1)
	cluster.MustKubectl(t, "create", "configmap", "from-another", "-n", other2)

	// What the log says: rv-admin's kubectl creates and their user agents.
	var agents []string
	for _, e := range auditWrites(t, ns, other1, other2) {
		if e.User.Username == "rv-admin" && strings.Contains(e.RequestURI, "fieldManager=kubectl-create") && !slices.Contains(agents, e.UserAgent) {
			agents = append(agents, e.UserAgent)
		}
	}
	if len(agents) != 1 || !strings.HasPrefix(agents[0], "kubectl/") {
		t.Fatalf("the log has the user agents %q for rv-admin's kubectl creates: want one kubectl's", agents)
	}

	args := []string{"leases", "-n", ns, "--audit-log", cluster.AuditLog, "--lease-duration", "2s", "--fail-on", "split-brain"}
	r := cluster.RV(t, append(args, "-o", "json")...)
	if r.Code != 0 {
		t.Fatalf("--fail-on split-brain on a shared identity's writes: %s", r)
	}
	var rep struct {
		Acting        []struct{ Writer string } `json:"acting"`
		SharedWriters []struct {
			Writer  string                 `json:"writer"`
			Writes  int                    `json:"writes"`
			Shared  struct{ Kubectl bool } `json:"shared"`
			Objects []string               `json:"objects"`
		} `json:"sharedWriters"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r)
	}
	if len(rep.Acting) != 0 || len(rep.SharedWriters) != 1 {
		t.Fatalf("acting %+v, shared writers %+v: want only rv-admin/kubectl-create, apart", rep.Acting, rep.SharedWriters)
	}
	sw := rep.SharedWriters[0]
	for _, want := range []string{"configmaps " + other1 + "/from-one-session", "configmaps " + other2 + "/from-another"} {
		if !slices.Contains(sw.Objects, want) && len(sw.Objects) < 20 {
			t.Errorf("shared writer's objects %q: no %s", sw.Objects, want)
		}
	}
	if !sw.Shared.Kubectl {
		t.Errorf("shared writer %s: not marked as kubectl outside a pod: %s", sw.Writer, r.Stdout)
	}
	if sw.Writer != "rv-admin/kubectl-create" || !strings.Contains(r.Stderr, "rv-admin/kubectl-create, a holder of "+ns+"/made-by-hand") ||
		!strings.Contains(r.Stderr, "a shared identity cannot prove which client acted") {
		t.Errorf("writer %s; stderr does not name rv-admin/kubectl-create and why:\n%s", sw.Writer, r.Stderr)
	}
	table := cluster.RV(t, args...)
	if table.Code != 0 || !strings.Contains(table.Stdout, "Not counted as acting while not leader") {
		t.Errorf("table: %s", table)
	}
	t.Logf("%s", table.Stdout)
}

// TestLeasesSinceUntil: --since and --until keep the writes received in
// [since, until), by the audit log's own requestReceivedTimestamp. A
// Lease is written three times by three writers (kubectl create, label,
// annotate), a second apart; the window from the second write's receipt
// to the third's holds only the second: its writer holds the Lease from
// the time the log gives, and there is no takeover. From the second
// write on, there is one takeover, at the third write's time.
func TestLeasesSinceUntil(t *testing.T) {
	t.Parallel() // see TestMain: waits, not the CPU
	ns := cluster.Namespace(t)
	cluster.KubectlStdin(t, sharedLease, "create", "-n", ns, "-f", "-")
	time.Sleep(time.Second)
	cluster.MustKubectl(t, "label", "lease", "made-by-hand", "-n", ns, "step=2")
	time.Sleep(time.Second)
	cluster.MustKubectl(t, "annotate", "lease", "made-by-hand", "-n", ns, "step=3")

	var writes []auditWrite
	for _, e := range auditWrites(t, ns) {
		if e.ObjectRef.Resource == "leases" {
			writes = append(writes, e)
		}
	}
	if len(writes) != 3 {
		t.Fatalf("the log has %d writes of the Lease, want 3: %+v", len(writes), writes)
	}
	rfc := func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
	type takeover struct {
		From, To string
		Time     time.Time
	}
	var rep struct {
		Locks []struct {
			Holder    string     `json:"holder"`
			HeldSince *time.Time `json:"heldSince"`
		} `json:"locks"`
		Takeovers []takeover `json:"takeovers"`
	}
	run := func(scope ...string) {
		t.Helper()
		r := cluster.RV(t, append([]string{"leases", "-n", ns, "--audit-log", cluster.AuditLog, "-o", "json"}, scope...)...)
		rep.Locks, rep.Takeovers = nil, nil
		if err := json.Unmarshal([]byte(r.Stdout), &rep); r.Code != 0 || err != nil {
			t.Fatalf("leases %v: %v: %s", scope, err, r)
		}
		if len(rep.Locks) != 1 || rep.Locks[0].HeldSince == nil {
			t.Fatalf("leases %v: locks %+v, want the one Lease held", scope, rep.Locks)
		}
	}
	run()
	if len(rep.Takeovers) != 2 {
		t.Fatalf("unscoped: takeovers %+v, want 2 (label, then annotate)", rep.Takeovers)
	}
	run("--since", rfc(writes[1].RequestReceivedTimestamp), "--until", rfc(writes[2].RequestReceivedTimestamp))
	if l := rep.Locks[0]; len(rep.Takeovers) != 0 || l.Holder != "rv-admin/kubectl-label" || !l.HeldSince.Equal(writes[1].StageTimestamp) {
		t.Errorf("[second write, third): locks %+v (held since %s), takeovers %+v; the log: kubectl-label's write at %s alone",
			rep.Locks, l.HeldSince, rep.Takeovers, writes[1].StageTimestamp)
	}
	run("--since", rfc(writes[1].RequestReceivedTimestamp))
	if len(rep.Takeovers) != 1 || rep.Takeovers[0].From != "rv-admin/kubectl-label" || rep.Takeovers[0].To != "rv-admin/kubectl-annotate" ||
		!rep.Takeovers[0].Time.Equal(writes[2].StageTimestamp) {
		t.Errorf("[second write, end): takeovers %+v, want kubectl-label to kubectl-annotate at %s", rep.Takeovers, writes[2].StageTimestamp)
	}
}
