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
