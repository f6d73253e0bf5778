package leases

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// write is an audit event of a write by the client-go program whose user
// agent is agent (its field manager), at s seconds after t0.
func write(agent, verb, resource, group, name string, code int, s float64) *audit.Event {
	return &audit.Event{
		AuditID: fmt.Sprintf("%s-%s-%g", agent, name, s), Stage: audit.StageResponseComplete, Verb: verb,
		RequestURI: "/x", Username: "system:serviceaccount:kube-system:ctrl", UserAgent: agent + "/v0.0.0",
		ObjectRef: audit.ObjectRef{Resource: resource, APIGroup: group, Namespace: "kube-system", Name: name},
		Code:      code, RequestReceived: at(s), StageTimestamp: at(s),
	}
}

func leaseWrite(agent string, code int, s float64) *audit.Event {
	return write(agent, "update", "leases", "coordination.k8s.io", "sched", code, s)
}

func cmWrite(agent string, s float64) *audit.Event {
	return write(agent, "update", "configmaps", "", "state", 200, s)
}

const (
	wa = "system:serviceaccount:kube-system:ctrl/a"
	wb = "system:serviceaccount:kube-system:ctrl/b"
)

func TestHistory(t *testing.T) {
	tests := []struct {
		name      string
		events    []*audit.Event
		takeovers []Takeover
		acting    []Acting
		renewals  Renewals
	}{{
		name:     "renewals and a candidate's 409",
		events:   []*audit.Event{leaseWrite("a", 200, 0), leaseWrite("a", 200, 2), leaseWrite("b", 409, 2), leaseWrite("a", 200, 4)},
		renewals: Renewals{Count: 2, IntervalMedian: dur(2 * time.Second), IntervalP99: dur(2 * time.Second), MinSlack: dur(13 * time.Second), Conflicts: 1, Tries: map[string]int{wb: 1}},
	}, {
		name: "a takeover after expiry; the former holder keeps writing a ConfigMap",
		events: []*audit.Event{
			leaseWrite("a", 200, 0), leaseWrite("a", 200, 2), cmWrite("a", 3),
			leaseWrite("b", 200, 19.5), cmWrite("a", 25), cmWrite("a", 26), leaseWrite("a", 409, 27), cmWrite("b", 28),
		},
		takeovers: []Takeover{{Lock: sched, Time: at(19.5), From: wa, To: wb, FromLastRenew: ptr(at(2)), AfterExpiry: true, Unheld: dur(2500 * time.Millisecond)}},
		acting: []Acting{{Lock: sched, Writer: wa, LastRenew: at(2), LostAt: at(17), Reason: "expired", First: at(25), Last: at(26), Writes: 2,
			Objects: []string{"configmaps kube-system/state"}}},
		renewals: Renewals{Count: 1, IntervalMedian: dur(2 * time.Second), IntervalP99: dur(2 * time.Second), MinSlack: dur(13 * time.Second), Expiries: 1, Takeovers: 1, Conflicts: 1, Tries: map[string]int{wa: 1}},
	}, {
		name: "a takeover before expiry: the former holder's writes after it count",
		events: []*audit.Event{
			leaseWrite("a", 200, 0), leaseWrite("b", 200, 5), cmWrite("a", 4), cmWrite("a", 6),
		},
		takeovers: []Takeover{{Lock: sched, Time: at(5), From: wa, To: wb, FromLastRenew: ptr(at(0))}},
		acting: []Acting{{Lock: sched, Writer: wa, LastRenew: at(0), LostAt: at(5), Reason: "taken over by " + wb, First: at(6), Last: at(6), Writes: 1,
			Objects: []string{"configmaps kube-system/state"}}},
		renewals: Renewals{Takeovers: 1},
	}, {
		name: "the holder writing after its own lease expired, nobody taking over",
		events: []*audit.Event{
			leaseWrite("a", 200, 0), cmWrite("a", 16), leaseWrite("a", 200, 17), cmWrite("a", 18),
		},
		acting: []Acting{{Lock: sched, Writer: wa, LastRenew: at(0), LostAt: at(15), Reason: "expired", First: at(16), Last: at(16), Writes: 1,
			Objects: []string{"configmaps kube-system/state"}}},
		renewals: Renewals{Count: 1, IntervalMedian: dur(17 * time.Second), IntervalP99: dur(17 * time.Second), MinSlack: dur(-2 * time.Second), Expiries: 1},
	}, {
		name: "a former holder that takes the lock back is the leader again",
		events: []*audit.Event{
			leaseWrite("a", 200, 0), leaseWrite("b", 200, 20), leaseWrite("a", 200, 40), cmWrite("a", 41),
		},
		takeovers: []Takeover{
			{Lock: sched, Time: at(20), From: wa, To: wb, FromLastRenew: ptr(at(0)), AfterExpiry: true, Unheld: dur(5 * time.Second)},
			{Lock: sched, Time: at(40), From: wb, To: wa, FromLastRenew: ptr(at(20)), AfterExpiry: true, Unheld: dur(5 * time.Second)},
		},
		renewals: Renewals{Expiries: 2, Takeovers: 2},
	}, {
		name: "dry runs, events and reads are not writes that count",
		events: []*audit.Event{
			leaseWrite("a", 200, 0), leaseWrite("b", 200, 20),
			func() *audit.Event { e := cmWrite("a", 21); e.RequestURI = "/x?dryRun=All"; return e }(),
			write("a", "create", "events", "", "x", 201, 22),
			write("a", "get", "configmaps", "", "state", 200, 23),
		},
		takeovers: []Takeover{{Lock: sched, Time: at(20), From: wa, To: wb, FromLastRenew: ptr(at(0)), AfterExpiry: true, Unheld: dur(5 * time.Second)}},
		renewals:  Renewals{Expiries: 1, Takeovers: 1},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHistory(NewConfig())
			for _, e := range tc.events {
				h.Add(e)
			}
			rep := h.Report()
			if diff := cmp.Diff(nonNil(tc.takeovers), rep.Takeovers); diff != "" {
				t.Errorf("takeovers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(nonNil(tc.acting), rep.Acting); diff != "" {
				t.Errorf("acting (-want +got):\n%s", diff)
			}
			if len(rep.Locks) != 1 {
				t.Fatalf("locks: %+v", rep.Locks)
			}
			if diff := cmp.Diff(&tc.renewals, rep.Locks[0].Renewals); diff != "" {
				t.Errorf("renewals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHistoryFromLog reads the events from an audit log's JSON lines, as
// the API server writes them, through pkg/audit.
func TestHistoryFromLog(t *testing.T) {
	line := func(agent string, code int, name, resource, group string, s float64) string {
		return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"%s-%g","stage":"ResponseComplete","requestURI":"/apis/coordination.k8s.io/v1/namespaces/ns/leases/%s","verb":"update","user":{"username":"admin"},"userAgent":"%s/v0","objectRef":{"resource":"%s","namespace":"ns","name":"%s","apiGroup":"%s","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}`,
			agent, s, name, agent, resource, name, group, code, at(s).Format(micro), at(s).Format(micro))
	}
	log := strings.Join([]string{
		line("cand-a", 200, "l", "leases", "coordination.k8s.io", 0),
		line("cand-a", 200, "l", "leases", "coordination.k8s.io", 2),
		line("cand-b", 409, "l", "leases", "coordination.k8s.io", 18),
		line("cand-b", 200, "l", "leases", "coordination.k8s.io", 18.5),
		line("cand-a", 200, "cm", "configmaps", "", 19),
	}, "\n") + "\n"
	rep, err := History(context.Background(), []audit.Source{audit.NewSource("audit.log", strings.NewReader(log))}, NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	want := []Takeover{{Lock: LockRef{Kind: KindLease, Namespace: "ns", Name: "l"}, Time: at(18.5), From: "admin/cand-a", To: "admin/cand-b",
		FromLastRenew: ptr(at(2)), AfterExpiry: true, Unheld: dur(1500 * time.Millisecond)}}
	if diff := cmp.Diff(want, rep.Takeovers); diff != "" {
		t.Errorf("takeovers (-want +got):\n%s", diff)
	}
	if len(rep.Acting) != 1 || rep.Acting[0].Objects[0] != "configmaps ns/cm" {
		t.Errorf("acting: %+v", rep.Acting)
	}
}

// TestHistorySharedWriter: a Lease created with kubectl create is held by
// admin/kubectl-create, which never renews it; every kubectl create run by
// admin has that identity. Its creates in other namespaces after the
// lease expired are acting while not leader only if nothing shows that
// several clients share the identity: here a second user agent (another
// kubectl, on another machine) or two writes to one object that
// overlapped. Then they are left out of Acting and the timeline, kept in
// SharedWriters with the evidence, and warned about; split-brain counts 0.
func TestHistorySharedWriter(t *testing.T) {
	lock := LockRef{Kind: KindLease, Namespace: "team", Name: "my-lock"}
	create := func(ua, resource, group, ns, name string, received, done float64) *audit.Event {
		return &audit.Event{AuditID: fmt.Sprintf("%s-%s-%g", ns, name, received), Stage: audit.StageResponseComplete, Verb: "create",
			RequestURI: "/x?fieldManager=kubectl-create", Username: "admin", UserAgent: ua,
			ObjectRef: audit.ObjectRef{Resource: resource, APIGroup: group, Namespace: ns, Name: name},
			Code:      201, RequestReceived: at(received), StageTimestamp: at(done)}
	}
	// An operator's client, in two versions, and a person's kubectl.
	const here, there = "team-operator/v0.3.1", "team-operator/v0.4.0"
	const kubectl = "kubectl/v1.36.3 (linux/amd64) kubernetes/a1b2c3d"
	theLease := create(here, "leases", "coordination.k8s.io", "team", "my-lock", 0, 0)
	for _, tc := range []struct {
		name   string
		events []*audit.Event
		shared *audit.Shared
	}{{
		name:   "one client: acting while not leader",
		events: []*audit.Event{theLease, create(here, "configmaps", "", "ns-1", "a", 20, 20), create(here, "secrets", "", "ns-2", "b", 30, 30)},
	}, {
		name:   "a second user agent",
		events: []*audit.Event{theLease, create(here, "configmaps", "", "ns-1", "a", 20, 20), create(there, "secrets", "", "ns-2", "b", 30, 30)},
		shared: &audit.Shared{UserAgents: []string{here, there}},
	}, {
		name: "two writes to one object overlap",
		events: []*audit.Event{theLease, create(here, "configmaps", "", "ns-1", "a", 20, 20.2),
			create(here, "configmaps", "", "ns-1", "a", 20.1, 20.3), create(here, "secrets", "", "ns-2", "b", 30, 30)},
		shared: &audit.Shared{Overlapping: 1},
	}, {
		// kubectl create made the Lease; later kubectl sessions of the same
		// user, one kubectl version on one machine, look the same.
		name: "kubectl outside a pod, one user agent",
		events: []*audit.Event{create(kubectl, "leases", "coordination.k8s.io", "team", "my-lock", 0, 0),
			create(kubectl, "configmaps", "", "ns-1", "a", 20, 20), create(kubectl, "secrets", "", "ns-2", "b", 30, 30)},
		shared: &audit.Shared{Kubectl: true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			cfg.Namespace = "team"
			h := NewHistory(cfg)
			for _, e := range tc.events {
				h.Add(e)
			}
			rep := h.Report()
			acting := len(rep.Acting)
			if tc.shared == nil {
				if acting != 1 || rep.Acting[0].Writer != "admin/kubectl-create" || rep.Acting[0].Writes != 2 || len(rep.SharedWriters) != 0 || rep.Findings()["split-brain"] != 1 {
					t.Errorf("acting %+v, shared %+v: want admin/kubectl-create's 2 writes as acting while not leader", rep.Acting, rep.SharedWriters)
				}
				return
			}
			if acting != 0 || rep.Findings()["split-brain"] != 0 {
				t.Errorf("acting %+v: want none, the writer is shared", rep.Acting)
			}
			if len(rep.SharedWriters) != 1 {
				t.Fatalf("shared writers %+v, want admin/kubectl-create's window", rep.SharedWriters)
			}
			sw := rep.SharedWriters[0]
			if sw.Lock != lock || sw.Writer != "admin/kubectl-create" || sw.Writes < 2 || sw.Reason != "expired" {
				t.Errorf("shared writer %+v", sw)
			}
			if diff := cmp.Diff(*tc.shared, sw.Shared); diff != "" {
				t.Errorf("evidence (-want +got):\n%s", diff)
			}
			for _, m := range rep.Timeline {
				if m.What == MomentActing {
					t.Errorf("timeline has %+v", m)
				}
			}
			warned := rep.Warnings
			if len(warned) != 1 || !strings.Contains(warned[0], "admin/kubectl-create, a holder of team/my-lock") || !strings.Contains(warned[0], "a shared identity cannot prove which client acted") {
				t.Errorf("warnings %q", warned)
			}
		})
	}
}
