package leasesprint

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// CI says how a report becomes a CI report (-o github, junit, sarif).
type CI struct {
	Tool cireport.Tool
	// Fails reports whether --fail-on fails on a findings class: the
	// findings of such a class are errors, the others (and the kinds no
	// class names) warnings.
	Fails func(class string) bool
}

// RuleID is the CI rule of a kind of finding: "leases/takeover".
func RuleID(k string) string { return "leases/" + k }

// CIReport turns rep into a CI report: a rule, a group and a case per
// kind of finding (leases.FindingKinds), the case holding a finding per
// takeover, lock with late renewals, acting window, expiry or acting
// window of a shared identity, located at the lock (TYPE/NS/NAME, the
// type its kind: Lease, Endpoints, ConfigMap), its message naming the
// holders or the writer. A kind with no finding is a passing case.
func CIReport(rep *leases.Report, ci CI) cireport.Report {
	messages := kindMessages(rep)
	var kinds []cireport.Kind
	for _, k := range leases.FindingKinds {
		ck := cireport.Kind{Rule: cireport.Rule{ID: RuleID(k.ID), Name: k.Name, Help: k.Help, Fix: k.Fix}, Class: k.Class}
		for _, m := range messages[k.ID] {
			obj := cireport.Object{Type: string(m.lock.Kind), Namespace: m.lock.Namespace, Name: m.lock.Name}
			ck.Findings = append(ck.Findings, cireport.Finding{Object: obj, Message: m.text})
		}
		kinds = append(kinds, ck)
	}
	return cireport.PerKind(ci.Tool, "leases", ci.Fails, kinds)
}

// lockMessage is a finding's lock and what it says.
type lockMessage struct {
	lock leases.LockRef
	text string
}

// kindMessages are the report's findings by kind ID, in the report's
// order.
func kindMessages(rep *leases.Report) map[string][]lockMessage {
	m := map[string][]lockMessage{}
	add := func(kind string, lock leases.LockRef, format string, args ...any) {
		m[kind] = append(m[kind], lockMessage{lock, fmt.Sprintf(format, args...)})
	}
	for _, tk := range rep.Takeovers {
		add("takeover", tk.Lock, "%s took the lock from %s at %s (%s)", tk.To, dash(tk.From), ciTime(tk.Time), takeoverHow(tk))
	}
	for _, l := range rep.Locks {
		if r := l.Renewals; r != nil && r.Late > 0 {
			add("late-renew", l.LockRef, "%s, the smallest slack %s of a %s lease; held now by %s",
				text.Plural(r.Late, "late renewal"), optSecs(r.MinSlack), secs(l.LeaseDuration.D()), dash(l.Holder))
		}
	}
	for _, a := range rep.Acting {
		add("split-brain", a.Lock, "%s wrote %s after it lost the lock at %s (%s), from %s to %s: %s",
			a.Writer, text.Plural(a.Writes, "time"), ciTime(a.LostAt), a.Reason, ciTime(a.First), ciTime(a.Last), strings.Join(a.Objects, ", "))
	}
	for _, e := range rep.Expiries {
		then := "taken over or still expired"
		if e.RenewedAfter {
			then = "renewed late by the same holder"
		}
		add("expiry", e.Lock, "%s did not renew within the lease duration: last renewal %s, expired at %s; then %s", e.Holder, ciTime(e.LastRenew), ciTime(e.At), then)
	}
	for _, s := range rep.SharedWriters {
		add("shared-writer", s.Lock, "%s wrote %s after it lost the lock at %s, but several clients share the identity (%s): %s",
			s.Writer, text.Plural(s.Writes, "time"), ciTime(s.LostAt), s.Shared.Reason(), strings.Join(s.Objects, ", "))
	}
	return m
}

// takeoverHow says how the previous holder lost the lock.
func takeoverHow(tk leases.Takeover) string {
	switch {
	case tk.Released:
		return "released first"
	case tk.AfterExpiry:
		return "after expiry, unheld " + optSecs(tk.Unheld)
	}
	return "before expiry"
}

// optSecs is secs of d, or "-" when it is not known.
func optSecs(d *leases.Duration) string {
	if d == nil {
		return "-"
	}
	return secs(d.D())
}

// ciTime is a time in a CI report, which may be read days later: the
// date, and the time to the millisecond, in UTC.
func ciTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// PrintCI writes the report in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, rep *leases.Report, ci CI) error {
	return cireport.Write(out, f, CIReport(rep, ci))
}
