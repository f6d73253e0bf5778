package conflicts

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"

	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// rmwRounds is the audit log of writers read-modify-writing one ConfigMap
// with RetryOnConflict, all at once, every 400ms: in each round one wins,
// the others get a 409, re-read and try again (the winner rotates).
func rmwRounds(writers, rounds int) []audit.Event {
	var evs []audit.Event
	rv := 100
	for r := 0; r < rounds; r++ {
		ms := r * 400
		left := make([]int, writers)
		for i := range left {
			left[i] = (i + r) % writers
		}
		for len(left) > 0 {
			for _, w := range left {
				evs = append(evs, with(ev(ms, fmt.Sprintf("u%d", w), "get", "configmaps/hot", 200), func(e *audit.Event) { e.UserAgent = fmt.Sprintf("u%d-agent", w) }))
				ms++
			}
			for i, w := range left {
				code := 409
				if i == 0 {
					code = 200
				}
				evs = append(evs, with(ev(ms, fmt.Sprintf("u%d/rmw-%d", w, w), "update", "configmaps/hot", code), func(e *audit.Event) {
					e.ObjectRef.ResourceVersion = fmt.Sprint(rv)
				}))
				ms++
			}
			rv++
			left = left[1:]
		}
	}
	return evs
}

func hottest(evs ...audit.Event) *Report {
	cfg := NewConfig()
	cfg.HottestTimeline = true
	return report(cfg, evs...)
}

// TestScenarioReproducesWriters: the written scenario parses with
// simulate's own loader, names the log's writers, and running it gives
// each of them 409s.
func TestScenarioReproducesWriters(t *testing.T) {
	rep := hottest(rmwRounds(4, 8)...)
	b, sc, err := BuildScenario(ScenarioInput{Report: rep, Origin: []string{"audit.log"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "# Written by kubectl rv conflicts --scenario from the audit log audit.log:") {
		t.Errorf("no header comment:\n%s", b)
	}
	parsed, err := scenario.Parse(b, "scenario.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	res, err := simulate.Run(context.Background(), parsed, simulate.Config{Rules: serverrules.Rules{}})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(res.Actors) != 4 || len(sc.Actors) != 4 {
		t.Fatalf("%d actors, want 4\n%s", len(res.Actors), b)
	}
	for i, a := range res.Actors {
		want := fmt.Sprintf("rmw-%d", i)
		if a.Name != want || a.FieldManager != want || a.Method != "update" || a.Retry != scenario.RetryDefaultRetry {
			t.Errorf("actor %d: %s manager %s method %s retry %s, want %s with update and DefaultRetry", i, a.Name, a.FieldManager, a.Method, a.Retry, want)
		}
		if a.Conflicts == 0 {
			t.Errorf("actor %s: no 409 in the simulation, the log had %d\n%s", a.Name, writer(rep, fmt.Sprintf("u%d/%s", i, want)).Conflicts, b)
		}
	}
}

func TestScenarioMethods(t *testing.T) {
	apply := func(ms int, who, force string, code int) audit.Event {
		return with(ev(ms, who, "patch", "configmaps/cm", code), func(e *audit.Event) {
			e.RequestURI += "&force=" + force
			if code == 409 {
				e.Message = `Apply failed with 1 conflict: conflict with "ctrl": .data.count`
			}
		})
	}
	rep := hottest(
		with(ev(0, "ctrl/ctrl", "update", "configmaps/cm", 200), func(e *audit.Event) { e.ObjectRef.ResourceVersion = "7" }),
		ev(1, "lww/lww", "update", "configmaps/cm", 200),
		with(ev(5, "st/st", "update", "configmaps/cm", 200), func(e *audit.Event) { e.ObjectRef.Subresource = "status" }),
		apply(10, "gitops/gitops", "false", 409),
		apply(20, "gitops/gitops", "false", 409),
		apply(30, "boss/boss", "true", 200),
		ev(40, "mp/mp", "patch", "configmaps/cm", 200),
		ev(50, "maker/maker", "create", "configmaps/cm", 409),
	)
	hints, err := PatchHints(context.Background(), nil, ObjectKey{}, NewConfig())
	if err != nil || len(hints) != 0 {
		t.Fatalf("no sources: %v %v", hints, err)
	}
	// The hints as PatchHints reads them from the request URIs.
	hints = map[string]PatchHint{"gitops/gitops": {Apply: 2}, "boss/boss": {ApplyForce: 1}, "mp/mp": {Other: 1}}
	_, sc, err := BuildScenario(ScenarioInput{Report: rep, Hints: hints})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range sc.Actors {
		got[a.Name] = a.Method
	}
	want := map[string]string{"ctrl": "update", "lww": "update-unconditional", "st": "update-status", "gitops": "apply", "boss": "apply-force", "mp": "merge-patch"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("methods %v, want %v (the create is left out)", got, want)
	}
}

func TestPatchHints(t *testing.T) {
	line := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"patch","requestURI":"/api/v1/namespaces/ns/configmaps/c?fieldManager=w&force=%s","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"c"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-24T10:00:00Z","stageTimestamp":"2026-11-24T10:00:00.001Z"}`
	log := fmt.Sprintf(line, "true") + "\n" + fmt.Sprintf(line, "false") + "\n" + strings.Replace(fmt.Sprintf(line, "x"), "&force=x", "", 1) + "\n" +
		strings.Replace(fmt.Sprintf(line, "true"), `"name":"c"`, `"name":"other"`, 1) + "\n"
	p := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(p, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := audit.Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj := ObjectKey{Resource: "configmaps", Namespace: "ns", Name: "c"}
	hints, err := PatchHints(context.Background(), src, obj, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if want := (PatchHint{Apply: 1, ApplyForce: 1, Other: 1}); hints["u/w"] != want {
		t.Errorf("hints %+v, want u/w: %+v", hints, want)
	}
	cfg := NewConfig()
	cfg.Until = t0
	if hints, err = PatchHints(context.Background(), src, obj, cfg); err != nil || len(hints) != 0 {
		t.Errorf("--until before every event: hints %+v, %v; want none", hints, err)
	}
}

func TestScenarioNothingToReproduce(t *testing.T) {
	for name, rep := range map[string]*Report{
		"no timeline":      {},
		"only creates":     hottest(ev(0, "a/a", "create", "configmaps/x", 409), ev(1, "b/b", "create", "configmaps/x", 201)),
		"no report at all": nil,
	} {
		t.Run(name, func(t *testing.T) {
			if b, _, err := BuildScenario(ScenarioInput{Report: rep}); !errors.Is(err, ErrNoContention) || b != nil {
				t.Errorf("err %v, %d bytes: want ErrNoContention and nothing", err, len(b))
			}
		})
	}
}

// TestScenarioHostileNames: writer names from the log cannot break out
// of their comment or make an invalid actor.
func TestScenarioHostileNames(t *testing.T) {
	rep := hottest(
		ev(0, "evil\nactors: []\x1b[31m/Evil Manager!\nx", "update", "configmaps/c", 200),
		ev(1, "b/", "update", "configmaps/c", 409),
	)
	b, sc, err := BuildScenario(ScenarioInput{Report: rep, Origin: []string{"a\nb.log"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(sc.Actors) != 2 || strings.Contains(string(b), "\x1b") {
		t.Errorf("%d actors, want 2; escape in file: %v\n%s", len(sc.Actors), strings.Contains(string(b), "\x1b"), b)
	}
}

// FuzzBuildScenario: whatever the log's user, field manager, pod and
// object names, the scenario written parses with simulate's loader.
func FuzzBuildScenario(f *testing.F) {
	f.Add("u", "m", "p", "c", "update")
	f.Add("evil\nactors: []", "Evil Manager!", "#", "x.y", "patch")
	f.Add("", "", "", "", "update")
	f.Fuzz(func(t *testing.T, user, manager, pod, name, verb string) {
		mk := func(ms, code int) audit.Event {
			e := ev(ms, "x", verb, "configmaps/"+name, code)
			e.Username, e.PodName = user, pod
			e.RequestURI = "/api/v1/namespaces/ns/configmaps/x?fieldManager=" + url.QueryEscape(manager)
			return e
		}
		rep := hottest(mk(0, 200), mk(1, 409))
		b, _, err := BuildScenario(ScenarioInput{Report: rep, Origin: []string{name}})
		if errors.Is(err, ErrNoContention) {
			return
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
	})
}

// applyEv is an apply of configmaps/cm by who: force as its URI sends it
// ("" sends none, as client-go does without Force), and a 409 naming the
// owners of .data.count in the message.
func applyEv(ms int, who, force string, code int, owners string) audit.Event {
	return with(ev(ms, who, "patch", "configmaps/cm", code), func(e *audit.Event) {
		if force != "" {
			e.RequestURI += "&force=" + force
		}
		if code == 409 {
			e.Message = "Apply failed with 1 conflict: conflict with " + owners
		}
	})
}

// simulateScenario builds the scenario of rep and runs it.
func simulateScenario(t *testing.T, rep *Report, hints map[string]PatchHint) ([]byte, *simulate.Result) {
	t.Helper()
	b, sc, err := BuildScenario(ScenarioInput{Report: rep, Hints: hints})
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(context.Background(), sc, simulate.Config{Rules: serverrules.Rules{}})
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return b, res
}

// TestScenarioKeepsMethodsForceAndCounter: an updater increments while
// team-b applies without force, meets 409s naming the updater, then
// applies with force. The scenario has team-b's applies with and without
// force as two actors, the updater setting the field team-b lost to it,
// no claim that every writer increments, and its run gives team-b
// APPLY-409s and no invariant a negative loss.
func TestScenarioKeepsMethodsForceAndCounter(t *testing.T) {
	var evs []audit.Event
	for i := 0; i < 6; i++ {
		ms := i * 1000
		evs = append(evs,
			with(ev(ms, "a/team-a", "update", "configmaps/cm", 200), func(e *audit.Event) { e.ObjectRef.ResourceVersion = fmt.Sprint(10 + 2*i) }),
			applyEv(ms+100, "b/team-b", "", 409, `"team-a" using v1: .data.count`),
			applyEv(ms+200, "b/team-b", "true", 200, ""))
	}
	rep := hottest(evs...)
	b, res := simulateScenario(t, rep, map[string]PatchHint{"b/team-b": {ApplyForce: 6, Other: 6}})
	methods := map[string]string{}
	for _, a := range res.Actors {
		methods[a.Name] = a.Method
	}
	want := map[string]string{"team-a": "update", "team-b": "apply", "team-b-apply-force": "apply-force"}
	if diff := cmp.Diff(want, methods); diff != "" {
		t.Errorf("actors and methods (-want +got):\n%s\n%s", diff, b)
	}
	if strings.Contains(string(b), "Every writer increments") || !strings.Contains(string(b), "set: data.count") {
		t.Errorf("team-b applies literal values at data.count, and so must team-a, whom it lost the field to; the file says otherwise:\n%s", b)
	}
	for _, a := range res.Actors {
		if a.Name == "team-b" && a.ApplyConflicts == 0 {
			t.Errorf("team-b met apply conflicts in the log, none in the run\n%s", b)
		}
		if a.Name != "team-b" && a.ApplyConflicts > 0 {
			t.Errorf("%s met no apply conflict in the log, %d in the run\n%s", a.Name, a.ApplyConflicts, b)
		}
	}
	for _, inv := range res.Invariants {
		if inv.Lost < 0 {
			t.Errorf("invariant %s lost %d: a writer set the counter others increment\n%s", inv.Name, inv.Lost, b)
		}
	}
}

// TestScenarioTwoOwners: m1 and m2 apply keys a and b (client-go sends
// no force parameter; m1's apply created the object), then m3 applies
// both and meets a 409 naming both as Apply entries. All three are
// appliers in the scenario, and only m3 meets APPLY-409s in its run.
func TestScenarioTwoOwners(t *testing.T) {
	rep := hottest(
		applyEv(0, "u/m1", "", 201, ""),
		applyEv(40, "u/m2", "", 200, ""),
		applyEv(50, "u/m3", "", 409, "\"m1\":\n- .data.a\nconflicts with \"m2\":\n- .data.b"),
	)
	b, res := simulateScenario(t, rep, map[string]PatchHint{"u/m1": {Other: 1}, "u/m2": {Other: 1}, "u/m3": {Other: 1}})
	got := map[string]string{}
	for _, a := range res.Actors {
		got[a.Name] = fmt.Sprintf("%s 409:%d apply-409:%d", a.Method, a.Conflicts, a.ApplyConflicts)
		if a.Name == "m3" && a.ApplyConflicts > 0 {
			got[a.Name] = "apply 409:0 apply-409:some"
		}
	}
	want := map[string]string{"m1": "apply 409:0 apply-409:0", "m2": "apply 409:0 apply-409:0", "m3": "apply 409:0 apply-409:some"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s\n%s", diff, b)
	}
}
