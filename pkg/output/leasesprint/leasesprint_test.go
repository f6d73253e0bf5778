package leasesprint

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func at(s float64) *time.Time {
	t := t0.Add(time.Duration(s * float64(time.Second)))
	return &t
}

func d(s float64) *leases.Duration {
	x := leases.Duration(time.Duration(s * float64(time.Second)))
	return &x
}

var sched = leases.LockRef{Kind: leases.KindLease, Namespace: "kube-system", Name: "sched"}

// nowReport is a look: a healthy Lease with candidates, an expired one,
// an annotation lock and a held-by-nobody Lease; a holder with escape
// codes in its name.
func nowReport() *leases.Report {
	return &leases.Report{Mode: leases.ModeNow, Start: *at(60), End: *at(60), CandidateAPI: "coordination.k8s.io/v1beta1",
		Locks: []leases.Lock{
			{LockRef: leases.LockRef{Kind: leases.KindLease, Namespace: "kube-node-lease", Name: "node-1"}, Holder: "node-1", HeldSince: at(-3600), LastRenew: at(58),
				LeaseDuration: leases.Duration(40 * time.Second), RenewAge: d(2), Slack: d(38), Transitions: ptr(int32(0))},
			{LockRef: sched, Holder: "cp-1_\x1b[31mx", HeldSince: at(0), LastRenew: at(48), LeaseDuration: leases.Duration(15 * time.Second), RenewAge: d(12), Slack: d(3), Transitions: ptr(int32(4)),
				Candidates: []leases.Candidate{{Name: "cp-1", BinaryVersion: "1.36.3"}, {Name: "cp-2", BinaryVersion: "1.36.3"}}},
			{LockRef: leases.LockRef{Kind: leases.KindConfigMap, Namespace: "kube-system", Name: "old"}, Holder: "pod-x", HeldSince: at(0), LastRenew: at(20),
				LeaseDuration: leases.Duration(30 * time.Second), RenewAge: d(40), Slack: d(-10), Expired: true, Transitions: ptr(int32(1))},
			{LockRef: leases.LockRef{Kind: leases.KindLease, Namespace: "team", Name: "free"}, LeaseDuration: leases.Duration(15 * time.Second), Transitions: ptr(int32(0))},
		}}
}

// historyReport is a history with a takeover after expiry, 409s and a
// former leader writing a ConfigMap.
func historyReport() *leases.Report {
	h := leases.NewHistory(leases.NewConfig())
	for _, e := range historyEvents() {
		h.Add(e)
	}
	return h.Report()
}

// historyEvents are historyReport's audit events.
func historyEvents() []*audit.Event {
	var evs []*audit.Event
	w := func(agent, verb, res, group, name string, code int, s float64) {
		evs = append(evs, &audit.Event{AuditID: fmt.Sprint(agent, s), Stage: audit.StageResponseComplete, Verb: verb, RequestURI: "/x", Username: "admin",
			UserAgent: agent + "/v0", ObjectRef: audit.ObjectRef{Resource: res, APIGroup: group, Namespace: "kube-system", Name: name},
			Code: code, RequestReceived: *at(s), StageTimestamp: *at(s)})
	}
	for _, s := range []float64{0, 2, 4} {
		w("cand-a", "update", "leases", "coordination.k8s.io", "sched", 200, s)
	}
	w("cand-b", "update", "leases", "coordination.k8s.io", "sched", 409, 4)
	w("cand-b", "update", "leases", "coordination.k8s.io", "sched", 200, 20.5)
	w("cand-b", "update", "leases", "coordination.k8s.io", "sched", 200, 22.5)
	w("cand-a", "update", "configmaps", "", "state", 200, 25)
	w("cand-a", "update", "configmaps", "", "state", 200, 26)
	return evs
}

// sharedReport is historyReport with cand-a's last ConfigMap write sent
// by another user agent of the same field manager: two clients share the
// identity admin/cand-a, so its writes after it lost the lock are not
// acting while not leader.
func sharedReport() *leases.Report {
	h := leases.NewHistory(leases.NewConfig())
	evs := historyEvents()
	evs[len(evs)-1].UserAgent = "cand-a/v1"
	for _, e := range evs {
		h.Add(e)
	}
	return h.Report()
}

func TestPrint(t *testing.T) {
	for _, tc := range []struct {
		name string
		rep  *leases.Report
		view View
	}{
		{"now.txt", nowReport(), ViewTable},
		{"history.txt", historyReport(), ViewTable},
		{"history-timeline.txt", historyReport(), ViewTimeline},
		{"live-empty.txt", &leases.Report{Mode: leases.ModeLive, Start: t0, End: *at(30)}, ViewTable},
		{"history-shared.txt", sharedReport(), ViewTable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &output.Printer{Out: &buf, Format: output.Table}
			if err := Print(p, tc.rep, tc.view); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, tc.name, buf.Bytes())
		})
	}
}

// TestDocument is the versioned LeasesReport.
func TestDocument(t *testing.T) {
	var buf bytes.Buffer
	p := &output.Printer{Out: &buf, Format: output.JSON}
	if err := p.PrintObject(NewDocument(historyReport(), Scope{Namespace: "kube-system", AuditLogs: []string{"audit.log"}})); err != nil {
		t.Fatal(err)
	}
	golden.Assert(t, "report.json", buf.Bytes())
}

// TestReport is the picture and the page of a history (golden files).
func TestReport(t *testing.T) {
	golden.Assert(t, "history.svg", SVG(historyReport()))
	golden.Assert(t, "history.html", HTML(historyReport()))
}

// TestReportZoomsToTheLocks: the picture's time axis spans the locks'
// own activity, not the whole log. historyReport's Lease is written from
// 0s to 22.5s (cand-b still holds it, so it is held until 22.5s + 15s)
// and cand-a acts until 26s; writes to other objects 16 minutes before
// and 20 minutes after make the log 36 minutes long. The axis runs from
// 0s to 37.5s, less and plus a twentieth of that (1.875s).
func TestReportZoomsToTheLocks(t *testing.T) {
	h := leases.NewHistory(leases.NewConfig())
	other := func(s float64) {
		h.Add(&audit.Event{AuditID: fmt.Sprint("other", s), Stage: audit.StageResponseComplete, Verb: "update", RequestURI: "/x", Username: "ci",
			UserAgent: "deployer/v1", ObjectRef: audit.ObjectRef{Resource: "configmaps", Namespace: "apps", Name: "cfg"},
			Code: 200, RequestReceived: *at(s), StageTimestamp: *at(s)})
	}
	other(-16 * 60)
	for _, e := range historyEvents() {
		h.Add(e)
	}
	other(20 * 60)
	rep := h.Report()
	if !rep.Start.Equal(*at(-16 * 60)) || !rep.End.Equal(*at(20 * 60)) {
		t.Fatalf("the history runs %s to %s, want the whole log", rep.Start, rep.End)
	}
	from, to := axisOf(rep)
	if want := *at(-1.875); !from.Equal(want) {
		t.Errorf("axis from %s, want %s", stamp(from), stamp(want))
	}
	if want := *at(37.5 + 1.875); !to.Equal(want) {
		t.Errorf("axis to %s, want %s", stamp(to), stamp(want))
	}
	svg := string(SVG(rep))
	if want := "09:59:58.125 to 10:00:39.375"; !strings.Contains(svg, want) || !strings.Contains(svg, "zoomed in on the locks (the history runs 09:44:00.000 to 10:20:00.000)") {
		t.Errorf("the picture's subtitle does not say %q and that it is zoomed:\n%s", want, svg)
	}
	// The whole history is drawn when it is the locks' activity.
	if from, to := axisOf(historyReport()); !from.Equal(t0) || !to.Equal(*at(26)) {
		t.Errorf("historyReport's axis %s to %s, want its start and end", stamp(from), stamp(to))
	}
}

func ptr[T any](v T) *T { return &v }
