//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// churnReport mirrors the documented schema of kubectl rv churn -o json
// (docs/churn.md).
type churnReport struct {
	APIVersion     string `json:"apiVersion"`
	Kind           string `json:"kind"`
	ObjectsWatched int    `json:"objectsWatched"`
	TypesWatched   int    `json:"typesWatched"`
	Writes         int    `json:"writes"`
	Objects        []struct {
		churnCounts
		Resource, Namespace, Name string
		Managers                  []struct {
			Manager, Subresource string
			Writes               int
		}
		Explain *churnExplain
	} `json:"objects"`
	Loops []struct {
		Resource, Namespace, Name, Manager, Subresource, Class string
		Writes                                                 int
		PerMinute                                              float64
		Explain                                                *churnExplain
	} `json:"loops"`
	Fights []struct {
		Resource, Object, Namespace, Field string
		Managers                           []string
		Flips                              int
	} `json:"fights"`
	Gaps     []struct{ Resource, From, To string } `json:"gaps"`
	Warnings []string                              `json:"warnings"`
}

type churnCounts struct{ Writes, Spec, Status, Metadata, Other int }

type churnExplain struct {
	Samples       int
	Fields        []struct{ Path string }
	TimestampOnly bool
}

func (e *churnExplain) paths() []string {
	if e == nil {
		return nil
	}
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Path)
	}
	return out
}

func parseChurn(t *testing.T, out string) churnReport {
	t.Helper()
	var rep churnReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("churn -o json: %v\n%s", err, out)
	}
	if rep.APIVersion != "rv.kubectl-rv.dev/v1alpha1" || rep.Kind != "ChurnReport" {
		t.Fatalf("churn -o json: apiVersion %q kind %q", rep.APIVersion, rep.Kind)
	}
	return rep
}

// every runs write every period until ctx is done, in the background; the
// returned wait blocks until it stopped. Errors are logged, not fatal: a
// write racing the end of the test may fail.
func every(ctx context.Context, t *testing.T, period time.Duration, write func(i int) error) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; ; i++ {
			if err := write(i); err != nil && ctx.Err() == nil {
				t.Logf("writer: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return wg.Wait
}

func mergePatch(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// churnScene makes, in a fresh namespace, a hundred quiet ConfigMaps and
// three busy objects, and starts their writers until the test ends:
//   - ConfigMap hot: manager "looper" re-stamps an annotation with the
//     time every 200 ms (a metadata loop);
//   - Spinner spin: "spinner-operator" rewrites the Ready condition's
//     lastTransitionTime through /status every 200 ms (a status loop);
//   - Spinner tug: "scaler-a" and "scaler-b" flip .spec.replicas every
//     250 ms (a fight; each write bumps the generation, so no loop).
func churnScene(t *testing.T) (ns string, spinners schema.GroupVersionResource) {
	ns = cluster.Namespace(t)
	cond := map[string]any{"type": "object", "properties": map[string]any{
		"type": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"},
		"lastTransitionTime": map[string]any{"type": "string"},
	}}
	spinners = lagCRD(t, "Spinner", map[string]any{"type": "object", "properties": map[string]any{
		"conditions": map[string]any{"type": "array", "items": cond},
	}}, true)
	ctx := context.Background()
	cs := cluster.Clientset(t, "e2e-setup")
	for _, name := range append([]string{"hot"}, quietNames()...) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dyn := cluster.Dynamic(t, "e2e-setup").Resource(spinners).Namespace(ns)
	for _, name := range []string{"spin", "tug"} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": spinners.GroupVersion().String(), "kind": "Spinner",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"replicas": int64(1)},
		}}
		if _, err := dyn.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wctx, stop := context.WithCancel(ctx)
	var waits []func()
	t.Cleanup(func() {
		stop()
		for _, w := range waits {
			w()
		}
	})
	waits = append(waits, every(wctx, t, 200*time.Millisecond, func(int) error {
		p := mergePatch(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"stamp": time.Now().UTC().Format(time.RFC3339Nano)}}})
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(wctx, "hot", types.MergePatchType, p, metav1.PatchOptions{FieldManager: "looper"})
		return err
	}))
	waits = append(waits, every(wctx, t, 200*time.Millisecond, func(int) error {
		p := mergePatch(map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339Nano)}}}})
		_, err := dyn.Patch(wctx, "spin", types.MergePatchType, p, metav1.PatchOptions{FieldManager: "spinner-operator"}, "status")
		return err
	}))
	waits = append(waits, every(wctx, t, 250*time.Millisecond, func(i int) error {
		manager := []string{"scaler-a", "scaler-b"}[i%2]
		p := mergePatch(map[string]any{"spec": map[string]any{"replicas": int64(1 + i%2)}})
		_, err := dyn.Patch(wctx, "tug", types.MergePatchType, p, metav1.PatchOptions{FieldManager: manager})
		return err
	}))
	return ns, spinners
}

func quietNames() []string {
	var out []string
	for i := range 100 {
		out = append(out, fmt.Sprintf("quiet-%03d", i))
	}
	return out
}

// TestChurnRanksLoopsAndFightsAndExplains: across every type of the
// namespace, the metadata loop, the status loop and the fight are ranked
// first with their managers and classes, --explain names the changing
// fields, no quiet object is in the findings, and --fail-on any exits 1.
func TestChurnRanksLoopsAndFightsAndExplains(t *testing.T) {
	ns, spinners := churnScene(t)
	r := cluster.RV(t, "churn", "-n", ns, "--for", "15s", "--explain", "3", "--fail-on", "any", "-o", "json")
	if r.Code != 1 {
		t.Fatalf("--fail-on any with loops and a fight: want exit 1, got %s", r)
	}
	rep := parseChurn(t, r.Stdout)
	spin := spinners.Resource + "." + spinners.Group
	t.Logf("watched %d objects of %d types, %d writes; loops %+v; fights %+v", rep.ObjectsWatched, rep.TypesWatched, rep.Writes, rep.Loops, rep.Fights)
	if rep.ObjectsWatched < 103 {
		t.Errorf("watched %d objects, want the 100 quiet ConfigMaps and the busy three at least", rep.ObjectsWatched)
	}

	// The two loops come first, each named and classified.
	if len(rep.Loops) < 2 {
		t.Fatalf("want the metadata loop and the status loop, got %+v", rep.Loops)
	}
	loops := map[string]int{}
	for i, l := range rep.Loops {
		loops[l.Resource+"/"+l.Name+" "+l.Manager+" "+l.Subresource+" "+l.Class] = i
	}
	if i, ok := loops["configmaps/hot looper  metadata"]; !ok || i > 1 {
		t.Errorf("the looper's metadata loop is not ranked first: %+v", rep.Loops)
	}
	if i, ok := loops[spin+"/spin spinner-operator status status"]; !ok || i > 1 {
		t.Errorf("the operator's status loop is not ranked first: %+v", rep.Loops)
	}

	// The fight, with both managers; its writes bump the generation.
	if len(rep.Fights) == 0 || rep.Fights[0].Field != ".spec.replicas" || rep.Fights[0].Object != spin+"/tug" ||
		!slices.Equal(rep.Fights[0].Managers, []string{"scaler-a", "scaler-b"}) {
		t.Errorf("want the fight over tug's .spec.replicas between scaler-a and scaler-b first, got %+v", rep.Fights)
	}
	for _, l := range rep.Loops {
		if l.Name == "tug" {
			t.Errorf("spec writes are no self-loop: %+v", l)
		}
	}

	// The busy three lead the objects, classified; quiet ones are absent.
	if len(rep.Objects) < 3 {
		t.Fatalf("want the three busy objects ranked, got %+v", rep.Objects)
	}
	top := map[string]churnCounts{}
	explained := map[string]*churnExplain{}
	for _, o := range rep.Objects[:3] {
		top[o.Name] = o.churnCounts
		explained[o.Name] = o.Explain
	}
	for name, class := range map[string]func(c churnCounts) int{
		"hot": func(c churnCounts) int { return c.Metadata }, "spin": func(c churnCounts) int { return c.Status }, "tug": func(c churnCounts) int { return c.Spec },
	} {
		c, ok := top[name]
		if !ok || c.Writes < 10 || class(c) != c.Writes {
			t.Errorf("%s: want among the top three with every write of its class, got %+v (top %+v)", name, c, top)
		}
	}
	for _, o := range rep.Objects {
		if strings.HasPrefix(o.Name, "quiet-") {
			t.Errorf("a quiet object is ranked: %+v", o)
		}
	}
	for _, f := range rep.Fights {
		if strings.Contains(f.Object, "quiet-") {
			t.Errorf("a quiet object fights: %+v", f)
		}
	}

	// --explain names the fields that change.
	if e := explained["spin"]; e == nil || !slices.Contains(e.paths(), `.status.conditions[type="Ready"].lastTransitionTime`) || !e.TimestampOnly {
		t.Errorf("spin: want only .status.conditions[type=\"Ready\"].lastTransitionTime changing, got %+v", e)
	}
	if e := explained["hot"]; e == nil || !slices.Equal(e.paths(), []string{".metadata.annotations.stamp"}) {
		t.Errorf("hot: want .metadata.annotations.stamp changing, got %+v", e)
	}
	if e := explained["tug"]; e == nil || !slices.Contains(e.paths(), ".spec.replicas") {
		t.Errorf("tug: want .spec.replicas changing, got %+v", e)
	}
}

// TestChurnTable: the table names the loops, the fight and the explanation.
func TestChurnTable(t *testing.T) {
	ns, _ := churnScene(t)
	r := cluster.RV(t, "churn", "configmaps", "-n", ns, "--for", "6s", "--explain", "1")
	if r.Code != 0 {
		t.Fatalf("churn: %s", r)
	}
	for _, want := range []string{"Self-loops", "configmaps/hot", "looper", "metadata", "only .metadata.annotations.stamp changes"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.Stdout)
		}
	}
	if strings.Contains(r.Stdout, "quiet-") {
		t.Errorf("a quiet object is in the table:\n%s", r.Stdout)
	}
}

// TestChurnPermissions: a read-only user works; a user with a Role on
// ConfigMaps of one namespace gets partial results with warnings (exit 0);
// a user who may read nothing gets exit 3.
func TestChurnPermissions(t *testing.T) {
	ns := cluster.Namespace(t)
	cluster.MustKubectl(t, "create", "configmap", "c", "-n", ns, "--from-literal=k=v")
	r := cluster.RV(t, "churn", "configmaps", "-n", ns, "--context", "rv-readonly", "--for", "3s", "-o", "json")
	if r.Code != 0 || parseChurn(t, r.Stdout).ObjectsWatched < 1 {
		t.Errorf("read-only user: %s", r)
	}

	user := "churn-limited-" + ns
	grantConfigMapReader(t, ns, user)
	r = cluster.RV(t, "churn", "configmaps,secrets", "-n", ns, "--as", user, "--for", "3s", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("a user limited to one namespace's ConfigMaps: want partial results and exit 0: %s", r)
	}
	rep := parseChurn(t, r.Stdout)
	if rep.ObjectsWatched < 1 || !strings.Contains(r.Stderr, "warning: leaving secrets out") || !strings.Contains(r.Stderr, "forbidden") || len(rep.Warnings) == 0 {
		t.Errorf("want ConfigMaps watched and a warning naming secrets as forbidden: %s", r)
	}
	// Every type of the namespace: all but ConfigMaps refused.
	r = cluster.RV(t, "churn", "-n", ns, "--as", user, "--for", "3s", "-o", "json")
	if r.Code != 0 || parseChurn(t, r.Stdout).ObjectsWatched < 1 {
		t.Errorf("every type as %s: %s", user, r)
	}

	r = cluster.RV(t, "churn", "secrets", "-n", ns, "--context", "rv-nobody", "--for", "3s")
	if r.Code != 3 || !strings.Contains(r.Stderr, "forbidden") {
		t.Errorf("rv-nobody: want exit 3 naming the refusal, got %s", r)
	}
}

// grantConfigMapReader lets user get, list and watch the ConfigMaps of ns,
// and nothing else (a Role and RoleBinding named cm-reader).
func grantConfigMapReader(t *testing.T, ns, user string) {
	t.Helper()
	cluster.MustKubectl(t, "create", "role", "cm-reader", "--verb=get,list,watch", "--resource=configmaps", "-n", ns)
	cluster.MustKubectl(t, "create", "rolebinding", "cm-reader", "--role=cm-reader", "--user="+user, "-n", ns)
}

// TestChurnBadFlags: bad input names the flag and exits 2.
func TestChurnBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--fail-on", "always"}, {"--loop-rate", "0"}, {"deploy/web"}, {"nosuchtype"}} {
		r := cluster.RV(t, append([]string{"churn", "--for", "1s"}, args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, strings.TrimPrefix(args[0], "--")) {
			t.Errorf("churn %v: want exit 2 naming it, got %s", args, r)
		}
	}
}

// TestChurnSurvivesAPIServerRestart: a restart mid-run costs a warning and
// a resumed watch, not the run: the writes after the restart are counted,
// and Ctrl-C prints the report.
func TestChurnSurvivesAPIServerRestart(t *testing.T) {
	ns := cluster.Namespace(t)
	cs := cluster.Clientset(t, "e2e-setup")
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		phase  = "before"
		counts = map[string]int{}
	)
	wctx, stop := context.WithCancel(ctx)
	wait := every(wctx, t, 200*time.Millisecond, func(int) error {
		p := mergePatch(map[string]any{"metadata": map[string]any{"annotations": map[string]any{"stamp": time.Now().UTC().Format(time.RFC3339Nano)}}})
		_, err := cs.CoreV1().ConfigMaps(ns).Patch(wctx, "hot", types.MergePatchType, p, metav1.PatchOptions{FieldManager: "looper"})
		if err == nil {
			mu.Lock()
			counts[phase]++
			mu.Unlock()
		}
		return nil
	})
	defer func() { stop(); wait() }()

	bg := cluster.StartRV(t, "churn", "configmaps", "-n", ns, "-o", "json")
	time.Sleep(5 * time.Second)
	cluster.RestartAPIServer(t)
	mu.Lock()
	phase = "after"
	mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := counts["after"]
		mu.Unlock()
		if n >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	wait()
	time.Sleep(2 * time.Second)
	res := bg.Stop(t)
	if res.Code != 0 {
		t.Fatalf("churn across a restart: %s", res)
	}
	rep := parseChurn(t, res.Stdout)
	t.Logf("successful writes %v; stderr:\n%s", counts, res.Stderr)
	if counts["after"] < 20 {
		t.Fatalf("only %d writes succeeded after the restart", counts["after"])
	}
	var hot int
	for _, o := range rep.Objects {
		if o.Name == "hot" {
			hot = o.Writes
		}
	}
	// Without a 410, every write is seen; after one, the writes in the gap
	// count as one.
	if total := counts["before"] + counts["after"]; hot < counts["after"] || len(rep.Gaps) == 0 && hot != total {
		t.Errorf("hot: %d writes counted, want %d (%d after the restart); gaps %+v", hot, total, counts["after"], rep.Gaps)
	}
	if strings.Contains(res.Stderr, "is gone") && (len(rep.Gaps) != 1 || rep.Gaps[0].Resource != "configmaps") {
		t.Errorf("a 410 after the restart: want one gap of configmaps in the report, got %+v", rep.Gaps)
	}
	if !strings.Contains(res.Stderr, "warning: watch configmaps -n "+ns) {
		t.Errorf("no warning about the lost connection: the restart was not exercised?\n%s", res.Stderr)
	}
}

// TestChurnCompletion: churn is offered, its TYPE arguments and --fail-on
// values complete through kubectl.
func TestChurnCompletion(t *testing.T) {
	if cands, _ := complete(t, "chu"); !slices.Contains(cands, "churn") {
		t.Errorf("kubectl rv chu<TAB>: %v", cands)
	}
	if cands, _ := complete(t, "churn", "--fail-on", ""); !slices.Equal(cands, []string{"loop", "fight", "any", "none"}) {
		t.Errorf("kubectl rv churn --fail-on <TAB>: %v", cands)
	}
	if cands, _ := complete(t, "churn", "configm"); !slices.Contains(cands, "configmaps") {
		t.Errorf("kubectl rv churn configm<TAB>: %v", cands)
	}
}
