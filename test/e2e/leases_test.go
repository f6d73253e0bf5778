//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// The candidates' timing (test/e2e/testdata/leasecandidate): a 6 s lease,
// renewed every second.
const (
	candLeaseDuration = 6 * time.Second
	candRetryPeriod   = time.Second
)

// candLine is one line of a candidate's own log.
type candLine struct {
	Event  string    `json:"event"`
	Time   time.Time `json:"time"`
	ID     string    `json:"id"`
	Leader string    `json:"leader"`
	Sent   time.Time `json:"sent"`
	// N is a ConfigMap write's count: the write stored data.writer ID-N.
	N int `json:"n"`
}

// candidate is a running leasecandidate process.
type candidate struct {
	id  string
	cmd *exec.Cmd
	// mu guards lines.
	mu    sync.Mutex
	lines []candLine
	done  chan struct{}
}

// buildCandidate builds the candidate program once for the test.
func buildCandidate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leasecandidate")
	build := framework.GoBuild(cluster.Root, bin, "./test/e2e/testdata/leasecandidate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the lease candidate: %v\n%s", err, out)
	}
	return bin
}

func startCandidate(t *testing.T, bin, ns, lease, id, configMap string) *candidate {
	t.Helper()
	args := []string{"-kubeconfig", cluster.Kubeconfig, "-namespace", ns, "-lease", lease, "-id", id,
		"-lease-duration", candLeaseDuration.String(), "-renew-deadline", "4s", "-retry-period", candRetryPeriod.String()}
	if configMap != "" {
		args = append(args, "-configmap", configMap)
	}
	c := &candidate{id: id, cmd: cluster.Command(context.Background(), bin, args...), done: make(chan struct{})}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting candidate %s: %v", id, err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l candLine
			if json.Unmarshal(sc.Bytes(), &l) == nil {
				c.mu.Lock()
				c.lines = append(c.lines, l)
				c.mu.Unlock()
			}
		}
		_ = c.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		_ = c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// logged returns the candidate's log lines of one event.
func (c *candidate) logged(event string) []candLine {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []candLine
	for _, l := range c.lines {
		if l.Event == event {
			out = append(out, l)
		}
	}
	return out
}

func (c *candidate) signal(t *testing.T, sig syscall.Signal) time.Time {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to candidate %s: %v", sig, c.id, err)
	}
	return time.Now().UTC()
}

// waitLeading waits until one of cs logs that it started leading and
// returns it with the log's time.
func waitLeading(t *testing.T, timeout time.Duration, cs ...*candidate) (*candidate, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, c := range cs {
			if l := c.logged("started-leading"); len(l) > 0 {
				return c, l[0].Time
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no candidate started leading within %s", timeout)
	return nil, time.Time{}
}

// leasesJSON is the part of a LeasesReport the tests read.
type leasesJSON struct {
	Kind  string `json:"kind"`
	Locks []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Holder    string `json:"holder"`
		Renewals  *struct {
			Count     int    `json:"count"`
			Median    string `json:"intervalMedian"`
			P99       string `json:"intervalP99"`
			Late      int    `json:"late"`
			Expiries  int    `json:"expiries"`
			Takeovers int    `json:"takeovers"`
		} `json:"renewals"`
	} `json:"locks"`
	Takeovers []struct {
		Lock struct {
			Name string `json:"name"`
		} `json:"lock"`
		Time        time.Time `json:"time"`
		From        string    `json:"from"`
		To          string    `json:"to"`
		AfterExpiry bool      `json:"afterExpiry"`
	} `json:"takeovers"`
	Acting []struct {
		Lock struct {
			Name string `json:"name"`
		} `json:"lock"`
		Writer  string    `json:"writer"`
		LostAt  time.Time `json:"lostAt"`
		First   time.Time `json:"first"`
		Last    time.Time `json:"last"`
		Writes  int       `json:"writes"`
		Objects []string  `json:"objects"`
	} `json:"acting"`
}

func parseLeases(t *testing.T, r framework.Result) leasesJSON {
	t.Helper()
	var rep leasesJSON
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || rep.Kind != "LeasesReport" {
		t.Fatalf("not a LeasesReport (%v): %s", err, r)
	}
	return rep
}

func near(a, b time.Time, within time.Duration) bool {
	d := a.Sub(b)
	return d <= within && d >= -within
}

// TestLeasesTakeoverAndActingWhileNotLeader runs three client-go
// leader-election candidates for one Lease. The leader, a, also writes a
// ConfigMap from the moment it leads and never stops (the bug under test).
// a is frozen (SIGSTOP) until another takes over, then thawed: it keeps
// writing for two seconds before it exits. The new leader is frozen and
// killed (SIGSTOP, SIGKILL) and the last candidate takes over.
// `leases --for` (watching throughout) and `leases --audit-log` must both
// report the two takeovers with the holders and, within the retry period,
// the times the new leaders logged; the audit log's history must report
// a's ConfigMap writes that the server stored after it was thawed,
// exactly those its own log shows, as acting while not leader. Which
// writes those are is read from the ConfigMap while a is frozen, not
// from a's send times: a write a stamped just before it was frozen is
// sent only when it is thawed.
func TestLeasesTakeoverAndActingWhileNotLeader(t *testing.T) {
	t.Parallel() // see TestMain: waits on its planes, not the CPU
	bin := buildCandidate(t)
	ns := cluster.Namespace(t)
	const lock, cm = "e2e-lock", "e2e-state"
	live := cluster.StartRV(t, "leases", "-n", ns, "--for", "5m", "-o", "json")
	time.Sleep(2 * time.Second) // the watch lists before the Lease exists

	a := startCandidate(t, bin, ns, lock, "a", cm)
	if c, _ := waitLeading(t, 30*time.Second, a); c != a {
		t.Fatalf("a did not lead")
	}
	b := startCandidate(t, bin, ns, lock, "b", "")
	c := startCandidate(t, bin, ns, lock, "c", "")
	time.Sleep(3 * time.Second)

	a.signal(t, syscall.SIGSTOP)
	first, t1 := waitLeading(t, 30*time.Second, b, c)
	// What a wrote before it was frozen is stored by now: a write whose
	// bytes had left a when it stopped was stored milliseconds later. A
	// write a had stamped as sent but not sent yet reaches the server only
	// once a is thawed, after another took over.
	storedBefore := lastWriteStored(t, ns, cm, "a")
	thawed := a.signal(t, syscall.SIGCONT)
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("a did not exit after it was thawed")
	}
	last := c
	if first == c {
		last = b
	}
	time.Sleep(2 * time.Second)
	first.signal(t, syscall.SIGSTOP)
	time.Sleep(time.Second)
	first.signal(t, syscall.SIGKILL)
	_, t2 := waitLeading(t, 30*time.Second, last)
	time.Sleep(3 * time.Second)
	liveRep := parseLeases(t, live.Stop(t))

	// What the candidates' own logs say: a's writes stored after it lost.
	var actingWrites []candLine
	for _, w := range a.logged("configmap-write") {
		if w.N > storedBefore {
			actingWrites = append(actingWrites, w)
		}
	}
	if len(actingWrites) == 0 {
		t.Fatalf("a logged no ConfigMap write after it was thawed: the scene did not happen")
	}
	t.Logf("a: frozen, then %s took over at %s; a thawed at %s and the ConfigMap stored %d of its writes after that; %s took over at %s",
		first.id, t1.Format(time.StampMilli), thawed.Format(time.StampMilli), len(actingWrites), last.id, t2.Format(time.StampMilli))

	type takeover struct{ from, to string }
	want := []takeover{{"a", first.id}, {first.id, last.id}}
	wantTimes := []time.Time{t1, t2}
	t.Run("watch", func(t *testing.T) {
		var got []takeover
		for _, tk := range liveRep.Takeovers {
			if tk.Lock.Name != lock {
				continue
			}
			got = append(got, takeover{tk.From, tk.To})
			if n := len(got); n <= len(wantTimes) && !near(tk.Time, wantTimes[n-1], candRetryPeriod) {
				t.Errorf("takeover %d at %s, the new leader logged %s", n, tk.Time, wantTimes[n-1])
			}
			if !tk.AfterExpiry {
				t.Errorf("takeover %d not after expiry: its previous holder was frozen", len(got))
			}
		}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Fatalf("takeovers %v, want %v", got, want)
		}
	})
	auditRep := parseLeases(t, cluster.RV(t, "leases", "-n", ns, "--audit-log", cluster.AuditLog, "--lease-duration", candLeaseDuration.String(), "-o", "json"))
	if out := os.Getenv("RV_LEASES_AUDIT_OUT"); out != "" {
		saveNamespaceEvents(t, cluster.AuditLog, ns, out)
	}
	t.Run("audit-log", func(t *testing.T) {
		var got []takeover
		for _, tk := range auditRep.Takeovers {
			if tk.Lock.Name != lock {
				continue
			}
			got = append(got, takeover{fieldManager(tk.From), fieldManager(tk.To)})
			if n := len(got); n <= len(wantTimes) && !near(tk.Time, wantTimes[n-1], candRetryPeriod) {
				t.Errorf("takeover %d at %s, the new leader logged %s", n, tk.Time, wantTimes[n-1])
			}
		}
		wantFM := []takeover{{"leasecand-" + want[0].from, "leasecand-" + want[0].to}, {"leasecand-" + want[1].from, "leasecand-" + want[1].to}}
		if len(got) != 2 || got[0] != wantFM[0] || got[1] != wantFM[1] {
			t.Fatalf("takeovers %v, want %v", got, wantFM)
		}
		if len(auditRep.Acting) != 1 {
			t.Fatalf("acting while not leader: %+v, want one window of a", auditRep.Acting)
		}
		act := auditRep.Acting[0]
		if fieldManager(act.Writer) != "leasecand-a" || act.Lock.Name != lock || act.Writes != len(actingWrites) ||
			len(act.Objects) != 1 || act.Objects[0] != "configmaps "+ns+"/"+cm {
			t.Errorf("acting %+v, want leasecand-a's %d writes to configmaps %s/%s", act, len(actingWrites), ns, cm)
		}
		if !near(act.First, actingWrites[0].Time, candRetryPeriod) || act.First.Before(act.LostAt) || act.LostAt.After(t1) {
			t.Errorf("acting from %s (lost at %s); a logged its first write after thawing at %s, %s took over at %s", act.First, act.LostAt, actingWrites[0].Time, first.id, t1)
		}
		// --report draws a lane for each holder the candidates' logs name.
		svg := filepath.Join(t.TempDir(), "leases.svg")
		if r := cluster.RV(t, "leases", "-n", ns, "--audit-log", cluster.AuditLog, "--lease-duration", candLeaseDuration.String(), "--report", svg); r.Code != 0 {
			t.Fatalf("--report: %s", r)
		}
		pic, err := os.ReadFile(svg)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"a", first.id, last.id} {
			if !strings.Contains(string(pic), "/leasecand-"+id+"</title></text>") {
				t.Errorf("--report has no lane for leasecand-%s", id)
			}
		}
		// The table and timeline views of the same history, for the log;
		// --fail-on split-brain judges it.
		for _, view := range []string{"table", "timeline"} {
			r := cluster.RV(t, "leases", "-n", ns, "--audit-log", cluster.AuditLog, "--lease-duration", candLeaseDuration.String(), "--view", view, "--fail-on", "split-brain")
			if r.Code != 1 {
				t.Errorf("--fail-on split-brain: %s", r)
			}
			t.Logf("--view %s:\n%s", view, r.Stdout)
		}
		// -o github holds the acting window, as a's log counts its writes,
		// as an error at the Lease.
		r := cluster.RV(t, "leases", "-n", ns, "--audit-log", cluster.AuditLog, "--lease-duration", candLeaseDuration.String(), "--fail-on", "split-brain", "-o", "github")
		at := fmt.Sprintf("::error title=acting while not leader%%3A Lease/%s/%s::", ns, lock)
		if wrote := fmt.Sprintf("leasecand-a wrote %d times after it lost the lock", len(actingWrites)); r.Code != 1 || !strings.Contains(r.Stdout, at) || !strings.Contains(r.Stdout, wrote) {
			t.Errorf("-o github: want exit 1, %q and %q: %s", at, wrote, r)
		}
	})
}

// lastWriteStored reads the ConfigMap candidate id writes and returns the
// count N of the write it holds (data.writer is id-N).
func lastWriteStored(t *testing.T, ns, name, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cluster.Clientset(t, "e2e-leases").CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading the ConfigMap candidate %s writes: %v", id, err)
	}
	var n int
	if _, err := fmt.Sscanf(c.Data["writer"], id+"-%d", &n); err != nil {
		t.Fatalf("ConfigMap %s/%s: data.writer %q is not %s-N", ns, name, c.Data["writer"], id)
	}
	return n
}

// saveNamespaceEvents copies the audit log's lines about namespace ns to
// out: how examples/leases-audit.log.gz, which docs/leases.md reads, was
// made (with the namespace then renamed demo).
func saveNamespaceEvents(t *testing.T, log, ns, out string) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"namespace":"`+ns+`"`) {
			keep = append(keep, l)
		}
	}
	if err := os.WriteFile(out, []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fieldManager is the field manager of a writer named user/manager[@pod].
func fieldManager(writer string) string {
	_, fm, _ := strings.Cut(writer, "/")
	fm, _, _ = strings.Cut(fm, "@")
	return fm
}

// TestLeasesAPIServerIdentityRenewals watches kube-system's Leases: the
// framework starts kube-controller-manager with --leader-elect=false, so
// the Leases there are the API server's identity Leases (apiserver-...,
// renewed every 10 s, 3600 s long). Their renewals must be healthy (none
// late, no expiry, no takeover), and counted as the test's own watch of
// the same Leases sees renewTime move.
func TestLeasesAPIServerIdentityRenewals(t *testing.T) {
	t.Parallel() // see TestMain: waits on its planes, not the CPU
	cs := cluster.Clientset(t, "e2e-leases")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cs.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := cs.CoordinationV1().Leases("kube-system").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	renews := map[string]map[string]bool{}
	var mu sync.Mutex
	go func() {
		for ev := range w.ResultChan() {
			if l, ok := ev.Object.(*coordinationv1.Lease); ok && l.Spec.RenewTime != nil && strings.HasPrefix(l.Name, "apiserver-") {
				mu.Lock()
				if renews[l.Name] == nil {
					renews[l.Name] = map[string]bool{}
				}
				renews[l.Name][l.Spec.RenewTime.UTC().Format(time.RFC3339Nano)] = true
				mu.Unlock()
			}
		}
	}()
	table := cluster.StartRV(t, "leases", "-n", "kube-system", "--for", "25s")
	rep := parseLeases(t, cluster.RV(t, "leases", "-n", "kube-system", "--for", "25s", "-o", "json"))
	t.Logf("leases -n kube-system --for 25s:\n%s", table.Wait(t, time.Minute).Stdout)
	t.Logf("leases -n kube-system:\n%s", cluster.RV(t, "leases", "-n", "kube-system").Stdout)
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	checked := 0
	for _, l := range rep.Locks {
		if !strings.HasPrefix(l.Name, "apiserver-") {
			continue
		}
		checked++
		seen := len(renews[l.Name])
		r := l.Renewals
		if r == nil || r.Late != 0 || r.Expiries != 0 || r.Takeovers != 0 || r.Count < 1 || r.Count > seen || r.Count < seen-1 {
			t.Errorf("lease %s: renewals %+v; the test's own watch saw %d renewTimes", l.Name, r, seen)
		}
	}
	if checked == 0 {
		t.Fatalf("no apiserver- Lease in kube-system: %+v", rep.Locks)
	}
}

// TestLeasesKubeControllerManager: kube-controller-manager started with
// --leader-elect=true holds its Lease and renews it healthily: leases
// --for reports renewals, none late, no expiry and no takeover, and the
// holder the Lease itself names.
func TestLeasesKubeControllerManager(t *testing.T) {
	t.Parallel() // see TestMain: waits on its planes, not the CPU
	p, err := cluster.StartPlane(framework.PlaneOptions{Controllers: true, LeaderElect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.StopPlane(); err != nil {
			t.Error(err)
		}
	}()
	cs := p.Clientset(t, "e2e-leases")
	var holder string
	for deadline := time.Now().Add(time.Minute); holder == "" && time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if l, err := cs.CoordinationV1().Leases("kube-system").Get(context.Background(), "kube-controller-manager", metav1.GetOptions{}); err == nil && l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
	}
	if holder == "" {
		t.Fatal("kube-controller-manager took no Lease within a minute")
	}
	rep := parseLeases(t, p.RV(t, "leases", "-n", "kube-system", "kube-controller-manager", "--for", "12s", "-o", "json"))
	if len(rep.Locks) != 1 {
		t.Fatalf("locks %+v, want the one Lease", rep.Locks)
	}
	l := rep.Locks[0]
	// kube-controller-manager renews every 2 s (--leader-elect-retry-period).
	if r := l.Renewals; l.Holder != holder || r == nil || r.Count < 3 || r.Late != 0 || r.Expiries != 0 || r.Takeovers != 0 || len(rep.Takeovers) != 0 {
		t.Errorf("kube-controller-manager's Lease (held by %s): %+v, renewals %+v", holder, l, l.Renewals)
	}
}

// TestLeasesCompletion completes Lease names from the cluster (the names
// the server lists in kube-system) and the values of --view and --fail-on.
func TestLeasesCompletion(t *testing.T) {
	list, err := cluster.Clientset(t, "e2e-leases").CoordinationV1().Leases("kube-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range list.Items {
		want = append(want, l.Name)
	}
	if len(want) == 0 {
		t.Fatalf("no Lease in kube-system to complete")
	}
	got, _ := complete(t, "leases", "-n", "kube-system", "")
	mustContain(t, "kubectl rv leases -n kube-system <TAB>", got, want...)
	got, _ = complete(t, "leases", "--view", "")
	mustContain(t, "kubectl rv leases --view <TAB>", got, "table", "timeline")
	got, _ = complete(t, "leases", "--fail-on", "")
	mustContain(t, "kubectl rv leases --fail-on <TAB>", got, "takeover", "late-renew", "split-brain", "any")
}

// TestLeasesNowAnnotationLocks: a look reads the legacy annotation locks
// (control-plane.alpha.kubernetes.io/leader) on a ConfigMap and an
// Endpoints as the server returns them, beside the Leases; the plane
// serves no LeaseCandidate API, which is no error.
func TestLeasesNowAnnotationLocks(t *testing.T) {
	ns := cluster.Namespace(t)
	cs := cluster.Clientset(t, "e2e-leases")
	ctx := context.Background()
	record := func(holder string, transitions int) string {
		now := time.Now().UTC().Format(time.RFC3339)
		return fmt.Sprintf(`{"holderIdentity":%q,"leaseDurationSeconds":30,"acquireTime":%q,"renewTime":%q,"leaderTransitions":%d}`, holder, now, now, transitions)
	}
	meta := func(name, holder string, transitions int) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{"control-plane.alpha.kubernetes.io/leader": record(holder, transitions)}}
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("old-cm-lock", "pod-x", 3)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Endpoints(ns).Create(ctx, &corev1.Endpoints{ObjectMeta: meta("old-ep-lock", "pod-y", 1)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What the server holds, as the expected values.
	want := map[string]string{}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "old-cm-lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := cs.CoreV1().Endpoints(ns).Get(ctx, "old-ep-lock", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for kind, a := range map[string]map[string]string{"ConfigMap": cm.Annotations, "Endpoints": ep.Annotations} {
		var rec struct {
			HolderIdentity string `json:"holderIdentity"`
		}
		if err := json.Unmarshal([]byte(a["control-plane.alpha.kubernetes.io/leader"]), &rec); err != nil {
			t.Fatal(err)
		}
		want[kind] = rec.HolderIdentity
	}
	r := cluster.RV(t, "leases", "-n", ns, "-o", "json")
	if r.Code != 0 {
		t.Fatalf("%s", r)
	}
	var rep struct {
		CandidateAPI string `json:"candidateAPI"`
		Locks        []struct {
			Kind   string `json:"kind"`
			Name   string `json:"name"`
			Holder string `json:"holder"`
		} `json:"locks"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r)
	}
	got := map[string]string{}
	for _, l := range rep.Locks {
		got[l.Kind] = l.Holder
		if l.Name == "plain" {
			t.Errorf("a ConfigMap without the annotation is no lock: %+v", l)
		}
	}
	if len(rep.Locks) != 2 || got["ConfigMap"] != want["ConfigMap"] || got["Endpoints"] != want["Endpoints"] {
		t.Errorf("locks %+v, want the holders %v", rep.Locks, want)
	}
	if rep.CandidateAPI != "" {
		t.Errorf("candidateAPI %q on a plane without LeaseCandidates", rep.CandidateAPI)
	}
	t.Logf("stderr: %s", r.Stderr)
}

// TestTypeWarningOnlyWhereATypeCanBeNamed: the API server warns on every
// list of v1 Endpoints. leases lists them for their annotation locks and
// takes no types, so it prints neither the server's warning nor the
// advice to name a type; churn over every type gives that advice once,
// and churn of a named type, which is not Endpoints, none.
func TestTypeWarningOnlyWhereATypeCanBeNamed(t *testing.T) {
	ns := cluster.Namespace(t)
	const summary = "for types you did not name"
	if r := cluster.RV(t, "leases", "-n", ns); r.Code != 0 || strings.Contains(r.Stderr, summary) || strings.Contains(r.Stderr, "Endpoints is deprecated") {
		t.Errorf("leases: want exit 0 and no warning about Endpoints, got %s", r)
	}
	all := cluster.RV(t, "churn", "-n", ns, "--for", "3s", "-o", "json")
	if n := strings.Count(all.Stderr, summary); all.Code != 0 || n != 1 {
		t.Errorf("churn over every type: want exit 0 and the summary once, got it %d times: %s", n, all)
	}
	named := cluster.RV(t, "churn", "configmaps", "-n", ns, "--for", "3s", "-o", "json")
	if named.Code != 0 || strings.Contains(named.Stderr, summary) {
		t.Errorf("churn configmaps: want exit 0 and no summary, got %s", named)
	}
}
