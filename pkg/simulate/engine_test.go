package simulate

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// TestTwoClientsSequence pins the classic sequence the README promises.
func TestTwoClientsSequence(t *testing.T) {
	sc, err := scenario.LoadBuiltin("two-clients")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	type s struct {
		Actor, Verb, Sent, RV string
		Code                  int
	}
	var got []s
	for _, st := range res.Steps {
		if st.Verb == "RETRY" {
			continue
		}
		got = append(got, s{st.Actor, st.Verb, st.SentRV, st.RV, st.Code})
	}
	want := []s{
		{"a", "GET", "", "100", 200},
		{"b", "GET", "", "100", 200},
		{"b", "PUT", "100", "101", 200},
		{"a", "PUT", "100", "", 409},
		{"a", "GET", "", "101", 200},
		{"a", "PUT", "101", "102", 200},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// TestBackoffMatchesRetryOnConflict checks the number of calls and the
// sleeps of client-go's DefaultRetry and DefaultBackoff (jitter aside).
func TestBackoffMatchesRetryOnConflict(t *testing.T) {
	cases := []struct {
		policy string
		want   []time.Duration // the sleeps before calls 2..Steps, unjittered
	}{
		{scenario.RetryNone, nil},
		{scenario.RetryDefaultRetry, []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}},
		{scenario.RetryDefaultBackoff, []time.Duration{10 * time.Millisecond, 50 * time.Millisecond, 250 * time.Millisecond}},
	}
	for _, c := range cases {
		t.Run(c.policy, func(t *testing.T) {
			b := newBackoff(scenario.Retry{Policy: c.policy})
			b.jitter = 0
			var got []time.Duration
			for {
				d, ok := b.step(rand.New(rand.NewPCG(1, 2)))
				if !ok {
					break
				}
				got = append(got, d)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("sleeps (-want +got):\n%s", d)
			}
		})
	}
}

// TestLostUpdatesAreAttributed checks the counter vectors: unconditional
// writers lose increments, RV-checked writers lose none, and the per-actor
// losses add up to the invariant's.
func TestLostUpdatesAreAttributed(t *testing.T) {
	sc, err := scenario.LoadBuiltin("lost-update")
	if err != nil {
		t.Fatal(err)
	}
	f := false
	res, err := Run(context.Background(), sc, Config{Trace: &f})
	if err != nil {
		t.Fatal(err)
	}
	lost := map[string]int{}
	for _, a := range res.Actors {
		lost[a.Name] = a.LostUpdates
	}
	total := 0
	for _, inv := range res.Invariants {
		total += inv.Lost
	}
	if lost["rv-checked"] != 0 || lost["unconditional"] == 0 || lost["merge-patch"] == 0 {
		t.Errorf("unexpected losses: %v", lost)
	}
	if sum := lost["rv-checked"] + lost["unconditional"] + lost["merge-patch"]; sum != total {
		t.Errorf("per-actor losses %v do not add up to the invariants' %d", lost, total)
	}
}

// TestLeaderElectionCountsOperations: every lease write a candidate sends
// is one operation of one attempt, so the OPS column is never below OK (it
// read 0 next to OK 15).
func TestLeaderElectionCountsOperations(t *testing.T) {
	sc, err := scenario.LoadBuiltin("leader-election")
	if err != nil {
		t.Fatal(err)
	}
	f := false
	res, err := Run(context.Background(), sc, Config{Trace: &f})
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	for _, a := range res.Actors {
		writes += a.Attempts
		if a.Operations != a.Attempts || a.Successes > a.Operations {
			t.Errorf("%s: %d operations, %d attempts, %d successes: want one operation per attempt", a.Name, a.Operations, a.Attempts, a.Successes)
		}
	}
	if writes == 0 {
		t.Fatal("no candidate wrote the lease")
	}
}

// TestSetPathCopiesOnWrite checks that a writer's change to what it read
// with GetShared never reaches the server's cache before it is written.
func TestSetPathCopiesOnWrite(t *testing.T) {
	ctx := context.Background()
	sc, err := scenario.LoadBuiltin("json-patch-index")
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEngine(sc, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.setup(ctx); err != nil {
		t.Fatal(err)
	}
	gvk := e.objects[0].gvk
	shared, err := e.srv.GetShared(ctx, gvk, "default", "unguarded")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"spec.template.spec.containers[1].image", "spec.template.spec.containers[name=app].image", "spec.replicas", "metadata.labels.x"} {
		path, err := scenario.ParsePath(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := managedfields.SetPath(shared.Object, path, "changed"); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	fresh, err := e.srv.Get(ctx, gvk, "default", "unguarded")
	if err != nil {
		t.Fatal(err)
	}
	img, _ := managedfields.GetPath(fresh.Object, mustPath(t, "spec.template.spec.containers[1].image"))
	app, _ := managedfields.GetPath(fresh.Object, mustPath(t, "spec.template.spec.containers[name=app].image"))
	if img != "sidecar:1" || app != "app:1" || fresh.GetLabels()["x"] != "" {
		t.Errorf("a change to a shared read leaked into the server: %v %v %v", img, app, fresh.GetLabels())
	}
}

func mustPath(t *testing.T, p string) fieldpath.Path {
	t.Helper()
	path, err := scenario.ParsePath(p)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

const counterHead = `apiVersion: rv.kubectl-rv.dev/v1alpha1
kind: Scenario
name: t
duration: 5s
objects:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: counter, namespace: default}
  data: {count: "0"}
invariants:
- equals:
    target: {apiVersion: v1, kind: ConfigMap, namespace: default, name: counter}
    path: data.count
    value: "0"
actors:
- name: a
  target: {apiVersion: v1, kind: ConfigMap, namespace: default, name: counter}
  rate: 2
`

// TestChangeThatCannotApplyIsRefused: an increment of a missing ConfigMap
// key would write an integer into string data, and every write of the run
// would fail; the run is refused before it starts.
func TestChangeThatCannotApplyIsRefused(t *testing.T) {
	sc, err := scenario.Parse([]byte(counterHead+"  method: update\n  change: {increment: data.nope}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), sc, Config{})
	want := `invalid scenario: actor "a": change data.nope would write 1, which a ConfigMap cannot hold: .data.nope: expected string`
	if !errors.Is(err, ErrScenario) || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

// TestNothingWrittenNeverHolds: when every write fails (here a JSON patch
// test that never matches, so every write is a 422), the invariants whose
// values still match must not be reported as held.
func TestNothingWrittenNeverHolds(t *testing.T) {
	sc, err := scenario.Parse([]byte(counterHead+"  method: json-patch-test\n  change: {increment: data.count, test: {path: data.count, value: \"7\"}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := false
	res, err := Run(context.Background(), sc, Config{Trace: &f})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Actors[0]; a.Successes != 0 || a.Invalid == 0 {
		t.Fatalf("want every write to fail with 422, got %+v", a)
	}
	if len(res.Invariants) != 2 {
		t.Fatalf("want the counter and the equals invariants, got %+v", res.Invariants)
	}
	for _, inv := range res.Invariants {
		if inv.Held || inv.Reason != ReasonNothingWritten {
			t.Errorf("%s: held %v reason %q, want not held because %q", inv.Name, inv.Held, inv.Reason, ReasonNothingWritten)
		}
	}
}

// TestClientApplyActor: a GitOps tool's kubectl apply (client side) keeps
// setting data.mode while a controller sets it too. Its first patch adds
// the missing annotation; each later one is a three-way patch from its
// own annotation that overwrites the controller's value: every write of
// both changes the object, none conflicts.
func TestClientApplyActor(t *testing.T) {
	sc, err := scenario.Parse([]byte(`apiVersion: rv.kubectl-rv.dev/v1alpha1
kind: Scenario
name: t
duration: 10s
objects:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cm, namespace: default}
  data: {mode: start}
actors:
- name: gitops
  fieldManager: kubectl-client-side-apply
  target: {apiVersion: v1, kind: ConfigMap, namespace: default, name: cm}
  method: client-apply
  change: {set: data.mode, value: gitops}
  thinkTime: 1s
  writes: 3
- name: ctrl
  target: {apiVersion: v1, kind: ConfigMap, namespace: default, name: cm}
  method: update
  change: {set: data.mode, value: ctrl}
  thinkTime: 1s
  start: 500ms
  writes: 2
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr := true
	res, err := Run(context.Background(), sc, Config{Trace: &tr})
	if err != nil {
		t.Fatal(err)
	}
	type s struct {
		Actor, Verb, Outcome string
		Annotation           bool
	}
	var got []s
	for _, st := range res.Steps {
		if st.Verb == "GET" || st.Verb == "RETRY" || st.Actor == "" {
			continue
		}
		got = append(got, s{st.Actor, st.Verb, st.Outcome, strings.Contains(st.Note, "no last-applied annotation")})
	}
	want := []s{
		{"gitops", "PATCH client-apply", "ok", true},
		{"ctrl", "PUT", "ok", false},
		{"gitops", "PATCH client-apply", "ok", false},
		{"ctrl", "PUT", "ok", false},
		{"gitops", "PATCH client-apply", "ok", false},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}
