package leasesprint

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the kind of the structured report.
const Kind = "LeasesReport"

// View is a --view value.
type View string

// The views.
const (
	// ViewTable is the locks, then the takeovers, expiries, acting windows
	// and gaps.
	ViewTable View = "table"
	// ViewTimeline is who held each lock when, and the notable moments in
	// time order.
	ViewTimeline View = "timeline"
)

// Views are the --view values, the default first.
var Views = []string{string(ViewTable), string(ViewTimeline)}

// Scope says what was looked at.
type Scope struct {
	// Namespace is the namespace looked in; empty means all namespaces.
	Namespace string   `json:"namespace,omitempty"`
	Names     []string `json:"names,omitempty"`
	// AuditLogs are the logs a history was read from.
	AuditLogs []string `json:"auditLogs,omitempty"`
	// Since and Until are the history's --since and --until, as given.
	Since string `json:"since,omitempty"`
	Until string `json:"until,omitempty"`
}

// Document is the structured report (-o json|yaml).
type Document struct {
	output.TypeMeta `json:",inline"`
	Scope           Scope  `json:"scope"`
	Duration        string `json:"duration"`
	leases.Report   `json:",inline"`
}

// NewDocument wraps a report for printing.
func NewDocument(rep *leases.Report, scope Scope) Document {
	return Document{TypeMeta: output.NewTypeMeta(Kind), Scope: scope, Duration: rep.End.Sub(rep.Start).Round(time.Second).String(), Report: *rep}
}

// Print writes the report in the view.
func Print(p *output.Printer, rep *leases.Report, view View) error {
	if err := headline(p, rep, view); err != nil {
		return err
	}
	if view == ViewTimeline {
		return sections(p, []section{
			{"Holders", Spans(rep)},
			{"Timeline", Timeline(rep)},
		}, "")
	}
	if locks := Locks(rep); len(locks.Rows) > 0 {
		if err := p.PrintTable(locks); err != nil {
			return err
		}
	}
	none := ""
	if rep.Mode != leases.ModeNow && len(rep.Takeovers)+len(rep.Expiries)+len(rep.Acting)+len(rep.SharedWriters)+rep.LateRenewals() == 0 {
		none = "No takeover, expiry, late renewal or write by a former leader found."
	}
	return sections(p, []section{
		{"Takeovers", Takeovers(rep)},
		{"Expiries (a holder that did not renew within the lease duration)", Expiries(rep)},
		{"Acting while not leader (writes by a former holder after it lost the lock)", Acting(rep)},
		{SharedTitle, SharedWriters(rep)},
		{"Gaps (history lost after 410 Gone; the watch relisted and resumed)", Gaps(rep)},
	}, none)
}

type section struct {
	title string
	table *output.TableData
}

func sections(p *output.Printer, ss []section, none string) error {
	for _, s := range ss {
		if len(s.table.Rows) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(p.Out, "\n%s:\n", s.title); err != nil {
			return err
		}
		if err := p.PrintTable(s.table); err != nil {
			return err
		}
	}
	if none != "" {
		_, err := fmt.Fprintf(p.Out, "\n%s\n", none)
		return err
	}
	return nil
}

// headline says what was watched or read; in the table view a blank line
// parts it from the locks' table.
func headline(p *output.Printer, rep *leases.Report, view View) error {
	var s string
	switch rep.Mode {
	case leases.ModeNow:
		return nil
	case leases.ModeLive:
		s = fmt.Sprintf("Watched %s for %s: %s.", text.Plural(len(rep.Locks), "lease"), output.Duration(rep.End.Sub(rep.Start)), text.Plural(rep.Events, "event"))
	case leases.ModeHistory:
		s = fmt.Sprintf("Read %s from %s to %s (%s): %s.", text.Plural(rep.Events, "write"), stamp(rep.Start), stamp(rep.End),
			output.Duration(rep.End.Sub(rep.Start)), text.Plural(len(rep.Locks), "lease"))
	}
	if view == ViewTable && len(rep.Locks) > 0 {
		s += "\n"
	}
	_, err := fmt.Fprintln(p.Out, s)
	return err
}

// Locks is a row per lock: in a look, its state; in a watch or a history,
// its renewals too.
func Locks(rep *leases.Report) *output.TableData {
	cols := output.Columns("namespace", "name", "holder", "held for", "renewed", "duration", "slack")
	if rep.Mode == leases.ModeNow {
		cols = append(cols, output.Columns("transitions", "candidates")...)
	} else {
		cols = append(cols, output.Columns("renewals", "interval p50/p99", "min slack", "late", "expiries", "takeovers")...)
	}
	if rep.Mode == leases.ModeHistory {
		cols = append(cols, output.Column{Name: "409s"})
	}
	t := &output.TableData{Columns: cols}
	for _, l := range rep.Locks {
		name := l.Name
		if l.Kind != leases.KindLease {
			name = strings.ToLower(string(l.Kind)) + "/" + name
		}
		row := []output.Cell{cell(dash(l.Namespace)), cell(name), cell(dash(l.Holder)), cell(since(rep.End, l.HeldSince)),
			cell(ago(rep.End, l.LastRenew)), cell(secs(l.LeaseDuration.D())), slack(l)}
		if rep.Mode == leases.ModeNow {
			row = append(row, cell(transitions(l.Transitions)), cell(candidates(l.Candidates)))
		} else {
			row = append(row, renewals(l.Renewals)...)
		}
		if rep.Mode == leases.ModeHistory {
			row = append(row, cell(strconv.Itoa(l.Renewals.Conflicts)))
		}
		t.AddRow(row...)
	}
	return t
}

func transitions(n *int32) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(int(*n))
}

func slack(l leases.Lock) output.Cell {
	switch {
	case l.Slack == nil:
		return cell("-")
	case l.Expired:
		return output.Cell{Text: "expired " + secs(-l.Slack.D()) + " ago", Style: output.Red}
	case 3*l.Slack.D() < l.LeaseDuration.D():
		return output.Cell{Text: secs(l.Slack.D()), Style: output.Yellow}
	}
	return cell(secs(l.Slack.D()))
}

func renewals(r *leases.Renewals) []output.Cell {
	if r == nil {
		return output.Cells("-", "-", "-", "-", "-", "-")
	}
	iv := "-"
	if r.IntervalMedian != nil {
		iv = secs(r.IntervalMedian.D()) + "/" + secs(r.IntervalP99.D())
	}
	ms := "-"
	if r.MinSlack != nil {
		ms = secs(r.MinSlack.D())
	}
	return []output.Cell{cell(strconv.Itoa(r.Count)), cell(iv), cell(ms), count(r.Late, output.Yellow), count(r.Expiries, output.Red), count(r.Takeovers, output.Yellow)}
}

func count(n int, st output.Style) output.Cell {
	if n == 0 {
		return cell("0")
	}
	return output.Cell{Text: strconv.Itoa(n), Style: st}
}

func candidates(cs []leases.Candidate) string {
	if len(cs) == 0 {
		return "-"
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
		if c.BinaryVersion != "" {
			names[i] += " (" + c.BinaryVersion + ")"
		}
	}
	return strings.Join(names, ", ")
}

// Takeovers is a row per takeover.
func Takeovers(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("time", "lease", "from", "to", "from's last renewal", "how")}
	for _, tk := range rep.Takeovers {
		how := "before expiry"
		switch {
		case tk.Released:
			how = "released first"
		case tk.AfterExpiry:
			how = "after expiry, unheld " + secs(tk.Unheld.D())
		}
		last := "-"
		if tk.FromLastRenew != nil {
			last = stamp(*tk.FromLastRenew)
		}
		t.AddRow(cell(stamp(tk.Time)), cell(tk.Lock.String()), cell(dash(tk.From)), cell(tk.To), cell(last), cell(how))
	}
	return t
}

// Expiries is a row per expiry.
func Expiries(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("expired at", "lease", "holder", "last renewal", "then")}
	for _, e := range rep.Expiries {
		then := "taken over or still expired"
		if e.RenewedAfter {
			then = "renewed late by the same holder"
		}
		t.AddRow(cell(stamp(e.At)), cell(e.Lock.String()), cell(e.Holder), cell(stamp(e.LastRenew)), cell(then))
	}
	return t
}

// Acting is a row per window in which a former holder kept writing.
func Acting(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("lease", "writer", "lost at", "why", "first write", "last write", "writes", "objects")}
	for _, a := range rep.Acting {
		t.AddRow(cell(a.Lock.String()), cell(a.Writer), cell(stamp(a.LostAt)), cell(a.Reason),
			output.Cell{Text: stamp(a.First) + " (+" + secs(a.First.Sub(a.LostAt)) + ")", Style: output.Red}, cell(stamp(a.Last)),
			cell(strconv.Itoa(a.Writes)), cell(strings.Join(a.Objects, ", ")))
	}
	return t
}

// SharedTitle heads SharedWriters' table: why its writes are not acting
// while not leader.
const SharedTitle = "Not counted as acting while not leader (several clients share the writer's identity: it cannot prove which client acted)"

// SharedWriters is a row per acting window left out because several
// clients may share its writer's identity, with what shows it.
func SharedWriters(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("lease", "writer", "shared", "lost at", "first write", "last write", "writes", "objects")}
	for _, a := range rep.SharedWriters {
		t.AddRow(cell(a.Lock.String()), cell(a.Writer), cell(a.Shared.Reason()), cell(stamp(a.LostAt)), cell(stamp(a.First)), cell(stamp(a.Last)),
			cell(strconv.Itoa(a.Writes)), cell(strings.Join(a.Objects, ", ")))
	}
	return t
}

// Gaps is a row per gap.
func Gaps(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("time", "from", "to", "error")}
	for _, g := range rep.Gaps {
		t.AddRow(cell(stamp(g.Time)), cell(dash(g.From)), cell(g.To), cell(dash(g.Error)))
	}
	return t
}

// Spans is a row per holding span, by lock then time.
func Spans(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("lease", "holder", "from", "to", "last renewal", "renewals")}
	for _, l := range rep.Locks {
		for _, s := range l.Spans {
			to := "(holding)"
			if s.To != nil {
				to = stamp(*s.To)
			}
			t.AddRow(cell(l.LockRef.String()), cell(s.Holder), cell(stamp(s.From)), cell(to), cell(stamp(s.LastRenew)), cell(strconv.Itoa(s.Renewals)))
		}
	}
	return t
}

// Timeline is a row per moment, in time order.
func Timeline(rep *leases.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("time", "lease", "what", "holder", "detail")}
	ms := append([]leases.Moment(nil), rep.Timeline...)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Time.Before(ms[j].Time) })
	for _, m := range ms {
		st := output.None
		switch m.What {
		case leases.MomentExpired, leases.MomentActing:
			st = output.Red
		case leases.MomentTakeover, leases.MomentRenewLate, leases.MomentGap:
			st = output.Yellow
		}
		lock := "-"
		if m.Lock.Name != "" {
			lock = m.Lock.String()
		}
		t.AddRow(cell(stamp(m.Time)), cell(lock), output.Cell{Text: string(m.What), Style: st}, cell(dash(m.Holder)), cell(dash(m.Detail)))
	}
	if rep.MomentsDropped > 0 {
		t.AddRow(cell("..."), cell("-"), cell("-"), cell("-"), cell(fmt.Sprintf("%d more moments left out", rep.MomentsDropped)))
	}
	return t
}

// stamp is a time of day in UTC, to the millisecond: takeovers and
// renewals are seconds apart.
func stamp(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// since is how long before end t was, as kubectl shows ages.
func since(end time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return output.Duration(end.Sub(*t))
}

// ago is since with " ago", to the tenth of a second under a minute.
func ago(end time.Time, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return secs(end.Sub(*t)) + " ago"
}

// secs renders d to the tenth of a second under a minute ("2s", "11.5s",
// "-1.5s"), else as kubectl renders ages.
func secs(d time.Duration) string {
	if d < time.Minute && d > -time.Minute {
		return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64) + "s"
	}
	if d < 0 {
		return "-" + output.Duration(-d)
	}
	return output.Duration(d)
}

func cell(s string) output.Cell { return output.Cell{Text: s} }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
