package conflictsprint

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the kind of the structured report.
const Kind = "ConflictsReport"

// The views.
const (
	ViewObjects  = "objects"
	ViewWriters  = "writers"
	ViewTimeline = "timeline"
	ViewCauses   = "causes"
)

// Views lists the views in --help order.
var Views = []string{ViewObjects, ViewWriters, ViewTimeline, ViewCauses}

// Scope says what was analysed.
type Scope struct {
	AuditLogs   []string `json:"auditLogs"`
	Since       string   `json:"since,omitempty"`
	Until       string   `json:"until,omitempty"`
	RetryWindow string   `json:"retryWindow"`
	Object      string   `json:"object,omitempty"`
}

// Document is the structured report (-o json|yaml), version
// rv.kubectl-rv.dev/v1alpha1, kind ConflictsReport.
type Document struct {
	output.TypeMeta `json:",inline"`
	Scope           Scope                   `json:"scope"`
	Summary         conflicts.Summary       `json:"summary"`
	Input           audit.Stats             `json:"input"`
	Objects         []conflicts.ObjectStats `json:"objects"`
	Writers         []conflicts.WriterStats `json:"writers"`
	Causes          []conflicts.CauseStats  `json:"causes"`
	Timeline        []conflicts.Attempt     `json:"timeline,omitempty"`
}

// DefaultTop is how many objects and writers a table shows when the user
// chose no number: a screenful, the most 409s first.
const DefaultTop = 20

// NewDocument wraps a report for printing, with at most top objects and
// writers (0: all).
func NewDocument(rep *conflicts.Report, scope Scope, top int) Document {
	rep = limit(rep, top)
	return Document{TypeMeta: output.NewTypeMeta(Kind), Scope: scope, Summary: rep.Summary, Input: rep.Input,
		Objects: rep.Objects, Writers: rep.Writers, Causes: rep.Causes, Timeline: rep.Timeline}
}

// limit returns rep with its first top objects and writers (0: all), the
// most 409s first as the report sorts them; rep itself is left whole.
// It is the one place --top cuts: the report keeps every row, for
// --fail-on-rate and --scenario.
func limit(rep *conflicts.Report, top int) *conflicts.Report {
	if top <= 0 || len(rep.Objects) <= top && len(rep.Writers) <= top {
		return rep
	}
	cut := *rep
	cut.Objects, cut.Writers = rep.Objects[:min(top, len(rep.Objects))], rep.Writers[:min(top, len(rep.Writers))]
	return &cut
}

// Print writes the view's table, then a one-line summary. The objects and
// writers views show at most top rows (0: all), then a line saying how
// many there are and how to see them all; the timeline and causes are
// never cut.
func Print(p *output.Printer, rep *conflicts.Report, view string, top int) error {
	var t *output.TableData
	rows, noun := 0, ""
	switch view {
	case ViewWriters:
		t, rows, noun = Writers(limit(rep, top)), len(rep.Writers), "writers"
	case ViewTimeline:
		t = Timeline(rep)
	case ViewCauses:
		t = Causes(rep)
	default:
		t, rows, noun = Objects(limit(rep, top)), len(rep.Objects), "objects"
	}
	if len(t.Rows) > 0 {
		if err := p.PrintTable(t); err != nil {
			return err
		}
	}
	if len(t.Rows) < rows {
		// On stdout with the summary line: both are the report's, not
		// warnings.
		if _, err := fmt.Fprintf(p.Out, "%d of %d %s shown (the most 409s first); --top 0 shows all\n", len(t.Rows), rows, noun); err != nil {
			return err
		}
	}
	s := rep.Summary
	_, err := fmt.Fprintf(p.Out, "\n%d write attempts, %d conflicts (%s), %d successes, %d give-ups; %d writers, %d objects%s\n",
		s.Attempts, s.Conflicts, percent(s.Rate()), s.Successes, s.GiveUps, s.Writers, s.Objects, leftOut(rep))
	return err
}

// leftOut says what the figures leave out: dry runs and events read twice.
func leftOut(rep *conflicts.Report) string {
	var parts []string
	if n := rep.Summary.DryRuns; n > 0 {
		parts = append(parts, fmt.Sprintf("%d dry runs", n))
	}
	if n := rep.Input.Duplicates; n > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicate events", n))
	}
	if n := rep.Summary.Unshown; n > 0 {
		parts = append(parts, text.Plural(n, "attempt")+" the filters do not match")
	}
	if len(parts) == 0 {
		return ""
	}
	return "; left out " + strings.Join(parts, " and ")
}

// userAgent is the writer's user agent, or what says that its row may
// hold several clients.
func userAgent(w *conflicts.WriterStats) string {
	ua := w.UserAgent
	sh := w.Shared
	if sh == nil {
		return dash(ua)
	}
	var notes []string
	if n := len(sh.UserAgents); n > 1 {
		ua = fmt.Sprintf("%d user agents", n)
	}
	if sh.Overlapping > 0 {
		notes = append(notes, fmt.Sprintf("%d overlapping writes", sh.Overlapping))
	}
	if len(notes) == 0 {
		return ua + " (shared)"
	}
	return ua + " (shared: " + strings.Join(notes, ", ") + ")"
}

// Objects is a row per object, the hottest first.
func Objects(rep *conflicts.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("object", "attempts", "409s", "successes", "writers", "worst writer")}
	for _, o := range rep.Objects {
		worst := "-"
		if o.WorstWriter != "" {
			worst = fmt.Sprintf("%s (%d)", o.WorstWriter, o.WorstConflicts)
		}
		t.AddRow(cell(o.Object.String()), num(o.Attempts), conflictCell(o.Conflicts), num(o.Successes), num(o.Writers), cell(worst))
	}
	return t
}

// Writers is a row per writer, the most rejected first.
func Writers(rep *conflicts.Report) *output.TableData {
	cols := append(output.Columns("writer", "user agent", "attempts", "409s", "rate", "retry chains", "give-ups", "lost to"),
		output.Column{Name: "409 time", Wide: true}, output.Column{Name: "retry time", Wide: true})
	t := &output.TableData{Columns: cols}
	for _, w := range rep.Writers {
		var lost []string
		for i, l := range w.LostTo {
			if i == 3 {
				lost = append(lost, fmt.Sprintf("+%d more", len(w.LostTo)-3))
				break
			}
			lost = append(lost, fmt.Sprintf("%s (%d)", l.Name, l.Count))
		}
		t.AddRow(cell(w.Writer.String()), cell(userAgent(&w)), num(w.Attempts), conflictCell(w.Conflicts),
			cell(percent(w.ConflictRate)), num(w.RetryChains), num(w.GiveUps), cell(dash(strings.Join(lost, ", "))),
			cell(seconds(w.ConflictSeconds)), cell(seconds(w.RetrySeconds)))
	}
	return t
}

// Causes is a row per cause seen, with its fix; -o wide adds the fields
// apply conflicts named, with the managers that owned them.
func Causes(rep *conflicts.Report) *output.TableData {
	cols := append(output.Columns("cause", "409s", "writers", "fix"), output.Column{Name: "fields", Wide: true})
	t := &output.TableData{Columns: cols}
	for _, c := range rep.Causes {
		t.AddRow(cell(string(c.Cause)), num(c.Count), num(c.Writers), cell(c.Fix), cell(fields(c.Fields)))
	}
	return t
}

// fields lists each manager's fields: ".data.a, .data.b (m1); .spec.x (m2)",
// or "-".
func fields(owners []conflicts.FieldOwner) string {
	var parts []string
	for _, o := range owners {
		parts = append(parts, strings.Join(o.Fields, ", ")+" ("+o.Manager+")")
	}
	return dash(strings.Join(parts, "; "))
}

// Timeline is a row per write attempt on one object, with times relative
// to the first; -o wide adds the fields an apply conflict named, the API
// server replica that logged it (in host-prefixed logs) and its auditID,
// to find the event in the log.
func Timeline(rep *conflicts.Report) *output.TableData {
	cols := append(output.Columns("at", "writer", "verb", "code", "chain", "resourceVersion", "lost to", "cause"),
		output.Column{Name: "fields", Wide: true}, output.Column{Name: "replica", Wide: true}, output.Column{Name: "audit id", Wide: true})
	t := &output.TableData{Columns: cols}
	var first time.Time
	for i, a := range rep.Timeline {
		if i == 0 {
			first = a.Received
		}
		step := fmt.Sprintf("%d.%d", a.Chain, a.Step)
		if a.Reread {
			step += " reread"
		}
		if a.GiveUp {
			step += " gave up"
		}
		verb := a.Verb
		if a.Subresource != "" {
			verb += "/" + a.Subresource
		}
		code := output.Cell{Text: strconv.Itoa(a.Code)}
		if a.Code == 409 {
			code.Style = output.Red
		}
		t.AddRow(cell(fmt.Sprintf("+%.3fs", a.Received.Sub(first).Seconds())), cell(a.Writer), cell(verb), code, cell(step),
			cell(rvs(a)), cell(dash(strings.Join(a.LostTo, ", "))), cell(dash(string(a.Cause))), cell(fields(a.FieldOwners)), cell(dash(a.Replica)), cell(dash(a.AuditID)))
	}
	return t
}

func rvs(a conflicts.Attempt) string {
	switch {
	case a.Precondition != "" && a.Result != "":
		return a.Precondition + " -> " + a.Result
	case a.Precondition != "":
		return a.Precondition + " -> ?"
	case a.Result != "":
		return "-> " + a.Result
	}
	return "-"
}

// seconds is a time in seconds to the millisecond ("-" for none).
func seconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return strconv.FormatFloat(s, 'f', 3, 64) + "s"
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func conflictCell(n int) output.Cell {
	c := num(n)
	if n > 0 {
		c.Style = output.Red
	}
	return c
}

func num(n int) output.Cell { return cell(strconv.Itoa(n)) }

func cell(s string) output.Cell { return output.Cell{Text: s} }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
