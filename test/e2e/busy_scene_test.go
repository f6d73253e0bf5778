//go:build e2e

package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// busyScene is a busy cluster's audit log: kube-controller-manager's
// controllers, kubectl and client-go writers with and without field
// managers, RetryOnConflict writers, a periodic writer that never
// retries, appliers with two owners, kubectl rv predict's dry runs, and
// load clients beside them (busy_clients_test.go). Every writer and
// client the scene runs logs its own outcomes; tests compare the report
// per writer with those logs, never with kubectl rv's own output. It is
// built once per run (sharedBusyScene) for every test that reads it.
type busyScene struct {
	// ns is the scene's namespace: analyses are scoped to it with -n.
	ns string
	// log is the scene's segment of the API server's audit log; rotated is
	// a directory holding it and a gzip copy of it (a rotation overlap).
	log, rotated string
	// writers are the scene's writers' own logs, by field manager (the
	// one the API server records).
	writers map[string]*sceneWriter
	// topNS is the namespace of the load clients' objects (besides
	// rv-audit-rr); clients are their own logs, by name.
	topNS   string
	clients map[string]*sceneClient
	// tb is the test that builds the scene, for the framework's clients.
	tb testing.TB
}

// sceneWriter is what one writer counted of its own writes.
type sceneWriter struct {
	writerLog
	// userAgent is the user agent it sent.
	userAgent string
	// lostTo are the writers (by field manager) it can only have lost to,
	// where the scene makes that knowable.
	lostTo []string
	// owners are the managers its apply conflicts named, with their fields,
	// as the API server's error causes say.
	owners map[string][]string
	// methods are the write methods it sent, as simulate names them, by
	// object.
	methods map[string][]string
}

// sent records that w wrote object name with method.
func (w *sceneWriter) sent(name, method string) {
	sceneMu.Lock()
	defer sceneMu.Unlock()
	if w.methods == nil {
		w.methods = map[string][]string{}
	}
	if !slices.Contains(w.methods[name], method) {
		w.methods[name] = append(w.methods[name], method)
	}
}

var (
	busyOnce sync.Once
	busy     *busyScene
	busyErr  error
)

// sharedBusyScene builds the scene once per run and returns it.
func sharedBusyScene(t *testing.T) *busyScene {
	t.Helper()
	busyOnce.Do(func() { busy, busyErr = buildBusyScene(t) })
	if busyErr != nil {
		t.Fatalf("the busy scene: %v", busyErr)
	}
	return busy
}

// sceneUA is the user agent of a scene writer: the API server records
// its prefix, name, as the field manager of writes that name none.
func sceneUA(name string) string { return name + "/v1.0 (e2e busy scene)" }

func buildBusyScene(t *testing.T) (*busyScene, error) {
	ctx := context.Background()
	s := &busyScene{ns: fmt.Sprintf("busy-scene-%d", time.Now().UnixNano()%1e6), writers: map[string]*sceneWriter{}, tb: t}
	s.topNS, s.clients = s.ns+"-top", map[string]*sceneClient{}
	setup := cluster.Clientset(t, sceneUA("busy-setup"))
	if _, err := setup.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	start, err := auditSize()
	if err != nil {
		return nil, err
	}
	if err := s.createObjects(ctx, setup); err != nil {
		return nil, err
	}
	if err := s.loadObjects(ctx, setup); err != nil {
		return nil, err
	}
	if err := s.retryObjects(ctx); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	run := func(f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errs <- err
			}
		}()
	}
	stop := make(chan struct{})
	tickerDone := make(chan struct{})
	go func() { defer close(tickerDone); errs <- s.ticker(ctx, stop) }()
	for i := 0; i < 3; i++ {
		run(func() error { return s.rmw(ctx, fmt.Sprintf("busy-rmw-%d", i), true) })
	}
	for i := 0; i < 2; i++ {
		run(func() error { return s.rmw(ctx, fmt.Sprintf("busy-nofm-%d", i), false) })
	}
	run(func() error { return s.periodic(ctx) })
	run(func() error { return s.twoOwners(ctx) })
	run(func() error { return s.kubectlScale() })
	run(func() error { return s.kubectlEdit() })
	run(func() error { return s.predictDryRuns() })
	run(func() error { return s.getLoop(ctx) })
	run(func() error { return s.createExisting(ctx) })
	run(func() error { return s.noOpUpdates(ctx) })
	run(func() error { return s.fastRMW(ctx, "busy-fast-0", "busy-fast-1", 1) })
	run(func() error { return s.fastRMW(ctx, "busy-fast-1", "busy-fast-0", 2) })
	run(func() error { return s.blindApplier(ctx) })
	wg.Wait()
	close(stop)
	<-tickerDone
	close(errs)
	for err := range errs {
		if err != nil {
			return nil, err
		}
	}
	// The API server writes an event after the response: let the last land.
	time.Sleep(2 * time.Second)
	return s, s.saveLogs(start)
}

func auditSize() (int64, error) {
	if cluster.AuditLog == "" {
		return 0, errors.New("the control plane has no audit log (RV_AUDIT_LOG)")
	}
	fi, err := os.Stat(cluster.AuditLog)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// saveLogs copies the audit log written since start to s.log, and to a
// directory beside a gzip copy of itself.
func (s *busyScene) saveLogs(start int64) error {
	b, err := os.ReadFile(cluster.AuditLog)
	if err != nil {
		return err
	}
	if int64(len(b)) < start {
		return errors.New("the audit log was rotated during the scene")
	}
	dir, err := os.MkdirTemp("", "rv-busy-scene-")
	if err != nil {
		return err
	}
	s.log = filepath.Join(dir, "audit.log")
	s.rotated = filepath.Join(dir, "rotated")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(b[start:])
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.Mkdir(s.rotated, 0o700); err != nil {
		return err
	}
	for p, content := range map[string][]byte{
		s.log: b[start:], filepath.Join(s.rotated, "audit.log"): b[start:],
		filepath.Join(s.rotated, "audit-2026-11-27T10-00-00.000.log.gz"): gz.Bytes(),
	} {
		if err := os.WriteFile(p, content, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (s *busyScene) createObjects(ctx context.Context, cs kubernetes.Interface) error {
	for _, name := range []string{"hot", "tick", "edit"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns}, Data: map[string]string{}}
		if _, err := cs.CoreV1().ConfigMaps(s.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: s.ns}, Spec: appsv1.DeploymentSpec{
		Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
	_, err := cs.AppsV1().Deployments(s.ns).Create(ctx, d, metav1.CreateOptions{})
	return err
}

// writer registers a writer's log under its field manager.
func (s *busyScene) writer(manager, ua string) *sceneWriter {
	w := &sceneWriter{writerLog: writerLog{causes: map[string]int{}}, userAgent: ua}
	s.writers[manager] = w
	return w
}

// ticker merge-patches ConfigMaps tick and edit every 100 ms until stop,
// as a client-go program without a field manager: patches without a
// precondition never meet a 409.
func (s *busyScene) ticker(ctx context.Context, stop <-chan struct{}) error {
	cs := cluster.Clientset(s.tb, sceneUA("busy-ticker"))
	w := s.writerLocked("busy-ticker")
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		case <-time.After(100 * time.Millisecond):
		}
		name := []string{"tick", "edit"}[i%2]
		patch := fmt.Sprintf(`{"data":{"tick":"%d"}}`, i)
		_, err := cs.CoreV1().ConfigMaps(s.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		w.sent(name, "merge-patch")
		w.Attempts++
		if err != nil {
			return fmt.Errorf("busy-ticker: %w", err)
		}
		w.Successes++
	}
}

var sceneMu sync.Mutex

func (s *busyScene) writerLocked(name string) *sceneWriter {
	sceneMu.Lock()
	defer sceneMu.Unlock()
	return s.writer(name, sceneUA(name))
}

// rmw is a RetryOnConflict read-modify-write writer of ConfigMap hot:
// six rounds 600 ms apart, with or without a field manager.
func (s *busyScene) rmw(ctx context.Context, name string, withManager bool) error {
	cs := cluster.Clientset(s.tb, sceneUA(name))
	w := s.writerLocked(name)
	fm := ""
	if withManager {
		fm = name
	}
	w.sent("hot", "update")
	for round := 0; round < 6; round++ {
		rmwRound(ctx, cs, s.ns, name, fm, round, &w.writerLog)
		time.Sleep(600 * time.Millisecond)
	}
	return nil
}

// periodic stamps ConfigMap tick (a merge patch), then reads it and
// updates it 300 ms later, every second, and never retries: the ticker's
// patches in between make most of its updates 409s, each a give-up, and
// the ticker the only writer it can lose to. Its next period re-reads
// within the retry window: its own pace, not a retry. (The stamp gives
// conflicts its pace before its first 409: a writer whose first attempt
// on an object is a 409 has none, see docs/conflicts.md.)
func (s *busyScene) periodic(ctx context.Context) error {
	const name = "busy-periodic"
	cs := cluster.Clientset(s.tb, sceneUA(name))
	w := s.writerLocked(name)
	w.lostTo = []string{"busy-ticker"}
	w.sent("tick", "merge-patch")
	w.sent("tick", "update")
	w.Attempts++
	if _, err := cs.CoreV1().ConfigMaps(s.ns).Patch(ctx, "tick", types.MergePatchType, []byte(`{"data":{"periodic":"start"}}`), metav1.PatchOptions{FieldManager: name}); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	w.Successes++
	for i := 0; i < 10; i++ {
		next := time.Now().Add(time.Second)
		cur, err := cs.CoreV1().ConfigMaps(s.ns).Get(ctx, "tick", metav1.GetOptions{})
		if err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond)
		if cur.Data == nil {
			cur.Data = map[string]string{}
		}
		cur.Data["periodic"] = fmt.Sprint(i)
		w.Attempts++
		_, err = cs.CoreV1().ConfigMaps(s.ns).Update(ctx, cur, metav1.UpdateOptions{FieldManager: name})
		switch {
		case apierrors.IsConflict(err):
			w.Conflicts++
			w.GiveUps++
			w.causes["contention"]++
		case err == nil:
			w.Successes++
		default:
			return fmt.Errorf("%s: %w", name, err)
		}
		time.Sleep(time.Until(next))
	}
	if w.Conflicts == 0 {
		return fmt.Errorf("%s met no 409: the scene made no contention for it", name)
	}
	return nil
}

// twoOwners: busy-m1 applies key a of ConfigMap two, busy-m2 key b, then
// busy-m3 applies both without force and meets one 409 naming both.
func (s *busyScene) twoOwners(ctx context.Context) error {
	cs := cluster.Clientset(s.tb, sceneUA("busy-applier"))
	apply := func(manager string, data map[string]string) error {
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]string{"name": "two", "namespace": s.ns}, "data": data})
		_, err := cs.CoreV1().ConfigMaps(s.ns).Patch(ctx, "two", types.ApplyPatchType, b, metav1.PatchOptions{FieldManager: manager})
		return err
	}
	for _, m := range []struct {
		name string
		data map[string]string
	}{{"busy-m1", map[string]string{"a": "1"}}, {"busy-m2", map[string]string{"b": "2"}}} {
		w := s.writerLocked(m.name)
		w.userAgent = sceneUA("busy-applier")
		w.sent("two", "apply")
		w.Attempts++
		if err := apply(m.name, m.data); err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		w.Successes++
	}
	w := s.writerLocked("busy-m3")
	w.userAgent = sceneUA("busy-applier")
	w.sent("two", "apply")
	w.Attempts++
	err := apply("busy-m3", map[string]string{"a": "3", "b": "3"})
	conflicts, ok := framework.ApplyConflicts(err)
	if !ok {
		return fmt.Errorf("busy-m3: got %v, want an apply conflict", err)
	}
	w.Conflicts++
	w.GiveUps++
	w.causes["ssa-field-conflict"]++
	w.owners = map[string][]string{}
	for field, managers := range conflicts {
		for _, m := range managers {
			w.owners[m] = append(w.owners[m], field)
			w.lostTo = append(w.lostTo, m)
		}
	}
	return nil
}

// kubectlScale scales Deployment web three times: kubectl scale sends no
// field manager, so the API server records "kubectl". The deployment and
// replica set controllers write after each.
func (s *busyScene) kubectlScale() error {
	w := s.writerLocked("kubectl")
	w.userAgent = "kubectl/"
	for _, n := range []string{"2", "3", "1"} {
		w.Attempts++
		if err := kubectl("-n", s.ns, "scale", "deploy", "web", "--replicas", n); err != nil {
			return err
		}
		w.Successes++
		time.Sleep(time.Second)
	}
	return nil
}

// kubectlEdit is kubectl edit done by hand: get ConfigMap edit, change
// it, replace it; on a 409 (the ticker patched in between) get and
// replace again, at most three times. Three rounds, six seconds apart:
// its pace is slower than twice a retry's wait (two kubectl runs) for any
// retry within the retry window (5s).
func (s *busyScene) kubectlEdit() error {
	w := s.writerLocked("kubectl-replace")
	w.userAgent = "kubectl/"
	w.sent("edit", "update")
	for round := 0; round < 3; round++ {
		for attempt := 1; ; attempt++ {
			out, err := kubectlOut("-n", s.ns, "get", "configmap", "edit", "-o", "json")
			if err != nil {
				return err
			}
			var cm corev1.ConfigMap
			if err := json.Unmarshal(out, &cm); err != nil {
				return err
			}
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data["edited"] = fmt.Sprint(round)
			b, _ := json.Marshal(cm)
			w.Attempts++
			err = kubectlIn(b, "-n", s.ns, "replace", "-f", "-")
			if err == nil {
				w.Successes++
				if attempt > 1 {
					w.RetryChains++
				}
				break
			}
			if !strings.Contains(err.Error(), "the object has been modified") {
				return err
			}
			w.Conflicts++
			w.causes["contention"]++
			if attempt == 3 {
				w.RetryChains++
				w.GiveUps++
				break
			}
		}
		time.Sleep(6 * time.Second)
	}
	return nil
}

const busyPredictCM = `apiVersion: v1
kind: ConfigMap
metadata: {name: tick, namespace: NS}
data: {predicted: "yes"}
`

// predictDryRuns runs kubectl rv predict on ConfigMap tick three times: its
// server dry runs are audited like writes and may meet 409s.
func (s *busyScene) predictDryRuns() error {
	dir, err := os.MkdirTemp("", "rv-busy-predict-")
	if err != nil {
		return err
	}
	p := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(busyPredictCM, "NS", s.ns)), 0o600); err != nil {
		return err
	}
	for i := 0; i < 3; i++ {
		cmd := exec.Command("kubectl", "rv", "predict", "-f", p, "--field-manager", "ci", "-o", "json")
		cmd.Env, cmd.Dir = cluster.Env(), cluster.Root
		if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 1 {
			return fmt.Errorf("kubectl rv predict: %v\n%s", err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}

func kubectlOut(args ...string) ([]byte, error) {
	cmd := exec.Command("kubectl", args...)
	cmd.Env, cmd.Dir = cluster.Env(), cluster.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func kubectl(args ...string) error { _, err := kubectlOut(args...); return err }

func kubectlIn(stdin []byte, args ...string) error {
	cmd := exec.Command("kubectl", args...)
	cmd.Env, cmd.Dir = cluster.Env(), cluster.Root
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
