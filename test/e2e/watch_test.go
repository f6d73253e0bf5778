//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// watchRow is the part of a WatchEvent JSON line the tests check.
type watchRow struct {
	Kind            string `json:"kind"`
	Type            string `json:"type"`
	Object          string `json:"object"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	ResourceVersion string `json:"resourceVersion"`
	Writer          *struct {
		Manager     string   `json:"manager"`
		Operation   string   `json:"operation"`
		Subresource string   `json:"subresource"`
		Reason      string   `json:"reason"`
		Candidates  []string `json:"candidates"`
	} `json:"writer"`
	Fields []struct {
		Path string `json:"path"`
		Op   string `json:"op"`
		Old  any    `json:"old"`
		New  any    `json:"new"`
	} `json:"fields"`
	Initial  bool `json:"initial"`
	AfterGap bool `json:"afterGap"`
	Gap      *struct {
		From, To, Error string
		Changes         int
	} `json:"gap"`
	Fight *struct {
		Field    string   `json:"field"`
		Managers []string `json:"managers"`
		Flips    int      `json:"flips"`
	} `json:"fight"`
}

func (r watchRow) manager() string {
	if r.Writer == nil {
		return ""
	}
	return r.Writer.Manager
}

// field returns the change of path, rendered "old->new" as JSON values.
func (r watchRow) field(path string) (string, bool) {
	for _, f := range r.Fields {
		if f.Path == path {
			o, _ := json.Marshal(f.Old)
			n, _ := json.Marshal(f.New)
			return fmt.Sprintf("%s %s->%s", f.Op, o, n), true
		}
	}
	return "", false
}

func parseRow(t *testing.T, line string) (watchRow, bool) {
	t.Helper()
	var r watchRow
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("watch -o json printed a line that is not JSON: %v\n%s", err, line)
	}
	return r, r.Kind == "WatchEvent"
}

func parseRows(t *testing.T, stdout string) []watchRow {
	t.Helper()
	var rows []watchRow
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if l == "" {
			continue
		}
		if r, ok := parseRow(t, l); ok {
			rows = append(rows, r)
		}
	}
	return rows
}

func isRow(typ, name string) func(string) bool {
	return func(l string) bool {
		var r watchRow
		return json.Unmarshal([]byte(l), &r) == nil && r.Type == typ && (name == "" || r.Name == name)
	}
}

// expectation is one write the test made: its RV must appear exactly once,
// written by manager, changing path as want ("change 3->5").
type expectation struct {
	what, rv, manager, subresource, path, want string
}

func checkWrites(t *testing.T, rows []watchRow, name string, writes []expectation) {
	t.Helper()
	byRV := map[string][]watchRow{}
	for _, r := range rows {
		if r.Name == name && (r.Type == "MODIFIED" || r.Type == "ADDED") {
			byRV[r.ResourceVersion] = append(byRV[r.ResourceVersion], r)
		}
	}
	for rv, rs := range byRV {
		if len(rs) > 1 {
			t.Errorf("resourceVersion %s of %s appears %d times", rv, name, len(rs))
		}
	}
	// Rows of one object come in resourceVersion order.
	last := int64(0)
	for _, r := range rows {
		if r.Name != name || r.ResourceVersion == "" || r.Type == "GAP" || r.Type == "FIGHT" {
			continue
		}
		if n := mustInt(r.ResourceVersion); n <= last {
			t.Errorf("%s: resourceVersion %d after %d", name, n, last)
		} else {
			last = n
		}
	}
	for _, w := range writes {
		rs := byRV[w.rv]
		if len(rs) != 1 {
			t.Errorf("%s (RV %s): want exactly one row, got %d", w.what, w.rv, len(rs))
			continue
		}
		r := rs[0]
		if r.manager() != w.manager || r.Writer.Subresource != w.subresource {
			t.Errorf("%s (RV %s): manager %q subresource %q, want %q %q (writer %+v)", w.what, w.rv, r.manager(), r.Writer.Subresource, w.manager, w.subresource, *r.Writer)
		}
		got, ok := r.field(w.path)
		if prefix, wild := strings.CutSuffix(w.want, "*"); wild && strings.HasPrefix(got, prefix) {
			got = w.want
		}
		if !ok {
			t.Errorf("%s (RV %s): %s not among the changed fields %+v", w.what, w.rv, w.path, r.Fields)
		} else if got != w.want {
			t.Errorf("%s (RV %s): %s: got %s, want %s", w.what, w.rv, w.path, got, w.want)
		}
	}
}

var deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func newDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}},
			},
		},
	}
}

// writers are the four kinds of write with their own field managers.
type writers struct {
	t        *testing.T
	ns, name string
	updater  kubernetes.Interface
	patcher  kubernetes.Interface
	applier  kubernetes.Interface
	statuser kubernetes.Interface
}

func newWriters(t *testing.T, ns, name string) *writers {
	return &writers{t: t, ns: ns, name: name,
		updater:  cluster.Clientset(t, "e2e-updater"),
		patcher:  cluster.Clientset(t, "e2e-patcher"),
		applier:  cluster.Clientset(t, "e2e-applier-client"),
		statuser: cluster.Clientset(t, "e2e-statuser"),
	}
}

// round makes one write of each kind and returns what the watch must show.
func (w *writers) round(i int) []expectation {
	t, ctx := w.t, context.Background()
	deploys := func(c kubernetes.Interface) func() (*appsv1.Deployment, error) {
		return func() (*appsv1.Deployment, error) {
			return c.AppsV1().Deployments(w.ns).Get(ctx, w.name, metav1.GetOptions{})
		}
	}
	var out []expectation

	// An update (PUT) through a client with its own user agent.
	var oldReplicas, newReplicas int32
	var rv string
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deploys(w.updater)()
		if err != nil {
			return err
		}
		oldReplicas = *d.Spec.Replicas
		newReplicas = oldReplicas + 1
		d.Spec.Replicas = &newReplicas
		d, err = w.updater.AppsV1().Deployments(w.ns).Update(ctx, d, metav1.UpdateOptions{})
		if err == nil {
			rv = d.ResourceVersion
		}
		return err
	}); err != nil {
		t.Fatalf("update: %v", err)
	}
	out = append(out, expectation{what: fmt.Sprintf("round %d update", i), rv: rv, manager: "e2e-updater", path: ".spec.replicas", want: fmt.Sprintf("change %d->%d", oldReplicas, newReplicas)})

	// A JSON merge patch.
	tier := fmt.Sprintf("tier-%d", i)
	d, err := w.patcher.AppsV1().Deployments(w.ns).Patch(ctx, w.name, types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"`+tier+`"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	want := fmt.Sprintf("add null->%q", tier)
	if i > 0 {
		want = fmt.Sprintf("change %q->%q", fmt.Sprintf("tier-%d", i-1), tier)
	}
	out = append(out, expectation{what: fmt.Sprintf("round %d merge patch", i), rv: d.ResourceVersion, manager: "e2e-patcher", path: ".metadata.labels.tier", want: want})

	// A server-side apply with its own field manager.
	apply := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q,"namespace":%q,"annotations":{"e2e/applied":"a%d"}}}`, w.name, w.ns, i)
	d, err = w.applier.AppsV1().Deployments(w.ns).Patch(ctx, w.name, types.ApplyPatchType, []byte(apply), metav1.PatchOptions{FieldManager: "e2e-applier"})
	if err != nil {
		t.Fatalf("server-side apply: %v", err)
	}
	want = fmt.Sprintf(`add null->"a%d"`, i)
	if i > 0 {
		want = fmt.Sprintf(`change "a%d"->"a%d"`, i-1, i)
	}
	out = append(out, expectation{what: fmt.Sprintf("round %d apply", i), rv: d.ResourceVersion, manager: "e2e-applier", path: ".metadata.annotations.e2e/applied", want: want})

	// A /status write: a condition of our own, which the deployment
	// controller keeps.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deploys(w.statuser)()
		if err != nil {
			return err
		}
		d.Status.Conditions = slices.DeleteFunc(d.Status.Conditions, func(c appsv1.DeploymentCondition) bool { return c.Type == "E2EProbe" })
		d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: "E2EProbe", Status: corev1.ConditionTrue, Reason: fmt.Sprintf("Round%d", i), Message: "set by the e2e test"})
		d, err = w.statuser.AppsV1().Deployments(w.ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		if err == nil {
			rv = d.ResourceVersion
		}
		return err
	}); err != nil {
		t.Fatalf("status update: %v", err)
	}
	path, want := `.status.conditions[type="E2EProbe"].reason`, fmt.Sprintf(`change "Round%d"->"Round%d"`, i-1, i)
	if i == 0 {
		path, want = `.status.conditions[type="E2EProbe"]`, `add null->"{*`
	}
	out = append(out, expectation{what: fmt.Sprintf("round %d status write", i), rv: rv, manager: "e2e-statuser", subresource: "status", path: path, want: want})
	return out
}

func TestWatchAttributesEveryWriteAndSurvivesRestart(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	creator := cluster.Clientset(t, "e2e-creator")
	if _, err := creator.AppsV1().Deployments(ns).Create(ctx, newDeployment(ns, "web", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "watch.jsonl")
	auditFrom := auditLogSize(t)
	bg := cluster.StartRV(t, "watch", "deployments", "-n", ns, "-o", "json", "--record", record)
	bg.WaitFor(t, time.Minute, "the initial ADDED row", isRow("ADDED", "web"))

	w := newWriters(t, ns, "web")
	var writes []expectation
	for i := 0; i < 3; i++ {
		writes = append(writes, w.round(i)...)
	}
	bg.WaitFor(t, time.Minute, "the last write before the restart", func(l string) bool {
		r, _ := parseRow(t, l)
		return r.ResourceVersion == writes[len(writes)-1].rv
	})

	cluster.RestartAPIServer(t)
	for i := 3; i < 6; i++ {
		writes = append(writes, w.round(i)...)
	}
	last := writes[len(writes)-1].rv
	bg.WaitFor(t, 2*time.Minute, "the last write after the restart", func(l string) bool {
		r, _ := parseRow(t, l)
		return r.ResourceVersion == last
	})
	res := bg.Stop(t)
	if res.Code != 0 {
		t.Fatalf("watch ended with %s", res)
	}
	rows := parseRows(t, res.Stdout)
	checkWrites(t, rows, "web", writes)
	for _, r := range rows {
		if r.Type == "GAP" {
			t.Logf("the restart cost a relist: %+v", *r.Gap)
		}
	}
	// The restart must have been felt: the API server's audit log shows the
	// watch opened again. (Whether the watch also warns depends on how the
	// old server closed it: a stream that ends cleanly and a reopen that
	// meets the new server need no warning.)
	watches := auditLines(t, auditFrom, func(l string) bool {
		return strings.Contains(l, `"verb":"watch"`) && strings.Contains(l, `"resource":"deployments"`) &&
			strings.Contains(l, `"namespace":"`+ns+`"`) && strings.Contains(l, `"userAgent":"kubectl-rv/`) && strings.Contains(l, `"stage":"ResponseStarted"`)
	})
	if watches < 2 {
		t.Errorf("the audit log shows %d watch of deployments in %s by kubectl-rv, want the first and one after the restart at least", watches, ns)
	}
	t.Logf("%d watches opened; stderr of the watch across the restart:\n%s", watches, res.Stderr)
	if !strings.Contains(res.Stdout, `"kind":"WatchSummary"`) {
		t.Errorf("no summary at the end:\n%s", res.Stdout)
	}

	// The recording replays to the same rows.
	replay := cluster.RV(t, "watch", "--replay", record, "-o", "json")
	if replay.Code != 0 {
		t.Fatalf("replay: %s", replay)
	}
	if diff := cmp.Diff(eventLines(res.Stdout), eventLines(replay.Stdout)); diff != "" {
		t.Errorf("the replay differs from the live rows (-live +replay):\n%s", diff)
	}
}

func eventLines(stdout string) []string {
	var out []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, `"kind":"WatchEvent"`) {
			out = append(out, l)
		}
	}
	return out
}

// compact compacts etcd at its current revision and checks that history
// before it is gone from etcd itself.
func compact(t *testing.T, oldKey string, oldRev int64) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The client's default logger writes its retries of the read below
	// (which fails on purpose: "required revision has been compacted") as
	// JSON lines into go test's output.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{cluster.EtcdEndpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client: %v", err)
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, "/registry/namespaces/default")
	if err != nil {
		t.Fatalf("etcd get: %v", err)
	}
	rev := resp.Header.Revision
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("etcd compact at %d: %v", rev, err)
	}
	if _, err := cli.Get(ctx, oldKey, clientv3.WithRev(oldRev)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("reading %s at revision %d after compacting at %d: want ErrCompacted, got %v", oldKey, oldRev, rev, err)
	}
	return rev
}

func TestWatchReportsGapAfterCompaction(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cs := cluster.Clientset(t, "e2e-gap-writer")
	mk := func(name, v string) *corev1.ConfigMap {
		// The label keeps kube-root-ca.crt, which the controller manager
		// creates at its own pace, out of the watch.
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"e2e-gap": "yes"}}, Data: map[string]string{"k": v}}
	}
	for _, n := range []string{"kept", "changed", "deleted"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, mk(n, "v0"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	record := filepath.Join(t.TempDir(), "gap.jsonl")
	proxy := cluster.StartProxy(t)
	bg := cluster.StartRV(t, "watch", "configmaps", "-n", ns, "-l", "e2e-gap=yes", "-o", "json", "--record", record, "--server", proxy.URL)
	bg.WaitFor(t, time.Minute, "the initial rows", isRow("ADDED", "deleted"))
	first, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, mk("changed", "v1"), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bg.WaitFor(t, time.Minute, "the first update", isRow("MODIFIED", "changed"))
	lastSeen := first.ResourceVersion

	// Cut the watch off, write behind its back, compact etcd past what it
	// saw, and restart the API server so that its watch cache forgets too:
	// the watch must resume into a 410 Gone.
	proxy.Block()
	for i := 2; i <= 4; i++ {
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, mk("changed", fmt.Sprintf("v%d", i)), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, mk("created", "v0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var oldRev int64
	fmt.Sscan(lastSeen, &oldRev)
	compactedAt := compact(t, "/registry/configmaps/"+ns+"/changed", oldRev)
	// What answers a watch from the compacted RV before the restart: the
	// watch cache still holds those events, so etcd's compaction alone does
	// not make a 410.
	t.Logf("before the restart, a watch from compacted RV %s gets: %s", lastSeen, probeWatch(t, ns, lastSeen))
	cluster.RestartAPIServer(t)
	t.Logf("after the restart, a watch from compacted RV %s gets: %s", lastSeen, probeWatch(t, ns, lastSeen))
	proxy.Unblock()

	bg.WaitFor(t, 2*time.Minute, "a GAP row", isRow("GAP", ""))
	bg.WaitFor(t, time.Minute, "the deletion seen after the gap", isRow("DELETED", "deleted"))
	res := bg.Stop(t)
	if res.Code != 0 {
		t.Fatalf("watch: %s", res)
	}
	rows := parseRows(t, res.Stdout)
	var gap *watchRow
	after := map[string]watchRow{}
	for i, r := range rows {
		if r.Type == "GAP" && gap == nil {
			gap = &rows[i]
		}
		if r.AfterGap {
			after[r.Type+" "+r.Name] = r
		}
	}
	t.Logf("etcd compacted at %d; the API server answered: %q", compactedAt, gap.Gap.Error)
	if gap.Gap.From != lastSeen {
		t.Errorf("the GAP should start at the last RV seen, %s: %+v", lastSeen, *gap.Gap)
	}
	if !strings.Contains(gap.Gap.Error, "too old resource version") {
		t.Errorf("the GAP should carry the 410 message: %+v", *gap.Gap)
	}
	if gap.Gap.Changes != 3 {
		t.Errorf("want 3 changes seen after the gap (changed, created, deleted), got %+v", *gap.Gap)
	}
	changed, ok := after["MODIFIED changed"]
	if !ok {
		t.Fatalf("no MODIFIED row for changed after the gap: %v", after)
	}
	if got, _ := changed.field(".data.k"); got != `change "v1"->"v4"` || changed.manager() != "e2e-gap-writer" {
		t.Errorf("changed after the gap: %s by %q, want .data.k v1->v4 by e2e-gap-writer", got, changed.manager())
	}
	if _, ok := after["ADDED created"]; !ok {
		t.Errorf("no ADDED row for created after the gap: %v", after)
	}
	if _, ok := after["DELETED deleted"]; !ok {
		t.Errorf("no DELETED row for deleted after the gap: %v", after)
	}
	for k := range after {
		if strings.HasSuffix(k, " kept") {
			t.Errorf("kept did not change but was reported after the gap: %s", k)
		}
	}

	// Starting from an RV older than the compaction reports the gap at once.
	since := cluster.StartRV(t, "watch", "configmaps", "-n", ns, "-l", "e2e-gap=yes", "-o", "json", "--since", lastSeen, "--max-events", "3")
	res2 := since.Wait(t, 2*time.Minute)
	if res2.Code != 0 {
		t.Fatalf("watch --since: %s", res2)
	}
	rows2 := parseRows(t, res2.Stdout)
	if len(rows2) == 0 || rows2[0].Type != "GAP" || rows2[0].Gap.From != lastSeen {
		t.Fatalf("watch --since %s (compacted) should start with a GAP from it: %s", lastSeen, res2.Stdout)
	}

	// The recording, GAP included, replays to the same rows.
	replay := cluster.RV(t, "watch", "--replay", record, "-o", "json")
	if replay.Code != 0 {
		t.Fatalf("replay: %s", replay)
	}
	if diff := cmp.Diff(eventLines(res.Stdout), eventLines(replay.Stdout)); diff != "" {
		t.Errorf("the replay differs from the live rows (-live +replay):\n%s", diff)
	}
}

func TestWatchReportsFightOverReplicas(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	if _, err := cluster.Clientset(t, "e2e-creator").AppsV1().Deployments(ns).Create(ctx, newDeployment(ns, "contested", 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bg := cluster.StartRV(t, "watch", "deployment/contested", "-n", ns, "-o", "json", "--fight-threshold", "4", "--fail-on", "fight")
	bg.WaitFor(t, time.Minute, "the initial row", isRow("ADDED", "contested"))
	a, b := cluster.Dynamic(t, "e2e-hpa-a"), cluster.Dynamic(t, "e2e-hpa-b")
	for i := 0; i < 6; i++ {
		c, replicas := a, 2
		if i%2 == 1 {
			c, replicas = b, 3
		}
		if _, err := c.Resource(deployGVR).Namespace(ns).Patch(ctx, "contested", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	line := bg.WaitFor(t, time.Minute, "a FIGHT row", isRow("FIGHT", "contested"))
	res := bg.Stop(t)
	if res.Code != 1 {
		t.Errorf("--fail-on-fight should exit 1 after a fight, got %s", res)
	}
	r, _ := parseRow(t, line)
	if r.Fight.Field != ".spec.replicas" || !slices.Equal(r.Fight.Managers, []string{"e2e-hpa-a", "e2e-hpa-b"}) || r.Fight.Flips < 4 {
		t.Errorf("want a fight over .spec.replicas between e2e-hpa-a and e2e-hpa-b, got %+v", *r.Fight)
	}
}

func TestWatchBadInputExits2(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.jsonl")
	if err := os.WriteFile(garbage, []byte("apiVersion: v1\nkind: Pod\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown type", []string{"watch", "nosuchthings"}, `unknown resource type "nosuchthings"`},
		{"malformed --since", []string{"watch", "deployments", "--since", "12ab"}, `--since "12ab" is not a resourceVersion`},
		{"missing replay file", []string{"watch", "--replay", filepath.Join(t.TempDir(), "nope.jsonl")}, "--replay: open"},
		{"unreadable replay file", []string{"watch", "--replay", garbage}, "line 1: not a kubectl rv watch recording"},
		{"no target", []string{"watch"}, "say what to watch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cluster.RV(t, tt.args...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) || r.Stdout != "" {
				t.Errorf("want exit 2, nothing on stdout and %q on stderr, got %s", tt.want, r)
			}
		})
	}
}

// probeWatch says what the API server answers to a watch of the
// namespace's ConfigMaps from rv: the first event's type, or the error.
func probeWatch(t *testing.T, ns, rv string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w, err := cluster.Dynamic(t, "e2e-probe").Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return "error " + err.Error()
	}
	defer w.Stop()
	select {
	case ev := <-w.ResultChan():
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			return fmt.Sprintf("%s %s at RV %s", ev.Type, u.GetName(), u.GetResourceVersion())
		}
		return fmt.Sprintf("%s %v", ev.Type, ev.Object)
	case <-ctx.Done():
		return "nothing within 5s"
	}
}

// BenchmarkWatchKeepsUp measures, against the real control plane, how many
// events per second kubectl rv watch -o json turns into rows: writers patch
// ConfigMaps as fast as the API server takes it for a few seconds while the
// watch runs; the figure is rows printed per second, from the first write
// until the row of the last write appeared. Run it with
// hack/bench-watch.sh (or go test -tags e2e -run XXX -bench WatchKeepsUp
// -benchtime 1x ./test/e2e/).
func BenchmarkWatchKeepsUp(b *testing.B) {
	const (
		objects  = 50
		writers  = 32
		duration = 10 * time.Second
	)
	ns := cluster.Namespace(b)
	ctx := context.Background()
	cs := cluster.Clientset(b, "e2e-bench")
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: ns}, Data: map[string]string{"n": "0"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		bg := cluster.StartRV(b, "watch", "configmaps", "-n", ns, "-o", "json", "--hot-rate", "0")
		bg.WaitFor(b, time.Minute, "the initial rows", func(l string) bool { return strings.Contains(l, `"name":"cm-`+fmt.Sprint(objects-1)+`"`) })
		start := time.Now()
		var mu sync.Mutex
		lastRV, firstRV, writes := "", "", 0
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := cluster.Clientset(b, fmt.Sprintf("e2e-bench-%d", w))
				for n := 0; time.Since(start) < duration; n++ {
					name := fmt.Sprintf("cm-%d", (w+n*writers)%objects)
					cm, err := c.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"n":"%d-%d"}}`, w, n)), metav1.PatchOptions{})
					if err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					writes++
					if firstRV == "" || mustInt(cm.ResourceVersion) < mustInt(firstRV) {
						firstRV = cm.ResourceVersion
					}
					if c, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64); c > mustInt(lastRV) {
						lastRV = cm.ResourceVersion
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		wrote := time.Since(start)
		bg.WaitFor(b, 5*time.Minute, "the row of the last write", func(l string) bool { return strings.Contains(l, `"resourceVersion":"`+lastRV+`"`) })
		caughtUp := time.Since(start)
		res := bg.Stop(b)
		rows := 0
		for _, l := range strings.Split(res.Stdout, "\n") {
			if strings.Contains(l, `"type":"MODIFIED"`) {
				rows++
			}
		}
		if rows != writes {
			b.Errorf("%d writes but %d MODIFIED rows", writes, rows)
		}
		b.ReportMetric(float64(writes)/wrote.Seconds(), "writes/s")
		b.ReportMetric(float64(rows)/caughtUp.Seconds(), "rows/s")
		b.ReportMetric((caughtUp - wrote).Seconds(), "lag-s")

		// Backlog: the same writes, replayed to a watch started --since the
		// RV before them; the API server's watch cache serves them as fast
		// as the command takes them.
		since := cluster.StartRV(b, "watch", "configmaps", "-n", ns, "-o", "json", "--hot-rate", "0", "--since", fmt.Sprint(mustInt(firstRV)-1))
		t0 := time.Now()
		since.WaitFor(b, 5*time.Minute, "the row of the last write", func(l string) bool { return strings.Contains(l, `"resourceVersion":"`+lastRV+`"`) })
		drained := time.Since(t0)
		res = since.Stop(b)
		rows = strings.Count(res.Stdout, `"type":"MODIFIED"`)
		if strings.Contains(res.Stdout, `"type":"GAP"`) {
			b.Logf("the watch cache no longer held the backlog: a GAP was reported")
		}
		b.ReportMetric(float64(rows)/drained.Seconds(), "backlog-rows/s")
	}
}

func mustInt(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

func TestWatchRedactsSecrets(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	cs := cluster.Clientset(t, "e2e-secret-writer")
	const v1, v2 = "hunter2-initial", "hunter2-rotated"
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, StringData: map[string]string{"password": v1}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, extra ...string) (framework.Result, string) {
		record := filepath.Join(t.TempDir(), "secrets.jsonl")
		bg := cluster.StartRV(t, append([]string{"watch", "secrets", "-n", ns, "--diff", "--record", record}, extra...)...)
		bg.WaitFor(t, time.Minute, "the initial row", func(l string) bool { return strings.Contains(l, "secret/db") })
		// The rotation may not be seen if the watch is still starting, so
		// rotate until a MODIFIED row appears.
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.StringData = map[string]string{"password": v2 + t.Name()}
		if _, err := cs.CoreV1().Secrets(ns).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		bg.WaitFor(t, time.Minute, "the rotation", func(l string) bool { return strings.Contains(l, "MODIFIED") })
		res := bg.Stop(t)
		rec, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		return res, string(rec)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	t.Run("redacted", func(t *testing.T) {
		res, rec := run(t)
		for _, secret := range []string{v1, b64(v1), v2, b64(v2 + t.Name())} {
			if strings.Contains(res.Stdout+res.Stderr, secret) || strings.Contains(rec, secret) {
				t.Errorf("secret value %q leaked:\n%s\nrecording:\n%s", secret, res.Stdout, rec)
			}
		}
		if !strings.Contains(res.Stdout, ".data.password sha256:") {
			t.Errorf("the change should show as a change of hashes:\n%s", res.Stdout)
		}
	})
	t.Run("--show-secrets", func(t *testing.T) {
		res, _ := run(t, "--show-secrets")
		// Long values are cut in the table: the start is enough.
		if !strings.Contains(res.Stdout, b64(v2 + t.Name())[:40]) {
			t.Errorf("--show-secrets should show the value:\n%s", res.Stdout)
		}
	})
}

func TestWatchWithoutRightsExits3(t *testing.T) {
	r := cluster.RV(t, "watch", "configmaps", "--context", "rv-nobody", "--for", "5s")
	if r.Code != 3 || !strings.Contains(r.Stderr, "forbidden") || r.Stdout != "" {
		t.Errorf("want exit 3 naming the refusal, got %s", r)
	}
}

func TestWatchCRDAndClusterScopedTypes(t *testing.T) {
	ns := cluster.Namespace(t)
	ctx := context.Background()
	dyn := cluster.Dynamic(t, "e2e-crd-setup")
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	const group = "watch.e2e.kubectl-rv.dev"
	crd := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
		"metadata":{"name":"widgets.`+group+`"},
		"spec":{"group":"`+group+`","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
		"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
		"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true},"status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteCRD(t, crd.GetName()) })
	widgets := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	label := "e2e-watch-" + ns
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "gizmo", "namespace": ns, "labels": map[string]any{"e2e-watch": label}}, "spec": map[string]any{"size": int64(1)}}}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := dyn.Resource(widgets).Namespace(ns).Create(ctx, w, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("creating a Widget: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if _, err := cluster.Clientset(t, "e2e-ns-setup").CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"e2e-watch":"`+label+`"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	bg := cluster.StartRV(t, "watch", "widgets."+group+",namespaces", "-n", ns, "-l", "e2e-watch="+label, "-o", "json")
	bg.WaitFor(t, time.Minute, "the initial widget", isRow("ADDED", "gizmo"))
	bg.WaitFor(t, time.Minute, "the initial namespace", isRow("ADDED", ns))

	spec, err := cluster.Dynamic(t, "e2e-widget-spec").Resource(widgets).Namespace(ns).Patch(ctx, "gizmo", types.MergePatchType, []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, err := cluster.Dynamic(t, "e2e-widget-status").Resource(widgets).Namespace(ns).Patch(ctx, "gizmo", types.MergePatchType, []byte(`{"status":{"ready":true}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	nsObj, err := cluster.Clientset(t, "e2e-ns-labeler").CoreV1().Namespaces().Patch(ctx, ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"gold"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bg.WaitFor(t, time.Minute, "the namespace label", func(l string) bool { return strings.Contains(l, `"resourceVersion":"`+nsObj.ResourceVersion+`"`) })
	bg.WaitFor(t, time.Minute, "the status write", func(l string) bool { return strings.Contains(l, `"resourceVersion":"`+status.GetResourceVersion()+`"`) })
	res := bg.Stop(t)
	rows := parseRows(t, res.Stdout)
	checkWrites(t, rows, "gizmo", []expectation{
		{what: "custom resource spec patch", rv: spec.GetResourceVersion(), manager: "e2e-widget-spec", path: ".spec.size", want: "change 1->2"},
		{what: "custom resource status patch", rv: status.GetResourceVersion(), manager: "e2e-widget-status", subresource: "status", path: ".status.ready", want: "add null->true"},
	})
	checkWrites(t, rows, ns, []expectation{
		{what: "namespace label", rv: nsObj.ResourceVersion, manager: "e2e-ns-labeler", path: ".metadata.labels.tier", want: `add null->"gold"`},
	})
	churn := map[string]string{}
	for _, l := range strings.Split(res.Stdout, "\n") {
		var r struct {
			ResourceVersion string `json:"resourceVersion"`
			Churn           string `json:"churn"`
		}
		if json.Unmarshal([]byte(l), &r) == nil && r.Churn != "" {
			churn[r.ResourceVersion] = r.Churn
		}
	}
	if got := []string{churn[spec.GetResourceVersion()], churn[status.GetResourceVersion()], churn[nsObj.ResourceVersion]}; !slices.Equal(got, []string{"spec", "status", "metadata"}) {
		t.Errorf("churn of the spec, status and label writes: got %v, want [spec status metadata]", got)
	}
}

// TestWatchMissingNamedObjectExits2: a named object that does not exist
// is bad input (docs/exit-codes.md): exit 2, nothing on stdout, the error
// naming it and the fix, also when another named object exists (its row
// is not printed). --wait-for-create waits for it instead.
func TestWatchMissingNamedObjectExits2(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "create", "configmap", "here", "-n", ns)
	fix := ": check the name, or give --wait-for-create to wait for it"
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"TYPE/NAME", []string{"watch", "cm/nothere"}, `configmaps "nothere" not found in namespace ` + ns + fix},
		{"TYPE NAME NAME, one there", []string{"watch", "configmaps", "here", "nothere"}, `configmaps "nothere" not found in namespace ` + ns + fix},
		{"two types", []string{"watch", "cm/here", "deploy/nothere"}, `deployments.apps "nothere" not found in namespace ` + ns + fix},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// --for bounds the wait of a watch that does not exit.
			r := cluster.RV(t, append(tt.args, "-n", ns, "--for", "10s")...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) || strings.Contains(r.Stdout, "configmap/here") {
				t.Errorf("want exit 2, no row and %q on stderr, got %s", tt.want, r)
			}
		})
	}
	b := cluster.StartRV(t, "watch", "cm/later", "-n", ns, "--wait-for-create", "--for", "2m")
	time.Sleep(time.Second)
	cluster.MustKubectl(t, "create", "configmap", "later", "-n", ns)
	b.WaitFor(t, time.Minute, "the created ConfigMap's row", func(l string) bool { return strings.Contains(l, "configmap/later") })
	b.Stop(t)
}
