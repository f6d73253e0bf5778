//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/retry"
)

// conflictsReport mirrors the documented schema of kubectl rv conflicts -o
// json (docs/conflicts.md).
type conflictsReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Summary    struct {
		conflictsTally
		Writers, Objects, DryRuns, Unshown int
	} `json:"summary"`
	Input struct {
		Events, Duplicates int
	} `json:"input"`
	Writers []writerRow `json:"writers"`
	Causes  []struct {
		Cause  string
		Count  int
		Fix    string
		Fields []fieldOwner `json:"fields"`
	} `json:"causes"`
	Timeline []struct {
		Writer, Verb, Cause string
		Code                int
		GiveUp              bool
		FieldOwners         []fieldOwner `json:"fieldOwners"`
	} `json:"timeline"`
}

// writerRow is one writer of the report.
type writerRow struct {
	Writer struct {
		User, FieldManager, Pod string
	} `json:"writer"`
	UserAgent string `json:"userAgent"`
	Shared    *struct {
		UserAgents  []string `json:"userAgents"`
		Overlapping int      `json:"overlapping"`
	} `json:"shared"`
	conflictsTally
	LostTo []struct {
		Name  string
		Count int
	} `json:"lostTo"`
	Causes []struct {
		Cause string
		Count int
	} `json:"causes"`
	FieldsLost      []fieldOwner `json:"fieldsLost"`
	ConflictSeconds float64      `json:"conflictSeconds"`
}

// fieldOwner is a manager an apply conflict named, with its fields.
type fieldOwner struct {
	Manager string
	Fields  []string
}

type conflictsTally struct {
	Attempts, Conflicts, Successes, RetryChains, GiveUps int
}

// writerLog is what a writer counted of its own writes: the truth the
// report must match.
type writerLog struct {
	conflictsTally
	// causes counts the writer's 409s by the cause the test knows.
	causes map[string]int
}

// auditSegment returns a function that copies the audit log written since
// now to a file of its own (the one control plane is shared by the tests).
func auditSegment(t *testing.T) func() string {
	t.Helper()
	if cluster.AuditLog == "" {
		t.Fatal("the control plane has no audit log (RV_AUDIT_LOG)")
	}
	fi, err := os.Stat(cluster.AuditLog)
	if err != nil {
		t.Fatal(err)
	}
	start := fi.Size()
	return func() string {
		t.Helper()
		// The API server writes an event after the response: let the last
		// ones land.
		time.Sleep(time.Second)
		b, err := os.ReadFile(cluster.AuditLog)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) < start {
			t.Fatalf("the audit log was rotated during the test")
		}
		p := filepath.Join(t.TempDir(), "audit.log")
		if err := os.WriteFile(p, b[start:], 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func runConflicts(t *testing.T, args ...string) conflictsReport {
	t.Helper()
	r := cluster.RV(t, append([]string{"conflicts", "-o", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("kubectl rv conflicts %s: %s", strings.Join(args, " "), r)
	}
	var rep conflictsReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("conflicts -o json: %v\n%s", err, r.Stdout)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "ConflictsReport" {
		t.Fatalf("conflicts -o json: apiVersion %q kind %q", rep.APIVersion, rep.Kind)
	}
	return rep
}

// checkWriter compares the report's figures for the writer with field
// manager (or pod) name to the writer's own log.
func checkWriter(t *testing.T, rep conflictsReport, name string, want writerLog, lostToOthers bool) {
	t.Helper()
	for _, w := range rep.Writers {
		if w.Writer.FieldManager != name && w.Writer.Pod != name {
			continue
		}
		if w.conflictsTally != want.conflictsTally {
			t.Errorf("writer %s: report %+v, its own log %+v", name, w.conflictsTally, want.conflictsTally)
		}
		got := map[string]int{}
		for _, c := range w.Causes {
			got[c.Cause] = c.Count
		}
		if fmt.Sprint(got) != fmt.Sprint(want.causes) {
			t.Errorf("writer %s: causes %v, want %v", name, got, want.causes)
		}
		for _, l := range w.LostTo {
			if lostToOthers && strings.Contains(l.Name, name) {
				t.Errorf("writer %s lost to itself: %+v", name, w.LostTo)
			}
		}
		return
	}
	if want.Attempts > 0 {
		t.Errorf("writer %s is not in the report: %+v", name, rep.Writers)
	}
}

// TestConflictsRetryOnConflict: four writers update one ConfigMap at once,
// round after round, with client-go's RetryOnConflict; the report's
// attempts, 409s, retry chains and give-ups per writer match the writers'
// own counts, and every 409 is contention lost to another writer.
func TestConflictsRetryOnConflict(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	setup := cluster.Clientset(t, "e2e-setup")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot", Namespace: ns}, Data: map[string]string{}}
	if _, err := setup.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	segment := auditSegment(t)
	// Rounds 400 ms apart: longer than --retry-window.
	logs := raceRMW(t, ns, "rv-e2e-rmw", "rmw", 4, 8, 400*time.Millisecond)
	path := segment()
	rep := runConflicts(t, "--audit-log", path, "--retry-window", "250ms")
	total := 0
	for i, l := range logs {
		total += l.Conflicts
		t.Logf("writer rmw-%d: %+v", i, l.conflictsTally)
		checkWriter(t, rep, fmt.Sprintf("rmw-%d", i), l, true)
	}
	if total == 0 {
		t.Errorf("four writers at once made no 409: the test made no contention")
	}
	// The same log piped in (a stream, copied as it is read): the same
	// report.
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := cluster.Run(t, strings.NewReader(string(log)), "kubectl", "rv", "conflicts", "-o", "json", "--audit-log", "-", "--retry-window", "250ms")
	var piped conflictsReport
	if err := json.Unmarshal([]byte(r.Stdout), &piped); r.Code != 0 || err != nil {
		t.Fatalf("the log on stdin (%v): %s", err, r)
	}
	if !reflect.DeepEqual(piped, rep) {
		t.Errorf("the log on stdin gives another report:\n%+v\nthe file's:\n%+v", piped, rep)
	}
}

// staleLoop makes ConfigMap stale in ns and has rv-admin, field manager
// stale-loop (user agent rv-e2e-stale), update it six times, 300 ms apart, from the
// object it read once: every write after its first is a 409 it does not
// retry. It returns the audit log of the scene and the writer's own log.
func staleLoop(t *testing.T, ns string) (string, writerLog) {
	t.Helper()
	ctx := context.Background()
	setup := cluster.Clientset(t, "e2e-setup")
	if _, err := setup.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	segment := auditSegment(t)
	cs := cluster.Clientset(t, "rv-e2e-stale")
	old, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "stale", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := writerLog{causes: map[string]int{}}
	for i := 0; i < 6; i++ {
		c := old.DeepCopy()
		c.Data = map[string]string{"i": fmt.Sprint(i)}
		l.Attempts++
		_, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, c, metav1.UpdateOptions{FieldManager: "stale-loop"})
		switch {
		case apierrors.IsConflict(err):
			l.Conflicts++
			l.GiveUps++ // it never retries
			l.causes["stale-own-cache"]++
		case err == nil:
			l.Successes++
		default:
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	return segment(), l
}

// raceRMW runs rounds of writers read-modify-write updates of ConfigMap
// "hot" in ns, all writers released at once each round, pause between
// rounds. Writer i is user userPrefix-i with field manager managerPrefix-i;
// it returns each writer's own log of what it saw.
func raceRMW(t *testing.T, ns, userPrefix, managerPrefix string, writers, rounds int, pause time.Duration) []writerLog {
	t.Helper()
	ctx := context.Background()
	logs := make([]writerLog, writers)
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := 0; i < writers; i++ {
			cs := cluster.Clientset(t, fmt.Sprintf("%s-%d", userPrefix, i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				name := fmt.Sprintf("%s-%d", managerPrefix, i)
				rmwRound(ctx, cs, ns, name, name, round, &logs[i])
			}()
		}
		close(gate)
		wg.Wait()
		time.Sleep(pause)
	}
	return logs
}

// rmwRound is one RetryOnConflict read-modify-write of ConfigMap hot's key
// name with field manager fm ("" sends none), counted.
func rmwRound(ctx context.Context, cs kubernetes.Interface, ns, name, fm string, round int, l *writerLog) {
	rmwObject(ctx, cs, ns, "hot", name, fm, round, l)
}

// rmwObject is rmwRound on ConfigMap obj.
func rmwObject(ctx context.Context, cs kubernetes.Interface, ns, obj, name, fm string, round int, l *writerLog) {
	attempts := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, obj, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Data == nil {
			cur.Data = map[string]string{}
		}
		cur.Data[name] = fmt.Sprint(round)
		attempts++
		l.Attempts++
		_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cur, metav1.UpdateOptions{FieldManager: fm})
		switch {
		case apierrors.IsConflict(err):
			l.Conflicts++
			if l.causes == nil {
				l.causes = map[string]int{}
			}
			l.causes["contention"]++
		case err == nil:
			l.Successes++
		}
		return err
	})
	if attempts > 1 {
		l.RetryChains++
	}
	if apierrors.IsConflict(err) {
		l.GiveUps++
	}
}

// TestConflictsStaleLoop: a writer that updates from the object it read
// once, never re-reading, loses every write after its first to its own
// write: stale own cache, each 409 a give-up.
func TestConflictsStaleLoop(t *testing.T) {
	ns := cluster.Namespace(t)
	path, l := staleLoop(t, ns)
	rep := runConflicts(t, "--audit-log", path, "--retry-window", "250ms")
	checkWriter(t, rep, "stale-loop", l, false)
	tl := runConflicts(t, "--audit-log", path, "--retry-window", "250ms", "--object", "configmaps/stale", "-n", ns)
	if len(tl.Timeline) != l.Attempts {
		t.Errorf("timeline has %d attempts, the writer made %d: %+v", len(tl.Timeline), l.Attempts, tl.Timeline)
	}
	svg := filepath.Join(t.TempDir(), "stale.svg")
	if r := cluster.RV(t, "conflicts", "--audit-log", path, "--retry-window", "250ms", "--object", "configmaps/stale", "-n", ns, "--report", svg); r.Code != 0 {
		t.Fatalf("--report: %s", r)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.Contains(b, []byte("stale-loop")) || bytes.Count(b, []byte(`fill="#111111"><title>`)) != l.GiveUps {
		t.Errorf("the picture does not show the writer's %d give-ups (%v):\n%s", l.GiveUps, err, b)
	}
}

// TestConflictsApply: a second server-side apply manager that does not
// force loses every apply to the field's owner.
func TestConflictsApply(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	segment := auditSegment(t)
	cs := cluster.Clientset(t, "rv-e2e-apply")
	apply := func(manager, value string) error {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","namespace":%q},"data":{"a":%q}}`, ns, value)
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, "applied", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager})
		return err
	}
	if err := apply("apply-owner", "1"); err != nil {
		t.Fatal(err)
	}
	rival := writerLog{causes: map[string]int{}}
	for i := 0; i < 3; i++ {
		rival.Attempts++
		err := apply("apply-rival", fmt.Sprint(10+i))
		if !apierrors.IsConflict(err) {
			t.Fatalf("apply-rival: got %v, want a conflict", err)
		}
		rival.Conflicts++
		rival.GiveUps++
		rival.causes["ssa-field-conflict"]++
		time.Sleep(300 * time.Millisecond)
	}
	rep := runConflicts(t, "--audit-log", segment(), "--retry-window", "250ms")
	checkWriter(t, rep, "apply-rival", rival, false)
	checkWriter(t, rep, "apply-owner", writerLog{conflictsTally: conflictsTally{Attempts: 1, Successes: 1}, causes: map[string]int{}}, false)
}

// countingTransport is a writer's own log of its writes and 409s.
type countingTransport struct {
	rt http.RoundTripper
	mu sync.Mutex
	l  writerLog
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || !strings.Contains(req.URL.Path, "/leases/") && req.Method != http.MethodPost {
		return c.rt.RoundTrip(req)
	}
	// A write is sent to its end even when its caller stops waiting (a
	// candidate cancelled while it renews): the server acts on it and the
	// audit log records its answer, so the writer's own log must hold that
	// answer too, not the caller's "context canceled".
	resp, err := c.rt.RoundTrip(req.WithContext(context.WithoutCancel(req.Context())))
	c.mu.Lock()
	defer c.mu.Unlock()
	c.l.Attempts++
	if err == nil && resp.StatusCode == http.StatusConflict {
		c.l.Conflicts++
		c.l.causes["lease-contention"]++
	} else if err == nil && resp.StatusCode/100 == 2 {
		c.l.Successes++
	}
	return resp, err
}

// writerConfig is an admin client config that writes as a service
// account's pod (impersonated), so that writers with one user are told
// apart by pod, as in a real cluster; it counts its own writes.
func writerConfig(t *testing.T, pod string) (*rest.Config, *countingTransport) {
	cfg := cluster.RESTConfig(t, "rv-admin", "rv-e2e-"+pod)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:rv-e2e:candidate", Groups: []string{"system:masters"},
		Extra: map[string][]string{"authentication.kubernetes.io/pod-name": {pod}}}
	ct := &countingTransport{l: writerLog{causes: map[string]int{}}}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { ct.rt = rt; return ct }
	return cfg, ct
}

// writeLog writes b to a new file in a temporary folder.
func writeLog(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConflictsBadInput: a bad log gets exit 2, file:line and no report; a
// last line cut short only a warning, unless --strict.
func TestConflictsBadInput(t *testing.T) {
	ns := cluster.Namespace(t)
	segment := auditSegment(t)
	cluster.MustKubectl(t, "-n", ns, "create", "configmap", "x")
	b, err := os.ReadFile(segment())
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(b, []byte("\n"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(b)
	_ = zw.Close()
	v1beta1 := bytes.Replace(b, []byte(`"audit.k8s.io/v1"`), []byte(`"audit.k8s.io/v1beta1"`), 1)
	for _, tc := range []struct {
		name, file, want string
		content          []byte
		strict           bool
		code             int
	}{
		{"non-audit line", "a.log", fmt.Sprintf("a.log:%d: not an audit event", lines+1), append(append([]byte{}, b...), `{"kind":"Pod","apiVersion":"v1"}`+"\n"...), false, 2},
		{"v1beta1", "b.log", "b.log:1: audit.k8s.io/v1beta1 is not supported", v1beta1, false, 2},
		{"line over 1 MB", "c.log", fmt.Sprintf("c.log:%d: line longer than", lines+1), append(append([]byte{}, b...), bytes.Repeat([]byte("x"), 1<<20+10)...), false, 2},
		{"gzip cut short", "d.log.gz", "d.log.gz:", gz.Bytes()[:gz.Len()-20], false, 2},
		{"truncated last line", "e.log", "warning: skipped 1 last line(s) cut short", append(append([]byte{}, b...), b[:50]...), false, 0},
		{"truncated last line strict", "f.log", fmt.Sprintf("f.log:%d: the last line is cut short", lines+1), append(append([]byte{}, b...), b[:50]...), true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"conflicts", "--audit-log", writeLog(t, tc.file, tc.content)}
			if tc.strict {
				args = append(args, "--strict")
			}
			r := cluster.RV(t, args...)
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("want exit %d and %q on stderr, got %s", tc.code, tc.want, r)
			}
			if tc.code != 0 && r.Stdout != "" {
				t.Errorf("a bad log printed a result: %s", r.Stdout)
			}
		})
	}
}

// checkCounts compares attempts, 409s, successes and causes only: for
// writers whose own log has no notion of retry chains or give-ups.
func checkCounts(t *testing.T, rep conflictsReport, name string, want writerLog) {
	t.Helper()
	for _, w := range rep.Writers {
		if w.Writer.FieldManager != name && w.Writer.Pod != name {
			continue
		}
		w.RetryChains, w.GiveUps = 0, 0
		want.RetryChains, want.GiveUps = 0, 0
		rep2 := rep
		rep2.Writers = append(rep.Writers[:0:0], w)
		checkWriter(t, rep2, name, want, false)
		return
	}
	if want.Attempts > 0 {
		t.Errorf("writer %s is not in the report: %+v", name, rep.Writers)
	}
}

// TestConflictsLeaderElection: three client-go leader-election candidates,
// pods of one service account, race for one Lease at start and again when
// the leader stops renewing; every 409 is lease contention, and each
// candidate's writes and 409s match what its own transport counted.
func TestConflictsLeaderElection(t *testing.T) {
	ns := cluster.Namespace(t)
	segment := auditSegment(t)
	type candidate struct {
		ct     *countingTransport
		cancel context.CancelFunc
		done   chan struct{}
	}
	var cands []*candidate
	var mu sync.Mutex
	leader := ""
	// Every candidate's first read of the Lease waits for the others': all
	// three find no Lease and create it, so that two creates lose with a 409
	// however the goroutines are scheduled (a race left to chance at expiry
	// may end with no 409 at all).
	var firstReads sync.WaitGroup
	firstReads.Add(3)
	for i := 0; i < 3; i++ {
		pod := fmt.Sprintf("candidate-%d", i)
		cfg, ct := writerConfig(t, pod)
		counting := cfg.WrapTransport
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return &afterFirstGet{rt: counting(rt), wait: func() { firstReads.Done(); firstReads.Wait() }}
		}
		cs := kubernetes.NewForConfigOrDie(cfg)
		ctx, cancel := context.WithCancel(context.Background())
		c := &candidate{ct: ct, cancel: cancel, done: make(chan struct{})}
		cands = append(cands, c)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Name: "leader", Namespace: ns}, Client: cs.CoordinationV1(),
				LockConfig: resourcelock.ResourceLockConfig{Identity: pod}},
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {},
				OnStoppedLeading: func() {},
				OnNewLeader:      func(id string) { mu.Lock(); leader = id; mu.Unlock() },
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		go func() { defer close(c.done); le.Run(ctx) }()
	}
	time.Sleep(3 * time.Second)
	mu.Lock()
	first := leader
	mu.Unlock()
	for i, c := range cands {
		if fmt.Sprintf("candidate-%d", i) == first {
			c.cancel() // stops renewing without releasing: the others race at expiry
			<-c.done
		}
	}
	time.Sleep(6 * time.Second)
	for _, c := range cands {
		c.cancel()
		<-c.done
	}
	rep := runConflicts(t, "--audit-log", segment(), "--retry-window", "250ms")
	total := 0
	for i, c := range cands {
		c.ct.mu.Lock()
		l := c.ct.l
		c.ct.mu.Unlock()
		total += l.Conflicts
		t.Logf("candidate-%d: %+v", i, l.conflictsTally)
		checkCounts(t, rep, fmt.Sprintf("candidate-%d", i), l)
	}
	if total < 2 {
		t.Errorf("three candidates that all found no Lease made %d 409s creating it, want at least 2", total)
	}
}

// afterFirstGet calls wait once, after its first GET has been answered and
// before that answer is handed on.
type afterFirstGet struct {
	rt   http.RoundTripper
	once sync.Once
	wait func()
}

func (a *afterFirstGet) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.rt.RoundTrip(req)
	if req.Method == http.MethodGet {
		a.once.Do(a.wait)
	}
	return resp, err
}

// TestConflictsQuota: pods created at once against a tight ResourceQuota;
// each 409 the creators saw is counted with the cause their errors name
// (quota when the details name resourcequotas).
func TestConflictsQuota(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	setup := cluster.Clientset(t, "e2e-setup")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "tight", Namespace: ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("20")}}}
	if _, err := setup.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Pods need the namespace's default service account.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := setup.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	segment := auditSegment(t)
	const creators, each = 8, 4
	logs := make([]writerLog, creators)
	var wg sync.WaitGroup
	for i := 0; i < creators; i++ {
		cs := cluster.Clientset(t, fmt.Sprintf("rv-e2e-quota-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &logs[i]
			l.causes = map[string]int{}
			for j := 0; j < each; j++ {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "q-", Namespace: ns},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
				l.Attempts++
				_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{FieldManager: fmt.Sprintf("quota-%d", i)})
				var st apierrors.APIStatus
				switch {
				case err == nil:
					l.Successes++
				case apierrors.IsConflict(err) && errors.As(err, &st) && st.Status().Details != nil && st.Status().Details.Kind == "resourcequotas":
					l.Conflicts++
					l.GiveUps++
					l.causes["quota"]++
				case apierrors.IsConflict(err):
					l.Conflicts++
					l.GiveUps++
					l.causes["unknown"]++
				}
			}
		}()
	}
	wg.Wait()
	rep := runConflicts(t, "--audit-log", segment(), "--retry-window", "250ms")
	total := 0
	for i, l := range logs {
		total += l.Conflicts
		t.Logf("quota-%d: %+v %v", i, l.conflictsTally, l.causes)
		checkCounts(t, rep, fmt.Sprintf("quota-%d", i), l)
	}
	t.Logf("%d quota 409s", total)
}
