package conflicts

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

func precond(e audit.Event, rv string) audit.Event { e.ObjectRef.ResourceVersion = rv; return e }

// TestRetryNeedsEvidence: an attempt after a 409 is a retry when, within
// the window, the writer re-read sooner than its own pace, showed other
// evidence (a new precondition, force), or re-sent a write without a
// precondition sooner than its pace.
func TestRetryNeedsEvidence(t *testing.T) {
	force := func(e audit.Event) audit.Event { e.RequestURI += "&force=true"; return e }
	for _, tc := range []struct {
		name string
		evs  []audit.Event
		want Tally
	}{
		{"no re-read, same precondition", []audit.Event{
			precond(ev(0, "a/m", "update", "configmaps/c", 409), "5"),
			precond(ev(20, "a/m", "update", "configmaps/c", 409), "5"),
		}, Tally{Attempts: 2, Conflicts: 2, GiveUps: 2}},
		{"re-read", []audit.Event{
			ev(0, "a/m", "update", "configmaps/c", 409),
			ev(10, "a", "get", "configmaps/c", 200),
			ev(20, "a/m", "update", "configmaps/c", 200),
		}, Tally{Attempts: 2, Conflicts: 1, Successes: 1, RetryChains: 1}},
		{"new precondition", []audit.Event{
			precond(ev(0, "a/m", "update", "configmaps/c", 409), "5"),
			precond(ev(20, "a/m", "update", "configmaps/c", 200), "7"),
		}, Tally{Attempts: 2, Conflicts: 1, Successes: 1, RetryChains: 1}},
		{"apply forced", []audit.Event{
			ev(0, "a/m", "patch", "configmaps/c", 409),
			force(ev(20, "a/m", "patch", "configmaps/c", 200)),
		}, Tally{Attempts: 2, Conflicts: 1, Successes: 1, RetryChains: 1}},
		{"periodic writer that re-reads each period", []audit.Event{
			ev(0, "a", "get", "configmaps/c", 200),
			precond(ev(1, "a/m", "update", "configmaps/c", 200), "1"),
			ev(1000, "a", "get", "configmaps/c", 200),
			precond(ev(1001, "a/m", "update", "configmaps/c", 409), "2"),
			ev(2000, "a", "get", "configmaps/c", 200),
			precond(ev(2001, "a/m", "update", "configmaps/c", 409), "3"),
			ev(3000, "a", "get", "configmaps/c", 200),
			precond(ev(3001, "a/m", "update", "configmaps/c", 200), "4"),
		}, Tally{Attempts: 4, Conflicts: 2, Successes: 2, GiveUps: 2}},
		// #50 D1: a RetryOnConflict writer with a 150 ms pace re-reads
		// 10 ms after its 409, but its get is slow: the update comes
		// 120 ms after, later than half its pace. The re-read is timed.
		{"fast retry loop with a slow get", []audit.Event{
			precond(ev(0, "a/m", "update", "configmaps/c", 200), "1"),
			precond(ev(150, "a/m", "update", "configmaps/c", 409), "1"),
			ev(161, "a", "get", "configmaps/c", 200),
			precond(ev(271, "a/m", "update", "configmaps/c", 200), "3"),
		}, Tally{Attempts: 3, Conflicts: 1, Successes: 2, RetryChains: 1}},
		// #50 D2: an apply without force, re-sent blind 15 ms after its
		// 409, is a retry; sent again a period later, it is not.
		{"blind re-apply", []audit.Event{
			ev(0, "a/m", "patch", "configmaps/c", 200),
			ev(1000, "a/m", "patch", "configmaps/c", 409),
			ev(1016, "a/m", "patch", "configmaps/c", 409),
			ev(2016, "a/m", "patch", "configmaps/c", 409),
		}, Tally{Attempts: 4, Conflicts: 3, Successes: 1, RetryChains: 1, GiveUps: 2}},
		{"re-read after the window", []audit.Event{
			ev(0, "a/m", "update", "configmaps/c", 409),
			ev(6000, "a", "get", "configmaps/c", 200),
			ev(6010, "a/m", "update", "configmaps/c", 200),
		}, Tally{Attempts: 2, Conflicts: 1, Successes: 1, GiveUps: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, writer(report(NewConfig(), tc.evs...), "a/m").Tally); diff != "" {
				t.Errorf("tally (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriterIdentity: without ?fieldManager= the writer's manager is its
// user agent's prefix, as the API server records it; each row shows only
// user agents its attempts sent, and says when it may hold several
// clients.
func TestWriterIdentity(t *testing.T) {
	ua := func(e audit.Event, s string) audit.Event { e.UserAgent = s; return e }
	rep := report(NewConfig(),
		ua(ev(0, "admin", "patch", "deployments/d", 200), "kubectl/v1.36.3 (linux/amd64) kubernetes/abc"),
		ua(ev(10, "admin", "update", "configmaps/c", 200), "busy-writer/v1"),
		ua(ev(20, "kcm", "update", "deployments/d", 200), "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/deployment-controller"),
		ua(ev(30, "kcm", "update", "replicasets/r", 200), "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/replicaset-controller"),
		// Two clients of one writer write the same object at once.
		with(ua(ev(40, "admin/twin", "update", "configmaps/t", 200), "twin/v1"), func(e *audit.Event) { e.StageTimestamp = t0.Add(60 * time.Millisecond) }),
		ua(ev(45, "admin/twin", "update", "configmaps/t", 200), "twin/v1"),
	)
	got := map[string]WriterStats{}
	for _, w := range rep.Writers {
		got[w.Writer.String()] = WriterStats{UserAgent: w.UserAgent, Shared: w.Shared}
	}
	want := map[string]WriterStats{
		"admin/kubectl":     {UserAgent: "kubectl/v1.36.3 (linux/amd64) kubernetes/abc"},
		"admin/busy-writer": {UserAgent: "busy-writer/v1"},
		"kcm/kube-controller-manager": {Shared: &Shared{UserAgents: []string{
			"kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/deployment-controller",
			"kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/abc/replicaset-controller"}}},
		"admin/twin": {UserAgent: "twin/v1", Shared: &Shared{Overlapping: 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("writers (-want +got):\n%s", diff)
	}
}

// TestDryRunsAndDuplicates: dry runs are counted and left out; an event
// read twice counts once.
func TestDryRunsAndDuplicates(t *testing.T) {
	id := func(e audit.Event, s string) audit.Event { e.AuditID = s; return e }
	dry := func(e audit.Event) audit.Event { e.RequestURI += "&dryRun=All"; return e }
	first := id(ev(0, "a/m", "update", "configmaps/c", 200), "1")
	rep := report(NewConfig(),
		first,
		id(dry(ev(5, "a/m", "update", "configmaps/c", 409)), "2"),
		id(ev(10, "b/m", "update", "configmaps/c", 409), "3"),
		first,
		id(ev(10, "b/m", "update", "configmaps/c", 409), "3"),
		with(id(ev(10, "b/m", "update", "configmaps/c", 409), "3"), func(e *audit.Event) { e.Stage = audit.StagePanic }),
	)
	if rep.Summary.DryRuns != 1 || rep.Input.Duplicates != 2 || rep.Summary.Attempts != 3 || rep.Summary.Conflicts != 2 {
		t.Errorf("dry runs %d duplicates %d attempts %d 409s %d, want 1 2 3 2", rep.Summary.DryRuns, rep.Input.Duplicates, rep.Summary.Attempts, rep.Summary.Conflicts)
	}
	if w := writer(rep, "a/m"); w.Attempts != 1 || w.Conflicts != 0 {
		t.Errorf("the dry run counts for its writer: %+v", w.Tally)
	}
}

// TestScope: --object and -n restrict every figure, not only the timeline.
func TestScope(t *testing.T) {
	other := with(ev(1, "b/m", "update", "configmaps/d", 409), func(e *audit.Event) { e.ObjectRef.Namespace = "other" })
	evs := []audit.Event{ev(0, "a/m", "update", "configmaps/c", 409), other, ev(2, "a/m", "update", "configmaps/e", 200)}
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want Tally
	}{
		{"object", func(c *Config) { c.Object = &ObjectKey{Resource: "configmaps", Name: "c"} }, Tally{Attempts: 1, Conflicts: 1, GiveUps: 1}},
		{"namespace", func(c *Config) { c.Namespace = "other" }, Tally{Attempts: 1, Conflicts: 1, GiveUps: 1}},
		{"both", func(c *Config) { c.Namespace = "ns"; c.Object = &ObjectKey{Resource: "configmaps", Name: "e"} }, Tally{Attempts: 1, Successes: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			tc.set(&cfg)
			rep := report(cfg, evs...)
			if diff := cmp.Diff(tc.want, rep.Summary.Tally); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			if rep.Summary.Objects != 1 || len(rep.Writers) != 1 {
				t.Errorf("%d objects, %d writers, want 1 and 1", rep.Summary.Objects, len(rep.Writers))
			}
		})
	}
}

func TestApplyConflictOwners(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      []FieldOwner
	}{
		{"one", `Apply failed with 1 conflict: conflict with "m1": .data.a`, []FieldOwner{{Manager: "m1", Fields: []string{".data.a"}, Applied: true}}},
		{"one, update entry", `Apply failed with 1 conflict: conflict with "hpa" with subresource "scale" using autoscaling/v1 at 2026-11-24T10:00:00Z: .spec.replicas`,
			[]FieldOwner{{Manager: "hpa", Fields: []string{".spec.replicas"}}}},
		{"two owners", "Apply failed with 2 conflicts: conflicts with \"m1\":\n- .data.a\nconflicts with \"m2\" using v1:\n- .data.b\n- .data.c",
			[]FieldOwner{{Manager: "m1", Fields: []string{".data.a"}, Applied: true}, {Manager: "m2", Fields: []string{".data.b", ".data.c"}}}},
		{"quoted name", `Apply failed with 1 conflict: conflict with "a \"b\"": .data.x`, []FieldOwner{{Manager: `a "b"`, Fields: []string{".data.x"}, Applied: true}}},
		{"not an apply conflict", `Operation cannot be fulfilled`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ApplyConflictOwners(tc.msg)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzApplyConflictOwners: any message is read without panicking, and
// every owner it names is one the message holds quoted.
func FuzzApplyConflictOwners(f *testing.F) {
	f.Add("Apply failed with 2 conflicts: conflicts with \"m1\":\n- .data.a\nconflicts with \"m2\" using v1:\n- .data.b")
	f.Add(`Apply failed with 1 conflict: conflict with "m1": .data.a`)
	f.Fuzz(func(t *testing.T, msg string) {
		for _, o := range ApplyConflictOwners(msg) {
			if len(o.Manager) > len(msg) {
				t.Fatalf("owner %q is longer than the message %q", o.Manager, msg)
			}
		}
	})
}

// TestPatchHintsSameWriters: --scenario's write methods are counted per
// writer as the report names them (the field manager from the user agent
// when the request names none), without dry runs or events read twice.
func TestPatchHintsSameWriters(t *testing.T) {
	line := func(id, query string) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","auditID":"` + id + `","stage":"ResponseComplete","verb":"patch","requestURI":"/api/v1/namespaces/ns/configmaps/c` + query + `","user":{"username":"u"},"userAgent":"scaler/v1","objectRef":{"resource":"configmaps","namespace":"ns","name":"c"},"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-24T10:00:00Z","stageTimestamp":"2026-11-24T10:00:00.001Z"}` + "\n"
	}
	log := line("1", "") + line("1", "") + line("2", "?dryRun=All") + line("3", "?fieldManager=ssa&force=true")
	hints, err := PatchHints(context.Background(), []audit.Source{audit.NewSource("a.log", strings.NewReader(log))}, ObjectKey{Resource: "configmaps", Namespace: "ns", Name: "c"}, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]PatchHint{"u/scaler": {Other: 1}, "u/ssa": {ApplyForce: 1}}
	if diff := cmp.Diff(want, hints); diff != "" {
		t.Errorf("hints (-want +got):\n%s", diff)
	}
}
