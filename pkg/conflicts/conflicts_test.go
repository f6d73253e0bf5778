package conflicts

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// ev builds an event at t0+ms: who is "user/manager" (manager may be
// empty), obj is "resource/name" in namespace ns (group coordination.k8s.io
// for leases).
func ev(ms int, who, verb, obj string, code int) audit.Event {
	user, fm, _ := strings.Cut(who, "/")
	res, name, _ := strings.Cut(obj, "/")
	e := audit.Event{Stage: audit.StageResponseComplete, Verb: verb, Username: user, UserAgent: user + "-agent",
		RequestURI: "/api/v1/namespaces/ns/" + res + "/" + name,
		ObjectRef:  audit.ObjectRef{Resource: res, Namespace: "ns", Name: name},
		Code:       code, RequestReceived: t0.Add(time.Duration(ms) * time.Millisecond),
		StageTimestamp: t0.Add(time.Duration(ms)*time.Millisecond + 500*time.Microsecond)}
	if fm != "" {
		e.RequestURI += "?fieldManager=" + fm
	}
	if res == "leases" {
		e.ObjectRef.APIGroup = "coordination.k8s.io"
	}
	if code == 409 {
		e.Message = "Operation cannot be fulfilled: the object has been modified"
	}
	return e
}

func with(e audit.Event, f func(*audit.Event)) audit.Event { f(&e); return e }

func report(cfg Config, evs ...audit.Event) *Report {
	c := NewCollector(cfg)
	for i := range evs {
		c.Add(&evs[i])
	}
	return c.Report()
}

func writer(rep *Report, name string) WriterStats {
	for _, w := range rep.Writers {
		if w.Writer.String() == name {
			return w
		}
	}
	return WriterStats{}
}

func TestContentionRetryAndWinner(t *testing.T) {
	rep := report(NewConfig(),
		ev(0, "a/ma", "get", "configmaps/c", 200),
		ev(1, "b/mb", "get", "configmaps/c", 200),
		ev(4, "b/mb", "update", "configmaps/c", 200),
		ev(5, "a/ma", "update", "configmaps/c", 409),
		ev(6, "a/ma", "get", "configmaps/c", 200),
		ev(8, "a/ma", "update", "configmaps/c", 200),
	)
	a := writer(rep, "a/ma")
	want := WriterStats{Writer: audit.Writer{User: "a", FieldManager: "ma"}, UserAgent: "a-agent",
		Tally:        Tally{Attempts: 2, Conflicts: 1, Successes: 1, RetryChains: 1},
		ConflictRate: 0.5, Objects: 1, LostTo: []Count{{"b/mb", 1}}, Causes: []CauseCount{{Contention, 1}},
		// Each request takes 0.5 ms (ev): the 409 at 5 ms, the retry at 8 ms.
		ConflictSeconds: 0.0005, RetrySeconds: 0.0005}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("writer a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]CauseStats{{Cause: Contention, Count: 1, Fix: Fix(Contention), Writers: 1}}, rep.Causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	o := rep.Objects[0]
	if o.Attempts != 3 || o.Conflicts != 1 || o.Writers != 2 || o.WorstWriter != "a/ma" {
		t.Errorf("object = %+v", o)
	}
}

func TestGiveUpAndStaleOwnCache(t *testing.T) {
	cfg := NewConfig()
	cfg.RetryWindow = 100 * time.Millisecond
	cfg.Object = &ObjectKey{Resource: "configmap", Name: "c"}
	// The writer re-reads before its last attempt only. The blind re-send
	// at 350, 50 ms after its 409 where its pace is 290 ms, is a retry; the
	// one at 600 comes after the window: a new chain.
	rep := report(cfg,
		ev(0, "s/stale", "get", "configmaps/c", 200),
		ev(10, "s/stale", "update", "configmaps/c", 200),
		ev(300, "s/stale", "update", "configmaps/c", 409),
		ev(350, "s/stale", "update", "configmaps/c", 409),
		ev(600, "s/stale", "update", "configmaps/c", 409),
		ev(620, "s/stale", "get", "configmaps/c", 200),
		ev(650, "s/stale", "update", "configmaps/c", 409),
	)
	s := writer(rep, "s/stale")
	if diff := cmp.Diff(Tally{Attempts: 5, Conflicts: 4, Successes: 1, RetryChains: 2, GiveUps: 2}, s.Tally); diff != "" {
		t.Errorf("tally (-want +got):\n%s", diff)
	}
	// No success came between the re-read and the last 409.
	if diff := cmp.Diff([]CauseCount{{StaleOwnCache, 3}, {Unknown, 1}}, s.Causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	var steps []string
	for _, a := range rep.Timeline {
		steps = append(steps, strings.Join([]string{a.Verb, string(a.Cause), map[bool]string{true: "give-up"}[a.GiveUp]}, ","))
	}
	want := []string{"update,,", "update,stale-own-cache,", "update,stale-own-cache,give-up", "update,stale-own-cache,", "update,unknown,give-up"}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if last := rep.Timeline[4]; last.Chain != 3 || last.Step != 2 || !last.Reread {
		t.Errorf("last attempt chain %d step %d reread %v, want 3 2 true", last.Chain, last.Step, last.Reread)
	}
}

func TestCauses(t *testing.T) {
	quota := with(ev(1, "q", "create", "pods/p1", 409), func(e *audit.Event) { e.DetailsKind = "resourcequotas" })
	apply := with(ev(2, "x/apply", "patch", "configmaps/c", 409), func(e *audit.Event) { e.Message = "Apply failed with 1 conflict: conflict with \"y\": .data.a" })
	lease := ev(3, "cand-2", "update", "leases/leader", 409)
	del := ev(4, "d", "delete", "configmaps/c", 409)
	exists := with(ev(5, "e", "create", "configmaps/c", 409), func(e *audit.Event) { e.Message = `configmaps "c" already exists` })
	lonely := ev(6, "u", "update", "configmaps/other", 409)
	generated := with(ev(7, "g", "create", "pods/", 409), func(e *audit.Event) { e.DetailsKind = "resourcequotas" })
	rep := report(NewConfig(), quota, apply, lease, del, exists, lonely, generated)
	got := map[Cause]int{}
	for _, c := range rep.Causes {
		got[c.Cause] = c.Count
		if c.Fix == "" {
			t.Errorf("cause %s has no fix", c.Cause)
		}
	}
	want := map[Cause]int{Quota: 2, ApplyConflict: 1, LeaseContention: 1, DeletePrecondition: 1, AlreadyExists: 1, Unknown: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Count{{`manager y`, 1}}, writer(rep, "x/apply").LostTo); diff != "" {
		t.Errorf("apply lost to (-want +got):\n%s", diff)
	}
}

func TestExactWinnersByResourceVersion(t *testing.T) {
	rr := func(e audit.Event, pre, res string) audit.Event {
		e.ObjectRef.ResourceVersion, e.ResponseRV = pre, res
		return e
	}
	// No read of a's is in the log: by time, a would lose to c alone (the
	// last success); by resourceVersion it lost to b and c.
	rep := report(NewConfig(),
		rr(ev(1, "b", "update", "configmaps/c", 200), "10", "11"),
		rr(ev(2, "c", "update", "configmaps/c", 200), "11", "12"),
		rr(ev(3, "a", "update", "configmaps/c", 409), "10", ""),
	)
	if diff := cmp.Diff([]Count{{"b/b-agent", 1}, {"c/c-agent", 1}}, writer(rep, "a/a-agent").LostTo); diff != "" {
		t.Errorf("lostTo (-want +got):\n%s", diff)
	}
}

func TestWindowAndPods(t *testing.T) {
	cfg := NewConfig()
	cfg.Since, cfg.Until = t0.Add(2*time.Millisecond), t0.Add(4*time.Millisecond)
	p1 := with(ev(2, "sa/m", "update", "configmaps/c", 200), func(e *audit.Event) { e.PodName = "p1" })
	p2 := with(ev(3, "sa/m", "update", "configmaps/c", 200), func(e *audit.Event) { e.PodName = "p2" })
	rep := report(cfg, ev(1, "x", "update", "configmaps/c", 200), p1, p2, ev(4, "y", "update", "configmaps/c", 200))
	var names []string
	for _, w := range rep.Writers {
		names = append(names, w.Writer.String())
	}
	if diff := cmp.Diff([]string{"sa/m@p1", "sa/m@p2"}, names); diff != "" {
		t.Errorf("writers (-want +got):\n%s", diff)
	}
}

func TestAnalyzeDecodes(t *testing.T) {
	line := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","stage":"ResponseComplete","verb":"update","requestURI":"/api/v1/namespaces/ns/configmaps/c?fieldManager=w","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"c"},"responseStatus":{"code":409},"requestReceivedTimestamp":"2026-11-24T10:00:00Z","stageTimestamp":"2026-11-24T10:00:00.001Z"}`
	src := []audit.Source{audit.NewSource("a.log", strings.NewReader(line+"\n")), audit.NewSource("b.log", strings.NewReader(line+"\n"+line[:20]))}
	rep, err := Analyze(context.Background(), src, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Conflicts != 2 || rep.Input.Truncated != 1 || rep.Input.Events != 2 {
		t.Errorf("summary %+v input %+v", rep.Summary, rep.Input)
	}
	cfg := NewConfig()
	cfg.Strict = true
	src[1] = audit.NewSource("b.log", strings.NewReader(line+"\n"+line[:20]))
	if _, err := Analyze(context.Background(), src[1:], cfg); err == nil || !strings.Contains(err.Error(), "b.log:2") {
		t.Errorf("strict: %v", err)
	}
}

// TestWinnerLoggedAfterLoser: the winner committed first but its audit
// event completed after the loser's 409.
func TestWinnerLoggedAfterLoser(t *testing.T) {
	win := ev(2, "b", "update", "configmaps/c", 200)
	win.StageTimestamp = t0.Add(7 * time.Millisecond)
	rep := report(NewConfig(),
		ev(0, "a", "get", "configmaps/c", 200),
		win,
		ev(3, "a", "update", "configmaps/c", 409),
	)
	if diff := cmp.Diff([]CauseCount{{Contention, 1}}, writer(rep, "a/a-agent").Causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
}

// BenchmarkAnalyze decodes and analyses a 20,000-event Metadata-level log
// of 40 writers on 500 ConfigMaps (hack/genaudit writes larger ones).
func BenchmarkAnalyze(b *testing.B) {
	var buf strings.Builder
	tmpl := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/c%d?fieldManager=w%d","verb":"%s","user":{"username":"system:serviceaccount:ns:w%d","groups":["system:serviceaccounts","system:authenticated"],"extra":{"authentication.kubernetes.io/pod-name":["w%d-6f9c"]}},"sourceIPs":["10.0.0.1"],"userAgent":"manager/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"ns","name":"c%d","apiVersion":"v1","resourceVersion":"%d"},"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":"2026-11-24T10:%02d:%02d.%06dZ","stageTimestamp":"2026-11-24T10:%02d:%02d.%06dZ","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}` + "\n"
	for i := 0; i < 20000; i++ {
		verb, code := []string{"get", "update", "update", "patch"}[i%4], []int{200, 200, 409, 200, 200}[i%5]
		s, us := (i/1000)%60, (i%1000)*1000
		fmt.Fprintf(&buf, tmpl, i%500, i%40, verb, i%40, i%40, i%500, i, code, i/60000, s, us, i/60000, s, us+500)
	}
	log := buf.String()
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(context.Background(), []audit.Source{audit.NewSource("bench.log", strings.NewReader(log))}, NewConfig()); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHottestTimeline(t *testing.T) {
	cfg := NewConfig()
	cfg.HottestTimeline = true
	rep := report(cfg,
		ev(1, "a", "update", "configmaps/cold", 200),
		ev(2, "a", "update", "configmaps/hot", 200),
		ev(3, "b", "update", "configmaps/hot", 409),
	)
	if rep.TimelineObject == nil || rep.TimelineObject.Name != "hot" || len(rep.Timeline) != 2 {
		t.Errorf("timeline of %v: %+v", rep.TimelineObject, rep.Timeline)
	}
}

// TestReportKeepsEveryRowMost409sFirst: the report lists every object and
// writer, however many, those with 409s first even when quiet ones have
// more attempts; the printers choose how many to show (--top).
func TestReportKeepsEveryRowMost409sFirst(t *testing.T) {
	var evs []audit.Event
	for i := range 30 {
		for j := range 5 {
			evs = append(evs, ev(100*i+j, fmt.Sprintf("q/quiet-%02d", i), "update", fmt.Sprintf("configmaps/quiet-%02d", i), 200))
		}
	}
	evs = append(evs, ev(5000, "h/hot", "update", "configmaps/hot", 200), ev(5001, "h/hot", "update", "configmaps/hot", 409))
	rep := report(NewConfig(), evs...)
	if len(rep.Objects) != 31 || len(rep.Writers) != 31 || rep.Summary.Objects != 31 || rep.Summary.Writers != 31 {
		t.Fatalf("%d objects and %d writers, summary %d and %d: want all 31 of each", len(rep.Objects), len(rep.Writers), rep.Summary.Objects, rep.Summary.Writers)
	}
	if o, w := rep.Objects[0], rep.Writers[0]; o.Object.Name != "hot" || o.Conflicts != 1 || w.Writer.String() != "h/hot" {
		t.Errorf("first object %s, first writer %s: want the one with the 409", o.Object, w.Writer)
	}
	for i := 1; i < len(rep.Objects); i++ {
		if a, b := rep.Objects[i-1], rep.Objects[i]; a.Conflicts < b.Conflicts || a.Conflicts == b.Conflicts && a.Attempts < b.Attempts {
			t.Errorf("object %d (%s: %d 409s, %d attempts) before %s (%d, %d)", i-1, a.Object, a.Conflicts, a.Attempts, b.Object, b.Conflicts, b.Attempts)
		}
	}
}

// TestCauseObjects: with Config.CauseObjects, each cause lists its 409s
// per object and writer, the most first, and they add up to the cause's
// count; without it, none.
func TestCauseObjects(t *testing.T) {
	evs := []audit.Event{
		ev(0, "a/ma", "get", "configmaps/c", 200),
		ev(1, "b/mb", "get", "configmaps/c", 200),
		ev(2, "b/mb", "update", "configmaps/c", 200),
		ev(3, "a/ma", "update", "configmaps/c", 409),
		ev(10, "s/stale", "get", "configmaps/d", 200),
		ev(11, "s/stale", "update", "configmaps/d", 200),
		ev(20, "s/stale", "update", "configmaps/d", 409),
		ev(30, "s/stale", "update", "configmaps/d", 409),
	}
	cfg := NewConfig()
	cfg.CauseObjects = true
	got := map[Cause][]CauseObject{}
	for _, c := range report(cfg, evs...).Causes {
		got[c.Cause] = c.Objects
		n := 0
		for _, o := range c.Objects {
			n += o.Count
		}
		if n != c.Count {
			t.Errorf("%s: the objects' 409s add up to %d, the cause has %d", c.Cause, n, c.Count)
		}
	}
	want := map[Cause][]CauseObject{
		Contention:    {{Object: ObjectKey{Resource: "configmaps", Namespace: "ns", Name: "c"}, Writer: "a/ma", Count: 1}},
		StaleOwnCache: {{Object: ObjectKey{Resource: "configmaps", Namespace: "ns", Name: "d"}, Writer: "s/stale", Count: 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects per cause (-want +got):\n%s", diff)
	}
	for _, c := range report(NewConfig(), evs...).Causes {
		if c.Objects != nil {
			t.Errorf("%s lists objects without Config.CauseObjects: %+v", c.Cause, c.Objects)
		}
	}
}
