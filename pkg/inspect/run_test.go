package inspect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// fakeSource answers lists and watches from scripts: the n-th list returns
// lists[n] (the last one again when they run out), the n-th watch is fed by
// watches[n] and then stays open (an open, silent watch when they run out).
type fakeSource struct {
	lists   []*unstructured.UnstructuredList
	watches []func(w *watch.FakeWatcher)

	// mu guards the counters and the resourceVersions watched from.
	mu          sync.Mutex
	listCalls   int
	watchCalls  int
	watchedFrom []string
}

var _ follow.Source = (*fakeSource)(nil)

func (f *fakeSource) List(_ context.Context, _ follow.Target, _ metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.lists[min(f.listCalls, len(f.lists)-1)]
	f.listCalls++
	return l.DeepCopy(), nil
}

func (f *fakeSource) Watch(_ context.Context, _ follow.Target, opts metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := watch.NewFakeWithChanSize(100, false)
	if f.watchCalls < len(f.watches) {
		f.watches[f.watchCalls](w)
	}
	f.watchCalls++
	f.watchedFrom = append(f.watchedFrom, opts.ResourceVersion)
	return w, nil
}

func deployList(rv string, items ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList"}}
	l.SetResourceVersion(rv)
	for _, u := range items {
		l.Items = append(l.Items, *u)
	}
	return l
}

// replicas returns the Deployment web in shop at rv with n replicas, written
// by manager at second sec.
func replicas(rv string, n int64, manager string, sec int) *unstructured.Unstructured {
	u := fakeDeploy("web", rv)
	u.SetUID("uid-web")
	u.SetGeneration(n)
	_ = unstructured.SetNestedField(u.Object, n, "spec", "replicas")
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "apps/v1",
		Time:       &metav1.Time{Time: t0.Add(time.Duration(sec) * time.Second)},
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)},
	}})
	return u
}

// recordingSink keeps what it receives; rows, when set, is told of each row.
type recordingSink struct {
	events   []Event
	warnings []string
	empty    []string
	rows     chan Event
	fail     error
}

func (s *recordingSink) Event(e Event) error {
	if s.fail != nil {
		return s.fail
	}
	s.events = append(s.events, e)
	if s.rows != nil {
		s.rows <- e
	}
	return nil
}

func (s *recordingSink) Warning(msg string)        { s.warnings = append(s.warnings, msg) }
func (s *recordingSink) Empty(resource, rv string) { s.empty = append(s.empty, resource+"@"+rv) }

// rowString is a row as a test compares it.
func rowString(e Event) string {
	s := string(e.Type) + " " + e.Object + " " + e.ResourceVersion
	if e.Writer != nil {
		s += " by " + e.Writer.String()
	}
	for _, c := range e.Fields {
		s += " " + c.String()
	}
	if e.Initial {
		s += " (initial)"
	}
	if e.AfterGap {
		s += " (after gap)"
	}
	return s
}

func rowStrings(es []Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = rowString(e)
	}
	return out
}

func testConfig() Config {
	cfg := NewConfig()
	cfg.Stream.Targets = []follow.Target{{Resource: deployGVR, Namespace: "shop"}}
	cfg.Stream.MinBackoff, cfg.Stream.MaxBackoff = time.Millisecond, 2*time.Millisecond
	cfg.Stream.Now = func() time.Time { return t0 }
	cfg.Tracker.HotRate = 0
	return cfg
}

func runWithin(t *testing.T, ctx context.Context, src follow.Source, cfg Config, sink Sink) (Result, error) {
	t.Helper()
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Run(ctx, src, cfg, sink)
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	return Result{}, nil
}

// TestRunRelistsAfterGone: an ERROR 410 event ends the watch; the engine
// relists, reports a GAP naming the lost range and the change the relist
// shows, then watches again from the relist's resourceVersion.
func TestRunRelistsAfterGone(t *testing.T) {
	src := &fakeSource{
		lists: []*unstructured.UnstructuredList{
			deployList("10", replicas("9", 1, "kubectl", 0)),
			deployList("20", replicas("18", 3, "scaler", 5)),
		},
		watches: []func(*watch.FakeWatcher){
			func(w *watch.FakeWatcher) {
				w.Modify(replicas("11", 2, "scaler", 1))
				w.Error(&apierrors.NewResourceExpired("too old resource version: 11 (15)").ErrStatus)
			},
		},
	}
	cfg := testConfig()
	cfg.MaxEvents = 3
	sink := &recordingSink{}
	res, err := runWithin(t, context.Background(), src, cfg, sink)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{
		"ADDED deployment.apps/web 9 by ? first sight (initial)",
		"MODIFIED deployment.apps/web 11 by scaler .spec.replicas 1->2",
		"GAP deployments.apps 20",
		"MODIFIED deployment.apps/web 18 by scaler .spec.replicas 2->3 (after gap)",
	}
	if d := cmp.Diff(want, rowStrings(sink.events)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	gap := sink.events[2].Gap
	if gap == nil || gap.From != "11" || gap.To != "20" || gap.Changes != 1 || !strings.Contains(gap.Error, "too old") {
		t.Errorf("gap: %+v", gap)
	}
	if len(res.Summary.Gaps) != 1 || res.Summary.Writes != 2 {
		t.Errorf("summary: %d gaps, %d writes; want 1 gap, 2 writes", len(res.Summary.Gaps), res.Summary.Writes)
	}
	if len(sink.warnings) != 1 || !strings.Contains(sink.warnings[0], "history after resourceVersion 11 is gone") {
		t.Errorf("warnings: %q", sink.warnings)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.listCalls != 2 {
		t.Errorf("%d lists, want 2 (the initial list and the relist)", src.listCalls)
	}
	if d := cmp.Diff([]string{"10"}, src.watchedFrom[:1]); d != "" {
		t.Errorf("watched from (-want +got):\n%s", d)
	}
}

// TestRunStopsAtMaxEvents: the watch ends after MaxEvents counted rows,
// not counting the initial list, although the server has more to send.
func TestRunStopsAtMaxEvents(t *testing.T) {
	src := &fakeSource{
		lists: []*unstructured.UnstructuredList{deployList("10", replicas("9", 1, "kubectl", 0))},
		watches: []func(*watch.FakeWatcher){func(w *watch.FakeWatcher) {
			for i := range 5 {
				w.Modify(replicas(fmt.Sprint(11+i), int64(2+i), "scaler", 1+i))
			}
		}},
	}
	cfg := testConfig()
	cfg.MaxEvents = 2
	sink := &recordingSink{}
	res, err := runWithin(t, context.Background(), src, cfg, sink)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := cmp.Diff([]string{"9", "11", "12"}, rvs(sink.events)); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if res.Summary.Writes != 2 {
		t.Errorf("summary writes %d, want 2", res.Summary.Writes)
	}
}

func rvs(es []Event) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ResourceVersion
	}
	return out
}

// TestRunEndsWhenContextIsDone: cancelling ends an open watch without an
// error, with the summary of what was seen.
func TestRunEndsWhenContextIsDone(t *testing.T) {
	src := &fakeSource{
		lists:   []*unstructured.UnstructuredList{deployList("10", replicas("9", 1, "kubectl", 0))},
		watches: []func(*watch.FakeWatcher){func(w *watch.FakeWatcher) { w.Modify(replicas("11", 2, "scaler", 1)) }},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sink := &recordingSink{rows: make(chan Event, 10)}
	go func() {
		for e := range sink.rows {
			if e.ResourceVersion == "11" {
				cancel()
			}
		}
	}()
	res, err := runWithin(t, ctx, src, testConfig(), sink)
	close(sink.rows)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Summary.Writes != 1 || !res.Summary.Ended.Equal(t0) {
		t.Errorf("summary: %d writes ending %s; want 1 write ending %s", res.Summary.Writes, res.Summary.Ended, t0)
	}
}

// TestRunRecordsAndReplays: the recording holds the header and every
// received event, and replaying it gives the live rows and summary.
func TestRunRecordsAndReplays(t *testing.T) {
	src := &fakeSource{
		lists: []*unstructured.UnstructuredList{deployList("10", replicas("9", 1, "kubectl", 0)), deployList("20", replicas("18", 3, "scaler", 5))},
		watches: []func(*watch.FakeWatcher){func(w *watch.FakeWatcher) {
			w.Modify(replicas("11", 2, "scaler", 1))
			w.Action(watch.Bookmark, fakeDeploy("", "12"))
			w.Error(&apierrors.NewResourceExpired("too old resource version: 12 (15)").ErrStatus)
		}},
	}
	var buf bytes.Buffer
	cfg := testConfig()
	cfg.MaxEvents, cfg.Record, cfg.AllNamespaces = 3, &buf, true
	live := &recordingSink{}
	res, err := runWithin(t, context.Background(), src, cfg, live)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	recorded := bytes.Clone(buf.Bytes())
	rec, err := ReadRecording(&buf)
	if err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	want := RecordingHeader{APIVersion: APIVersion, Kind: RecordingKind, Format: RecordingFormat, Started: t0, Targets: []string{"deployments.apps -n shop"}, SecretsRedacted: true, AllNamespaces: true}
	if d := cmp.Diff(want, rec.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	var types []string
	for _, ev := range rec.Events {
		types = append(types, string(ev.Type))
	}
	if d := cmp.Diff([]string{"LIST", "SYNCED", "MODIFIED", "BOOKMARK", "LIST", "SYNCED"}, types); d != "" {
		t.Errorf("recorded events (-want +got):\n%s", d)
	}
	replayed := &recordingSink{}
	rres, err := Replay(rec, cfg, replayed)
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	if d := cmp.Diff(rowStrings(live.events), rowStrings(replayed.events)); d != "" {
		t.Errorf("replayed rows differ (-live +replay):\n%s", d)
	}
	if res.Summary.Writes != rres.Summary.Writes || len(rres.Summary.Gaps) != 1 {
		t.Errorf("replayed summary: %+v", rres.Summary)
	}
	if len(replayed.empty) != 0 || len(replayed.warnings) != 0 {
		t.Errorf("a replay has no notices: %q %q", replayed.empty, replayed.warnings)
	}
	// Event by event, from the reader: the same rows and summary.
	if h, err := CheckRecording(bytes.NewReader(recorded)); err != nil || h.Targets[0] != "deployments.apps -n shop" {
		t.Fatalf("CheckRecording: %+v, %v", h, err)
	}
	rr, err := NewRecordingReader(bytes.NewReader(recorded))
	if err != nil {
		t.Fatal(err)
	}
	streamed := &recordingSink{}
	sres, err := ReplayFrom(rr, cfg, streamed)
	if err != nil {
		t.Fatalf("ReplayFrom: %v", err)
	}
	if d := cmp.Diff(rowStrings(replayed.events), rowStrings(streamed.events)); d != "" {
		t.Errorf("rows replayed from the reader differ (-Replay +ReplayFrom):\n%s", d)
	}
	if d := cmp.Diff(rres.Summary, sres.Summary); d != "" {
		t.Errorf("summary replayed from the reader differs (-Replay +ReplayFrom):\n%s", d)
	}
	// A bad line is found before anything is replayed.
	bad := append(bytes.Clone(recorded), []byte(`{"type":"NOPE","time":"2026-11-21T15:00:00Z","resource":"v1/pods"}`+"\n")...)
	var re *RecordingError
	if _, err := CheckRecording(bytes.NewReader(bad)); !errors.As(err, &re) || re.Line != 8 {
		t.Errorf("CheckRecording of a bad 8th line: want a RecordingError at line 8, got %v", err)
	}
}

// TestRunNotices: an empty initial list is told to the sink, and a sink
// error ends the watch with that error.
func TestRunNotices(t *testing.T) {
	src := &fakeSource{
		lists:   []*unstructured.UnstructuredList{deployList("10")},
		watches: []func(*watch.FakeWatcher){func(w *watch.FakeWatcher) { w.Add(replicas("11", 1, "kubectl", 1)) }},
	}
	broken := errors.New("broken pipe")
	sink := &recordingSink{fail: broken}
	_, err := runWithin(t, context.Background(), src, testConfig(), sink)
	if !errors.Is(err, broken) {
		t.Errorf("Run: %v, want the sink's error", err)
	}
	if d := cmp.Diff([]string{"deployments.apps@10"}, sink.empty); d != "" {
		t.Errorf("empty notices (-want +got):\n%s", d)
	}
}

// TestRunFailsOnFirstContact: a target that cannot be listed at all ends
// the watch with an error wrapping follow.ErrInitialContact.
func TestRunFailsOnFirstContact(t *testing.T) {
	src := refusingSource{apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("no"))}
	_, err := runWithin(t, context.Background(), src, testConfig(), &recordingSink{})
	if !errors.Is(err, follow.ErrInitialContact) || !apierrors.IsForbidden(err) {
		t.Errorf("Run: %v, want a Forbidden follow.ErrInitialContact", err)
	}
}

type refusingSource struct{ err error }

func (s refusingSource) List(context.Context, follow.Target, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return nil, s.err
}

func (s refusingSource) Watch(context.Context, follow.Target, metav1.ListOptions) (watch.Interface, error) {
	return nil, s.err
}

var deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

func fakeDeploy(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": "shop", "resourceVersion": rv}}}
}
