package load

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// ev builds an event received at t0+ms that took 1ms+ms%7 ms: user sends
// verb about obj ("resource/name", namespace ns; "resource/" is the
// collection) and gets code.
func ev(ms int, user, verb, obj string, code int) audit.Event {
	res, name, _ := strings.Cut(obj, "/")
	at := t0.Add(time.Duration(ms) * time.Millisecond)
	return audit.Event{AuditID: fmt.Sprintf("id-%s-%d-%s", user, ms, verb), Stage: audit.StageResponseComplete,
		Verb: verb, Username: user, UserAgent: user + "/v1", RequestURI: "/api/v1/namespaces/ns/" + obj,
		ObjectRef: audit.ObjectRef{Resource: res, Namespace: "ns", Name: name}, Code: code,
		RequestReceived: at, StageTimestamp: at.Add(time.Duration(1+ms%7) * time.Millisecond)}
}

func with(e audit.Event, f func(*audit.Event)) audit.Event { f(&e); return e }

func count(cfg Config, evs ...audit.Event) *Report {
	c := newCounter(cfg)
	for i := range evs {
		c.add(&evs[i])
	}
	return c.report()
}

func TestTopGroupsByNestedKeys(t *testing.T) {
	var evs []audit.Event
	for i := range 6 {
		evs = append(evs, ev(i*10_000, "alice", "get", "configmaps/a", 200))
	}
	evs = append(evs, ev(5, "alice", "get", "configmaps/b", 404), ev(60_000, "bob", "list", "configmaps/", 200),
		ev(30_000, "alice", "update", "configmaps/a", 409))
	rep := count(Config{By: []Key{User, Verb}}, evs...)
	if rep.Total != 9 || rep.Window.Minutes != 1 {
		t.Fatalf("total %d over %g minutes, want 9 over 1", rep.Total, rep.Window.Minutes)
	}
	g := rep.Groups[0]
	want := Group{Key: map[Key]string{User: "alice", Verb: "get"}, Count: 7, Share: 7.0 / 9, PerMinute: 7,
		P50Ms: 5, P99Ms: 7, First: t0, Last: t0.Add(50 * time.Second),
		Objects:  []ObjectCount{{Object: "configmaps/ns/a", Count: 6}, {Object: "configmaps/ns/b", Count: 1}},
		Statuses: []StatusCount{{Code: 200, Count: 6}, {Code: 404, Count: 1}}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("alice's gets (-want +got):\n%s", diff)
	}
	if len(rep.Groups) != 3 || rep.Groups[2].Key[User] != "bob" || rep.Groups[2].Objects[0].Object != "configmaps/ns/*" {
		t.Errorf("groups %+v: want alice/get, alice/update, bob's list of the collection last", rep.Groups)
	}
}

func TestTopKeys(t *testing.T) {
	e := with(ev(0, "system:serviceaccount:ns:ctl", "patch", "deployments/web", 200), func(e *audit.Event) {
		e.ObjectRef.APIGroup, e.ObjectRef.Subresource, e.PodName = "apps", "status", "ctl-0"
		e.RequestURI = "/apis/apps/v1/namespaces/ns/deployments/web/status?fieldManager=ctl"
	})
	rep := count(Config{By: Keys}, e)
	want := map[Key]string{User: "system:serviceaccount:ns:ctl", Writer: "system:serviceaccount:ns:ctl/ctl@ctl-0",
		Verb: "patch", Resource: "deployments.apps", Status: "200", Namespace: "ns", Object: "deployments.apps/ns/web"}
	if diff := cmp.Diff(want, rep.Groups[0].Key); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if rep.Groups[0].Objects != nil {
		t.Errorf("objects %v: a table by object names none", rep.Groups[0].Objects)
	}
	// A value from the log may hold the NUL that joins a group's values.
	nul := with(e, func(e *audit.Event) { e.Username, e.Verb = "a\x00b", "c" })
	other := with(e, func(e *audit.Event) { e.Username, e.Verb, e.AuditID = "a", "b\x00c", "other" })
	rep = count(Config{By: []Key{User, Verb}}, nul, other)
	if len(rep.Groups) != 2 || rep.Groups[0].Key[User] != "a" || rep.Groups[1].Key[User] != "a\x00b" || rep.Groups[1].Key[Verb] != "c" {
		t.Errorf("values holding NUL: groups %+v, want two, each with its own values", rep.Groups)
	}
	health := audit.Event{Verb: "get", RequestURI: "/readyz?verbose", Code: 200, RequestReceived: t0}
	if got := count(Config{By: []Key{Object}}, health).Groups[0].Key[Object]; got != "/readyz" {
		t.Errorf("a request about no resource is %q, want its path /readyz", got)
	}
}

func TestTopCountsAnEventOnceAndInScope(t *testing.T) {
	a := ev(0, "alice", "get", "configmaps/a", 200)
	b := ev(2_000, "bob", "get", "configmaps/a", 200)
	cfg := Config{Window: audit.Window{Until: t0.Add(time.Second)}, Keep: func(e *audit.Event) bool { return e.Username != "carol" }}
	rep := count(cfg, a, a, b, ev(10, "carol", "get", "configmaps/a", 200))
	if rep.Total != 1 || rep.Input.Duplicates != 1 {
		t.Errorf("total %d, duplicates %d: want alice's get once (bob's is after --until, carol's filtered)", rep.Total, rep.Input.Duplicates)
	}
	if rep.Window.From != t0 || rep.Window.To != t0.Add(time.Second) {
		t.Errorf("window %v–%v: want the first request to --until", rep.Window.From, rep.Window.To)
	}
}

func TestWastedWrites(t *testing.T) {
	rr := func(e audit.Event, pre, got string) audit.Event {
		return with(e, func(e *audit.Event) { e.ObjectRef.ResourceVersion, e.ResponseRV = pre, got })
	}
	exists := with(ev(1, "w", "create", "configmaps/a", 409), func(e *audit.Event) { e.Reason = "AlreadyExists" })
	dry := with(ev(2, "w", "create", "configmaps/a", 409), func(e *audit.Event) { e.RequestURI += "?dryRun=All"; e.Reason = "AlreadyExists" })
	rep := count(Config{},
		exists, dry,
		rr(ev(3, "w", "update", "configmaps/a", 200), "7", "7"),  // no-op, by its precondition
		rr(ev(4, "w", "update", "configmaps/a", 200), "7", "8"),  // changed
		rr(ev(10, "r", "get", "configmaps/a", 200), "", "8"),     // shows 8
		rr(ev(20, "w", "patch", "configmaps/a", 200), "", "8"),   // no-op: 8 was seen before
		rr(ev(30, "w", "patch", "configmaps/a", 200), "", "9"),   // changed
		rr(ev(40, "w", "patch", "configmaps/new", 200), "", "3"), // nothing seen: unknown
		ev(50, "w", "update", "configmaps/a", 409),
		ev(60, "m", "update", "configmaps/a", 200), // Metadata level
	)
	two := 2
	want := []Wasted{
		{Writer: "w/w", Attempts: 7, AlreadyExists: 1, NoOps: &two, NoOpUnknown: 1, Lost: 1, Wasted: 4, Share: 4.0 / 7},
		{Writer: "m/m", Attempts: 1, NoOpUnknown: 1},
	}
	if diff := cmp.Diff(want, rep.Wasted, cmpopts.IgnoreUnexported(Wasted{})); diff != "" {
		t.Errorf("wasted (-want +got):\n%s", diff)
	}
}

func TestHotReadFoundAboveTheRateOnly(t *testing.T) {
	loop := func(user string, every time.Duration, n int) []audit.Event {
		var out []audit.Event
		for i := range n {
			out = append(out, ev(int(time.Duration(i)*every/time.Millisecond), user, "get", "configmaps/a", 200))
		}
		return out
	}
	evs := append(loop("fast", 200*time.Millisecond, 150), loop("slow", time.Second, 30)...)
	rep := count(Config{Hot: Hot{Rate: 2, For: 8 * time.Second}}, evs...)
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v: want fast's loop only", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Kind != HotRead || f.User != "fast" || f.Object != "configmaps/ns/a" || f.Count != 150 {
		t.Errorf("finding %+v: want fast's 150 gets of configmaps/ns/a", f)
	}
	if f.From != t0 || f.To != t0.Add(29800*time.Millisecond) || math.Abs(f.PerSecond-150/29.8) > 0.001 {
		t.Errorf("finding from %v to %v at %g/s: want its first to its last get, 29.8 s at 5/s", f.From, f.To, f.PerSecond)
	}
}

func TestWastedWriteLoopFound(t *testing.T) {
	var evs []audit.Event
	for i := range 40 {
		evs = append(evs, with(ev(i*500, "kw", "create", "configmaps/a", 409), func(e *audit.Event) { e.Reason = "AlreadyExists" }))
		evs = append(evs, ev(i*500+1, "ok", "create", fmt.Sprintf("configmaps/n%d", i), 201))
	}
	rep := count(Config{Hot: Hot{Rate: 1, For: 4 * time.Second}}, evs...)
	if len(rep.Findings) != 1 || rep.Findings[0].Kind != WastedWrite || rep.Findings[0].User != "kw" || rep.Findings[0].Count != 40 {
		t.Errorf("findings %+v: want kw's 40 creates of an existing name", rep.Findings)
	}
}

func TestLatencyQuantilesWithinTheHistogramsError(t *testing.T) {
	var l latency
	for i := 1; i <= 10_000; i++ {
		l.add(time.Duration(i) * time.Microsecond)
	}
	for _, q := range []float64{0.5, 0.99} {
		got, want := float64(l.quantile(q)), q*10_000*float64(time.Microsecond)
		if math.Abs(got-want)/want > 0.05 {
			t.Errorf("quantile %g = %v, want %v within 5%%", q, time.Duration(got), time.Duration(want))
		}
	}
}

func TestSpaceSavingHoldsTheBusiestObject(t *testing.T) {
	var s spaceSaving
	for i := range 2_000 {
		o := fmt.Appendf(nil, "o%d", i)
		s.add(func() []byte { return o }, audit.KeyHash{}.With(string(o)))
		if i%4 == 0 {
			s.add(func() []byte { return []byte("hot") }, audit.KeyHash{}.With("hot"))
		}
	}
	top := s.top(1)
	if top[0].Object != "hot" || top[0].Count-top[0].Error > 500 || top[0].Count < 500 {
		t.Errorf("top %+v: want hot, counted 500 within its error", top)
	}
}

func TestAnalyzeReadsALog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	line := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"%d","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/a","verb":"get","user":{"username":"u"},"objectRef":{"resource":"configmaps","namespace":"ns","name":"a","apiVersion":"v1"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-24T10:00:0%dZ","stageTimestamp":"2026-11-24T10:00:0%dZ"}` + "\n"
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, line, i, i, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	srcs, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(context.Background(), srcs, Config{By: []Key{Object}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != 3 || rep.Groups[0].Key[Object] != "configmaps/ns/a" || rep.Input.Events != 3 {
		t.Errorf("report %+v: want 3 gets of configmaps/ns/a", rep)
	}
}

func TestHotLoopNeedsToLastAndEachRunIsOneFinding(t *testing.T) {
	var evs []audit.Event
	get := func(ms int) { evs = append(evs, ev(ms, "c", "get", "configmaps/a", 200)) }
	for i := range 40 { // a burst: 40 gets in 2 s
		get(i * 50)
	}
	for _, start := range []int{60_000, 130_000} { // then two loops of 10 s at 5/s
		for i := range 50 {
			get(start + i*200)
		}
	}
	rep := count(Config{Hot: Hot{Rate: 2, For: 8 * time.Second}}, evs...)
	if len(rep.Findings) != 2 {
		t.Fatalf("findings %+v: want the two loops, not the burst", rep.Findings)
	}
	for i, from := range []time.Duration{60 * time.Second, 130 * time.Second} {
		if f := rep.Findings[i]; f.From != t0.Add(from) || f.Count != 50 {
			t.Errorf("finding %d %+v: want 50 gets from t0+%v", i, f, from)
		}
	}
}

// TestLatencyHistogramGrowsBothWays: latencies below and above the first
// ones counted still land in their buckets.
func TestLatencyHistogramGrowsBothWays(t *testing.T) {
	var l latency
	for range 20 {
		l.add(time.Millisecond)
	}
	for range 70 {
		l.add(10 * time.Microsecond)
	}
	for range 10 {
		l.add(time.Second)
	}
	for q, want := range map[float64]time.Duration{0.5: 10 * time.Microsecond, 0.8: time.Millisecond, 0.95: time.Second} {
		if got := l.quantile(q); math.Abs(float64(got-want))/float64(want) > 0.05 {
			t.Errorf("quantile %g = %v, want %v within 5%%", q, got, want)
		}
	}
}

// TestSlowLoopIsNamed: at a rate so low that one request opens a loop, the
// loop still names its client and object.
func TestSlowLoopIsNamed(t *testing.T) {
	var evs []audit.Event
	for i := range 10 {
		evs = append(evs, ev(i*2_000, "slow", "get", "configmaps/a", 200))
	}
	rep := count(Config{Hot: Hot{Rate: 0.1, For: 8 * time.Second}}, evs...)
	if len(rep.Findings) != 1 || rep.Findings[0].User != "slow" || rep.Findings[0].Object != "configmaps/ns/a" || rep.Findings[0].Count != 10 {
		t.Errorf("findings %+v: want slow's loop, named", rep.Findings)
	}
}
