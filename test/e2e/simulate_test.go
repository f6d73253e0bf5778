//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// TestSimulateTwoClientsMatchesTheRealAPIServer plays the two-clients
// sequence against the real control plane with two real clients and checks
// that kubectl rv simulate tells the same story: B's write succeeds, A's
// write with the stale resourceVersion gets the very same 409, A re-reads
// B's resourceVersion and succeeds; every write moves the RV forward, and
// a write that changes nothing does not.
func TestSimulateTwoClientsMatchesTheRealAPIServer(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	a := cluster.Clientset(t, "client-a").CoreV1().ConfigMaps(ns)
	b := cluster.Clientset(t, "client-b").CoreV1().ConfigMaps(ns)
	created, err := a.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Data: map[string]string{"count": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The real sequence.
	type step struct {
		Actor, Verb string
		Code        int
		Message     string
	}
	var real []step
	readA, err := a.Get(ctx, "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	readB, err := b.Get(ctx, "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	readB.Data["count"] = "1"
	wroteB, err := b.Update(ctx, readB, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	real = append(real, step{"b", "PUT", 200, ""})
	readA.Data["count"] = "1"
	_, err = a.Update(ctx, readA, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Fatalf("client A's stale update: want 409, got %v", err)
	}
	real = append(real, step{"a", "PUT", 409, strings.ReplaceAll(err.Error(), ns, "default")})
	reread, err := a.Get(ctx, "demo", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if reread.ResourceVersion != wroteB.ResourceVersion {
		t.Errorf("A's re-read should see B's resourceVersion %s, got %s", wroteB.ResourceVersion, reread.ResourceVersion)
	}
	reread.Data["count"] = "2"
	wroteA, err := a.Update(ctx, reread, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	real = append(real, step{"a", "PUT", 200, ""})
	rvs := []string{created.ResourceVersion, wroteB.ResourceVersion, wroteA.ResourceVersion}
	for i := 1; i < len(rvs); i++ {
		if c, err := resourceversion.CompareResourceVersion(rvs[i-1], rvs[i]); err != nil || c >= 0 {
			t.Errorf("real resourceVersions should increase: %v (%v)", rvs, err)
		}
	}
	// A write that changes nothing keeps the resourceVersion, as simulated.
	same, err := a.Update(ctx, wroteA, metav1.UpdateOptions{})
	if err != nil || same.ResourceVersion != wroteA.ResourceVersion {
		t.Errorf("a no-op update should keep resourceVersion %s, got %s (%v)", wroteA.ResourceVersion, same.ResourceVersion, err)
	}

	// The simulated sequence.
	r := cluster.RV(t, "simulate", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("kubectl rv simulate -o json: %s", r)
	}
	var rep struct {
		Kind          string
		StartRevision int64
		FinalRevision int64
		Steps         []struct {
			Actor, Verb, ResourceVersion, SentResourceVersion, Message string
			Code                                                       int
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.Stdout)
	}
	var sim []step
	var simRVs []string
	for _, s := range rep.Steps {
		if s.Verb != "PUT" {
			continue
		}
		sim = append(sim, step{s.Actor, s.Verb, s.Code, s.Message})
		if s.Code == 200 {
			simRVs = append(simRVs, s.ResourceVersion)
		}
	}
	if diff := cmp.Diff(real, sim); diff != "" {
		t.Errorf("the simulation and the real API server disagree (-real +simulated):\n%s", diff)
	}
	// Relative revisions: B's write is the first after the create, A's the
	// second; the real cluster may interleave other writes, never fewer.
	if want := []string{"101", "102"}; !cmp.Equal(want, simRVs) || rep.StartRevision != 100 || rep.FinalRevision != 102 {
		t.Errorf("simulated revisions: want writes at %v from 100 to 102, got %v (%d -> %d)", want, simRVs, rep.StartRevision, rep.FinalRevision)
	}
}

// TestSimulateBadScenarioExits2 checks that a scenario with an unknown
// field is refused with its line, exit 2, and nothing on stdout.
func TestSimulateBadScenarioExits2(t *testing.T) {
	f := t.TempDir() + "/bad.yaml"
	cluster.MustKubectl(t, "version", "--client") // the kubectl binary works
	if err := writeFile(f, "apiVersion: rv.kubectl-rv.dev/v1alpha1\nkind: Scenario\nactorz: []\n"); err != nil {
		t.Fatal(err)
	}
	r := cluster.RV(t, "simulate", "run", f)
	if r.Code != 2 || !strings.Contains(r.Stderr, "bad.yaml:3: unknown field \"actorz\"") || r.Stdout != "" {
		t.Errorf("want exit 2 naming line 3, got %s", r)
	}
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// TestSimulateOnRealEtcd runs two-clients on the control plane's own etcd
// (under a private key prefix; no compaction): the same pattern of
// successes and 409s, with real revisions that only move forward.
func TestSimulateOnRealEtcd(t *testing.T) {
	r := cluster.RV(t, "simulate", "run", "--builtin", "two-clients", "--steps", "-o", "json", "--etcd-endpoints", cluster.EtcdEndpoint)
	if r.Code != 0 {
		t.Fatalf("simulate run on etcd: %s", r)
	}
	var rep struct {
		Steps []struct {
			Actor, Verb, ResourceVersion string
			Code                         int
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	var codes []int
	var rvs []string
	for _, s := range rep.Steps {
		if s.Verb == "PUT" {
			codes = append(codes, s.Code)
			if s.Code == 200 {
				rvs = append(rvs, s.ResourceVersion)
			}
		}
	}
	if diff := cmp.Diff([]int{200, 409, 200}, codes); diff != "" {
		t.Errorf("PUT results on a real etcd (-want +got):\n%s", diff)
	}
	if len(rvs) == 2 {
		if c, err := resourceversion.CompareResourceVersion(rvs[0], rvs[1]); err != nil || c >= 0 {
			t.Errorf("revisions should increase: %v", rvs)
		}
	}
	if !strings.Contains(r.Stderr, "/kubectl-rv/simulate/two-clients/") {
		t.Errorf("the run should say where its keys went: %q", r.Stderr)
	}
	if n := keysUnder(t, runPrefix(t, r.Stderr)); n != 0 {
		t.Errorf("the run left %d keys in etcd under its prefix; stderr:\n%s", n, r.Stderr)
	}
}

// TestSimulateOnRealEtcdKeep: --keep leaves the run's keys in etcd, where
// etcd itself finds them.
func TestSimulateOnRealEtcdKeep(t *testing.T) {
	r := cluster.RV(t, "simulate", "run", "--builtin", "two-clients", "--etcd-endpoints", cluster.EtcdEndpoint, "--keep")
	if r.Code != 0 {
		t.Fatalf("simulate run --keep on etcd: %s", r)
	}
	prefix := runPrefix(t, r.Stderr)
	c := connectEtcd(t, cluster.EtcdEndpoint)
	t.Cleanup(func() {
		_, _ = c.DeleteRange(context.Background(), prefix, mvcc.DeleteOptions{End: mvcc.PrefixEnd(prefix)})
	})
	if n := keysUnder(t, prefix); n == 0 {
		t.Errorf("--keep: no key under %s; stderr:\n%s", prefix, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "Kept the run's keys under "+prefix) {
		t.Errorf("--keep should say where the keys are; stderr:\n%s", r.Stderr)
	}
}

// runPrefix reads the key prefix a simulate run on etcd announces.
func runPrefix(t *testing.T, stderr string) string {
	t.Helper()
	_, after, ok := strings.Cut(stderr, " under /kubectl-rv/simulate/")
	if !ok {
		t.Fatalf("no key prefix in stderr:\n%s", stderr)
	}
	p, _, _ := strings.Cut(after, "\n")
	return "/kubectl-rv/simulate/" + p
}

// keysUnder counts the keys under prefix in the control plane's etcd.
func keysUnder(t *testing.T, prefix string) int64 {
	t.Helper()
	res, err := connectEtcd(t, cluster.EtcdEndpoint).Range(context.Background(), prefix, mvcc.RangeOptions{End: mvcc.PrefixEnd(prefix), CountOnly: true})
	if err != nil {
		t.Fatalf("etcd range %s: %v", prefix, err)
	}
	return res.Count
}

// TestSimulateRefusesWhatTheAPIServerRefuses: an increment of a missing
// ConfigMap key would write the integer 1 into string data. The real API
// server refuses such a write, so the simulator refuses the scenario up
// front (exit 2, naming the change) instead of running 500s for a minute.
func TestSimulateRefusesWhatTheAPIServerRefuses(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cms := cluster.Dynamic(t, "e2e").Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "counter"},
		"data":     map[string]any{"count": "0", "nope": int64(1)},
	}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err == nil {
		t.Fatal("the API server accepted an integer in ConfigMap data; the simulator's up-front check would be wrong")
	}
	src, err := os.ReadFile("../../examples/scenarios/counter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := t.TempDir() + "/nope.yaml"
	if err := writeFile(f, strings.ReplaceAll(string(src), "increment: data.count", "increment: data.nope")); err != nil {
		t.Fatal(err)
	}
	r := cluster.RV(t, "simulate", "run", f)
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, `change data.nope would write 1, which a ConfigMap cannot hold`) {
		t.Errorf("want exit 2 naming the change, got %s", r)
	}
}
