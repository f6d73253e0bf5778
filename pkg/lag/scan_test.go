package lag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var (
	deployments = NewTarget(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment", true)
	widgets     = NewTarget(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, "Widget", true)
	gadgets     = NewTarget(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}, "Gadget", true)
	secretsT    = NewTarget(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "Secret", true)
	t0          = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// fakeClient serves lists from memory in pages, and watches from fakes.
type fakeClient struct {
	objects map[string][]string // type name -> object JSON
	errs    map[string]error
	// mu guards objects (once a test runs Follow), calls, watchers and
	// watchedFrom.
	mu          sync.Mutex
	calls       []string
	watchers    map[string]*watch.FakeWatcher
	watchedFrom []string
}

func (c *fakeClient) List(_ context.Context, t Target, ns string, opts metav1.ListOptions) (io.ReadCloser, error) {
	c.mu.Lock()
	c.calls = append(c.calls, fmt.Sprintf("%s ns=%q rv=%q continue=%q limit=%d", t.Name(), ns, opts.ResourceVersion, opts.Continue, opts.Limit))
	objs := c.objects[t.Name()]
	c.mu.Unlock()
	if err := c.errs[t.Name()]; err != nil {
		return nil, err
	}
	start := 0
	if opts.Continue != "" {
		fmt.Sscan(opts.Continue, &start)
	}
	end := len(objs)
	if opts.Limit > 0 && start+int(opts.Limit) < end {
		end = start + int(opts.Limit)
	}
	cont := ""
	if end < len(objs) {
		cont = fmt.Sprint(end)
	}
	// Custom resource lists put metadata last, built-in ones first.
	body := `{"apiVersion":"v1","items":[` + strings.Join(objs[start:end], ",") + `],"kind":"List","metadata":{"resourceVersion":"100","continue":"` + cont + `"}}`
	if t.Builtin {
		body = `{"kind":"List","metadata":{"resourceVersion":"100","continue":"` + cont + `"},"items":[` + strings.Join(objs[start:end], ",") + `]}`
	}
	return io.NopCloser(strings.NewReader(body)), nil
}

func (c *fakeClient) Watch(_ context.Context, t Target, ns string, opts metav1.ListOptions) (watch.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watchers == nil {
		c.watchers = map[string]*watch.FakeWatcher{}
	}
	w := watch.NewFakeWithChanSize(10, false)
	c.watchers[t.Name()] = w
	c.watchedFrom = append(c.watchedFrom, opts.ResourceVersion)
	return w, nil
}

func (c *fakeClient) watcher(name string) *watch.FakeWatcher {
	for {
		c.mu.Lock()
		w := c.watchers[name]
		c.mu.Unlock()
		if w != nil {
			return w
		}
		time.Sleep(time.Millisecond)
	}
}

type objSpec struct {
	name, ns  string
	gen, obs  *int64
	conds     []Condition
	specWrite time.Time
	observer  string
	noManaged bool
}

func obj(s objSpec) string {
	md := map[string]any{"name": s.name, "namespace": s.ns, "creationTimestamp": t0.Add(-time.Hour).Format(time.RFC3339)}
	if s.gen != nil {
		md["generation"] = *s.gen
	}
	if !s.noManaged {
		md["managedFields"] = []any{
			map[string]any{"manager": "kubectl", "operation": "Update", "apiVersion": "v1", "time": s.specWrite.Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}},
			map[string]any{"manager": s.observer, "operation": "Update", "apiVersion": "v1", "subresource": "status", "time": t0.Add(-time.Hour).Format(time.RFC3339), "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:status": map[string]any{"f:observedGeneration": map[string]any{}}}},
		}
	}
	st := map[string]any{}
	if s.obs != nil {
		st["observedGeneration"] = *s.obs
	}
	if len(s.conds) > 0 {
		var cs []any
		for _, c := range s.conds {
			cs = append(cs, map[string]any{"type": c.Type, "status": c.Status, "observedGeneration": c.ObservedGeneration})
		}
		st["conditions"] = cs
	}
	b, _ := json.Marshal(map[string]any{"metadata": md, "status": st, "spec": map[string]any{"replicas": 3}})
	return string(b)
}

func testConfig() Config {
	cfg := NewConfig()
	cfg.Now = func() time.Time { return t0 }
	cfg.ChunkSize = 2
	return cfg
}

func TestScanReportsLagAcrossPagesAndTypes(t *testing.T) {
	c := &fakeClient{objects: map[string][]string{
		deployments.Name(): {
			obj(objSpec{name: "a", ns: "ns", gen: i64(3), obs: i64(3), specWrite: t0.Add(-time.Minute), observer: "kube-controller-manager"}),
			obj(objSpec{name: "b", ns: "ns", gen: i64(5), obs: i64(4), specWrite: t0.Add(-2 * time.Minute), observer: "kube-controller-manager"}),
			obj(objSpec{name: "c", ns: "ns", gen: i64(1), specWrite: t0.Add(-10 * time.Second), observer: "kube-controller-manager"}),
		},
		widgets.Name(): {
			obj(objSpec{name: "w1", ns: "ns", gen: i64(2), obs: i64(2), conds: []Condition{{Type: "Ready", Status: "True", ObservedGeneration: 1}}, specWrite: t0.Add(-30 * time.Second), observer: "widget-operator"}),
			obj(objSpec{name: "w2", ns: "ns", gen: i64(2), specWrite: t0.Add(-30 * time.Second), observer: "widget-operator"}),
		},
		gadgets.Name(): {
			obj(objSpec{name: "g1", ns: "ns", gen: i64(1), specWrite: t0.Add(-30 * time.Second), noManaged: true}),
			obj(objSpec{name: "g2", ns: "ns"}),
		},
	}}
	rep, err := Scan(context.Background(), testConfig(), c, []Target{deployments, widgets, gadgets})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name     string
		State    State
		Lag      int64
		Finding  bool
		Age      int64
		Observer string
		Source   string
	}
	var got []row
	for _, it := range rep.Items {
		got = append(got, row{it.Resource + "/" + it.Name, it.State, it.Lag, it.Finding, it.AgeSeconds, it.Observer, it.SpecSource})
	}
	want := []row{
		{"deployments.apps/b", Lagging, 1, true, 120, "kube-controller-manager", "managedFields"},
		{"deployments.apps/c", NeverObserved, 0, true, 10, "kube-controller-manager", "managedFields"},
		{"gadgets.example.com/g1", NeverObserved, 0, false, 3600, "", "creationTimestamp"},
		{"widgets.example.com/w1", Lagging, 1, true, 30, "widget-operator", "managedFields"},
		{"widgets.example.com/w2", NeverObserved, 0, true, 30, "widget-operator", "managedFields"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got)\n%s", diff)
	}
	wantSums := []string{
		"deployments.apps objects=3 current=1 lagging=1 never=1 nogen=0 findings=2 reports=true",
		"widgets.example.com objects=2 current=0 lagging=1 never=1 nogen=0 findings=2 reports=true",
		"gadgets.example.com objects=2 current=0 lagging=0 never=1 nogen=1 findings=0 reports=false",
	}
	var sums []string
	for _, s := range rep.Types {
		sums = append(sums, fmt.Sprintf("%s objects=%d current=%d lagging=%d never=%d nogen=%d findings=%d reports=%v", s.Name(), s.Objects, s.Current, s.Lagging, s.NeverObserved, s.NoGeneration, s.Findings, s.ReportsObservedGeneration))
	}
	if diff := cmp.Diff(wantSums, sums); diff != "" {
		t.Errorf("summaries (-want +got)\n%s", diff)
	}
	if rep.Findings() != 4 {
		t.Errorf("findings = %d, want 4", rep.Findings())
	}
	wantCalls := []string{
		`deployments.apps ns="" rv="" continue="" limit=2`,
		`deployments.apps ns="" rv="" continue="2" limit=2`,
	}
	var depCalls []string
	for _, call := range c.calls {
		if strings.HasPrefix(call, "deployments.apps") {
			depCalls = append(depCalls, call)
		}
	}
	if diff := cmp.Diff(wantCalls, depCalls); diff != "" {
		t.Errorf("list calls (-want +got)\n%s", diff)
	}
	w1 := rep.Items[3]
	wantExpl := []string{
		"kstatus-based tools (Flux, kpt) check only status.observedGeneration and will report this object as Current while its conditions lag",
		"kubectl wait --for=condition=Ready will block until the condition's observedGeneration reaches 2",
	}
	if diff := cmp.Diff(wantExpl, w1.Explanations); diff != "" {
		t.Errorf("explanations (-want +got)\n%s", diff)
	}
}

func TestScanThresholds(t *testing.T) {
	objs := []string{
		obj(objSpec{name: "one-behind-old", gen: i64(5), obs: i64(4), specWrite: t0.Add(-10 * time.Minute), observer: "c"}),
		obj(objSpec{name: "three-behind-new", gen: i64(5), obs: i64(2), specWrite: t0.Add(-10 * time.Second), observer: "c"}),
		obj(objSpec{name: "three-behind-old", gen: i64(5), obs: i64(2), specWrite: t0.Add(-10 * time.Minute), observer: "c"}),
	}
	tests := []struct {
		name   string
		maxLag int64
		minAge time.Duration
		want   []string
	}{
		{"any lag counts", 0, 0, []string{"one-behind-old", "three-behind-new", "three-behind-old"}},
		{"max-lag 1", 1, 0, []string{"three-behind-new", "three-behind-old"}},
		{"min-age 5m", 0, 5 * time.Minute, []string{"one-behind-old", "three-behind-old"}},
		{"both", 1, 5 * time.Minute, []string{"three-behind-old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxLag, cfg.MinAge = tt.maxLag, tt.minAge
			rep, err := Scan(context.Background(), cfg, &fakeClient{objects: map[string][]string{deployments.Name(): objs}}, []Target{deployments})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range rep.Items {
				if it.Finding {
					got = append(got, it.Name)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("findings (-want +got)\n%s", diff)
			}
		})
	}
}

func TestScanForbiddenTypeIsPartial(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("no"))
	c := &fakeClient{
		objects: map[string][]string{deployments.Name(): {obj(objSpec{name: "b", gen: i64(2), obs: i64(1), specWrite: t0, observer: "c"})}},
		errs:    map[string]error{secretsT.Name(): forbidden},
	}
	rep, err := Scan(context.Background(), testConfig(), c, []Target{secretsT, deployments})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || !strings.HasPrefix(rep.Warnings[0], "secrets: ") || !strings.Contains(rep.Warnings[0], "partial") {
		t.Errorf("want one warning about secrets, got %q", rep.Warnings)
	}
	if len(rep.Items) != 1 || rep.Items[0].Name != "b" {
		t.Errorf("want the Deployment still reported, got %+v", rep.Items)
	}

	c.errs[deployments.Name()] = forbidden
	if _, err := Scan(context.Background(), testConfig(), c, []Target{secretsT, deployments}); !errors.Is(err, ErrAllRefused) {
		t.Errorf("every type refused: want ErrAllRefused, got %v", err)
	}
}

func TestScanFailsOnOtherErrors(t *testing.T) {
	c := &fakeClient{errs: map[string]error{deployments.Name(): apierrors.NewInternalError(errors.New("etcd down"))}}
	_, err := Scan(context.Background(), testConfig(), c, []Target{deployments, widgets})
	if err == nil || !strings.Contains(err.Error(), "listing deployments.apps") {
		t.Fatalf("want an error naming the type, got %v", err)
	}
}

func TestScanFromCacheOnlyOnFirstPage(t *testing.T) {
	c := &fakeClient{objects: map[string][]string{deployments.Name(): {obj(objSpec{name: "a"}), obj(objSpec{name: "b"}), obj(objSpec{name: "c"})}}}
	cfg := testConfig()
	cfg.FromCache = true
	if _, err := Scan(context.Background(), cfg, c, []Target{deployments}); err != nil {
		t.Fatal(err)
	}
	want := []string{`deployments.apps ns="" rv="0" continue="" limit=2`, `deployments.apps ns="" rv="" continue="2" limit=2`}
	if diff := cmp.Diff(want, c.calls); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestDecodeListStreams(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
		cont       string
	}{
		{"metadata first", `{"kind":"L","metadata":{"continue":"x","resourceVersion":"5"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`, []string{"a", "b"}, "x"},
		{"metadata last", `{"apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"kind":"L","metadata":{"continue":"y"}}`, []string{"a"}, "y"},
		{"null items", `{"items":null,"metadata":{}}`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			lm, err := decodeList(strings.NewReader(tt.body), false, func(o Object) { got = append(got, o.Name) })
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || lm.Continue != tt.cont {
				t.Errorf("(-want +got)\n%s continue %q", diff, lm.Continue)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"items":{}}`, `{"items":[1]}`, `{"items":[`} {
		if _, err := decodeList(strings.NewReader(bad), false, func(Object) {}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func FuzzDecodeList(f *testing.F) {
	f.Add([]byte(`{"kind":"L","metadata":{"continue":"x"},"items":[{"metadata":{"name":"a","generation":2},"status":{"observedGeneration":1}}]}`))
	f.Add([]byte(`{"items":null}`))
	f.Add([]byte(`{"items":[{"metadata":{}}],"metadata":{"resourceVersion":"1"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = decodeList(bytes.NewReader(data), false, func(o Object) { _ = Classify(o) })
	})
}

func TestFollowUntilClear(t *testing.T) {
	c := &fakeClient{objects: map[string][]string{deployments.Name(): {
		obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(1), specWrite: t0, observer: "kcm"}),
		obj(objSpec{name: "ok", ns: "ns", gen: i64(1), obs: i64(1), specWrite: t0, observer: "kcm"}),
	}}}
	cfg := testConfig()
	rep, err := Scan(context.Background(), cfg, c, []Target{deployments})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var changes []int
	go func() {
		done <- Follow(ctx, cfg, c, []Target{deployments}, rep, true, func(r *Report) error { changes = append(changes, r.Findings()); return nil })
	}()
	w := c.watcher(deployments.Name())
	// Another object starts lagging, then both catch up.
	w.Modify(toUnstructured(t, obj(objSpec{name: "ok", ns: "ns", gen: i64(2), obs: i64(1), specWrite: t0, observer: "kcm"})))
	w.Modify(toUnstructured(t, obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(2), specWrite: t0, observer: "kcm"})))
	w.Modify(toUnstructured(t, obj(objSpec{name: "ok", ns: "ns", gen: i64(2), obs: i64(2), specWrite: t0, observer: "kcm"})))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2, 1, 0}, changes); diff != "" {
		t.Errorf("findings after each change (-want +got)\n%s", diff)
	}
	if s := rep.Types[0]; s.Objects != 2 || s.Current != 2 || s.Lagging != 0 {
		t.Errorf("summary after the watch: %+v", s)
	}
}

// TestFollowRelistsAfterGone checks that lag follows through the one watch
// core: a watch that expires (410) relists the type with lag's own list,
// whose state replaces the old one, reports the lost history to Warnf and
// watches again from the relist's resourceVersion.
func TestFollowRelistsAfterGone(t *testing.T) {
	lagging := obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(1), specWrite: t0, observer: "kcm"})
	c := &fakeClient{objects: map[string][]string{deployments.Name(): {lagging}}}
	cfg := testConfig()
	var notices []string
	cfg.Warnf = func(format string, args ...any) { notices = append(notices, fmt.Sprintf(format, args...)) }
	rep, err := Scan(context.Background(), cfg, c, []Target{deployments})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, cfg, c, []Target{deployments}, rep, true, nil) }()
	w := c.watcher(deployments.Name())
	// The controller catches up while the watch's history is lost.
	c.mu.Lock()
	c.objects[deployments.Name()] = []string{obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(2), specWrite: t0, observer: "kcm"})}
	c.watchers = nil
	c.mu.Unlock()
	w.Error(&apierrors.NewResourceExpired("too old resource version: 100 (150)").ErrStatus)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := rep.Types[0]; s.Objects != 1 || s.Current != 1 || s.Lagging != 0 {
		t.Errorf("summary after the relist: %+v", s)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "history after resourceVersion 100 is gone (too old resource version: 100 (150)); relisting") {
		t.Errorf("want one notice of the lost history, got %q", notices)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if diff := cmp.Diff([]string{"100"}, c.watchedFrom[:1]); diff != "" {
		t.Errorf("watched from (-want +got)\n%s", diff)
	}
}

func TestFollowStopsWithContext(t *testing.T) {
	c := &fakeClient{objects: map[string][]string{deployments.Name(): {obj(objSpec{name: "b", gen: i64(2), obs: i64(1), specWrite: t0, observer: "kcm"})}}}
	cfg := testConfig()
	rep, err := Scan(context.Background(), cfg, c, []Target{deployments})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { c.watcher(deployments.Name()); cancel() }()
	if err := Follow(ctx, cfg, c, []Target{deployments}, rep, true, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestFollowEndsOnAFailedPrint(t *testing.T) {
	c := &fakeClient{objects: map[string][]string{deployments.Name(): {obj(objSpec{name: "b", ns: "ns", gen: i64(2), obs: i64(1), specWrite: t0, observer: "kcm"})}}}
	cfg := testConfig()
	rep, err := Scan(context.Background(), cfg, c, []Target{deployments})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	broken := errors.New("broken pipe")
	done := make(chan error, 1)
	go func() {
		done <- Follow(ctx, cfg, c, []Target{deployments}, rep, false, func(*Report) error { return broken })
	}()
	c.watcher(deployments.Name()).Modify(toUnstructured(t, obj(objSpec{name: "b", ns: "ns", gen: i64(3), obs: i64(1), specWrite: t0, observer: "kcm"})))
	if err := <-done; !errors.Is(err, broken) {
		t.Fatalf("want the print error, got %v", err)
	}
}

func toUnstructured(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	m["apiVersion"], m["kind"] = "apps/v1", "Deployment"
	return &unstructured.Unstructured{Object: m}
}

// BenchmarkDecodeList measures the stream decoder on a page of 500
// Deployment-sized objects, beside decoding the same page into
// unstructured objects (what the dynamic client does).
func BenchmarkDecodeList(b *testing.B) {
	var items []string
	for i := range 500 {
		items = append(items, obj(objSpec{name: fmt.Sprintf("d%d", i), ns: "ns", gen: i64(3), obs: i64(3), specWrite: t0, observer: "kcm"}))
	}
	page := []byte(`{"kind":"List","metadata":{"resourceVersion":"1"},"items":[` + strings.Join(items, ",") + `]}`)
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := decodeList(bytes.NewReader(page), false, func(Object) {}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unstructured", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			var l unstructured.UnstructuredList
			if err := l.UnmarshalJSON(page); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// countingClient records the most lists in flight at once.
type countingClient struct {
	fakeClient
	// mu guards inFlight and peak.
	mu             sync.Mutex
	inFlight, peak int
}

func (c *countingClient) List(ctx context.Context, t Target, ns string, opts metav1.ListOptions) (io.ReadCloser, error) {
	c.mu.Lock()
	c.inFlight++
	c.peak = max(c.peak, c.inFlight)
	c.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	defer func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}()
	return c.fakeClient.List(ctx, t, ns, opts)
}

func TestScanBoundsConcurrency(t *testing.T) {
	var targets []Target
	for i := range 6 {
		targets = append(targets, NewTarget(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: fmt.Sprintf("things%d", i)}, "Thing", true))
	}
	c := &countingClient{}
	cfg := testConfig()
	cfg.Concurrency = 2
	rep, err := Scan(context.Background(), cfg, c, targets)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Types) != 6 || rep.Types[5].Resource != "things5" {
		t.Errorf("want the six types in order, got %+v", rep.Types)
	}
	if c.peak > 2 {
		t.Errorf("%d lists at once, want at most 2", c.peak)
	}
}
