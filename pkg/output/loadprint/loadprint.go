// Package loadprint renders who loads the API server (package load): the
// top table (kubectl rv conflicts --view top), wasted writes per writer
// (--view wasted), the hot loops under either, and the versioned
// TopReport document for -o json|yaml.
//
// Package loadprint does not read audit logs or count them: it only
// renders a load.Report.
package loadprint

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/load"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the kind of the structured report.
const Kind = "TopReport"

// The views this package prints.
const (
	ViewTop    = "top"
	ViewWasted = "wasted"
)

// Scope says what was read and how loops were judged.
type Scope struct {
	AuditLogs []string `json:"auditLogs"`
	Since     string   `json:"since,omitempty"`
	Until     string   `json:"until,omitempty"`
	Object    string   `json:"object,omitempty"`
	// HotRate and HotFor are --hot-rate and --hot-for.
	HotRate float64 `json:"hotRate"`
	HotFor  string  `json:"hotFor"`
}

// Document is the structured report (-o json|yaml), kind TopReport.
type Document struct {
	output.TypeMeta `json:",inline"`
	Scope           Scope          `json:"scope"`
	By              []load.Key     `json:"by"`
	Total           int            `json:"total"`
	Window          load.Window    `json:"window"`
	Groups          []load.Group   `json:"groups"`
	Wasted          []load.Wasted  `json:"wasted"`
	Findings        []load.Finding `json:"findings"`
	Input           audit.Stats    `json:"input"`
}

// NewDocument wraps a report for printing; it keeps every row.
func NewDocument(rep *load.Report, scope Scope) Document {
	d := Document{TypeMeta: output.NewTypeMeta(Kind), Scope: scope, By: rep.By, Total: rep.Total, Window: rep.Window,
		Groups: rep.Groups, Wasted: rep.Wasted, Findings: rep.Findings, Input: rep.Input}
	// Empty lists print as [], not null.
	if d.Groups == nil {
		d.Groups = []load.Group{}
	}
	if d.Wasted == nil {
		d.Wasted = []load.Wasted{}
	}
	if d.Findings == nil {
		d.Findings = []load.Finding{}
	}
	return d
}

// DefaultTop is how many rows a table shows when the user chose no
// number: a screenful, the largest first.
const DefaultTop = 20

// Print writes the view's table (at most top rows, 0 all, then a line
// saying how many more there are), the hot loops, and a summary line.
func Print(p *output.Printer, rep *load.Report, view string, top int) error {
	t, rows, noun, order := Top(rep, top), len(rep.Groups), "group", "the most requests first"
	if view == ViewWasted {
		t, rows, noun, order = Wasted(rep, top), len(rep.Wasted), "writer", "the most wasted writes first"
	}
	if len(t.Rows) > 0 {
		if err := p.PrintTable(t); err != nil {
			return err
		}
	}
	var b strings.Builder
	if len(t.Rows) < rows {
		fmt.Fprintf(&b, "%d of %s shown (%s); --top 0 shows all\n", len(t.Rows), text.Plural(rows, noun), order)
	}
	if len(rep.Findings) > 0 {
		b.WriteString("\n")
		b.Write(p.RenderTable(Findings(rep)))
	}
	fmt.Fprintf(&b, "\n%s over %s (%s a minute) from %s; %s%s\n", text.Plural(rep.Total, "request"),
		output.Duration(time.Duration(rep.Window.Minutes*float64(time.Minute))), rate(perMinute(rep)),
		text.Plural(rep.Input.Events, "event"), text.Plural(rows, noun), leftOut(rep))
	if view == ViewWasted && unknownNoOps(rep) > 0 {
		fmt.Fprintf(&b, "NO-OPS ? for %s: telling a no-op needs RequestResponse-level events\n", text.Plural(unknownNoOps(rep), "writer"))
	}
	_, err := p.Out.Write([]byte(b.String()))
	return err
}

func perMinute(rep *load.Report) float64 {
	if rep.Window.Minutes == 0 {
		return 0
	}
	return float64(rep.Total) / rep.Window.Minutes
}

func leftOut(rep *load.Report) string {
	if n := rep.Input.Duplicates; n > 0 {
		return fmt.Sprintf("; left out %d duplicate events", n)
	}
	return ""
}

func unknownNoOps(rep *load.Report) int {
	n := 0
	for _, w := range rep.Wasted {
		if w.NoOps == nil && w.NoOpUnknown > 0 {
			n++
		}
	}
	return n
}

// Top is a row per group, the most requests first; at most top rows.
func Top(rep *load.Report, top int) *output.TableData {
	var cols []output.Column
	for _, k := range rep.By {
		cols = append(cols, output.Column{Name: string(k)})
	}
	cols = append(cols, output.Columns("requests", "share", "per min", "p50", "p99", "statuses", "top objects")...)
	cols = append(cols, output.Column{Name: "first", Wide: true}, output.Column{Name: "last", Wide: true})
	t := &output.TableData{Columns: cols}
	for i, g := range rep.Groups {
		if top > 0 && i == top {
			break
		}
		var row []output.Cell
		for _, k := range rep.By {
			row = append(row, cell(keyValue(k, g.Key[k])))
		}
		row = append(row, num(g.Count), cell(percent(g.Share)), cell(rate(g.PerMinute)), cell(millis(g.P50Ms)),
			cell(millis(g.P99Ms)), cell(statuses(g.Statuses)), cell(objects(g.Objects)),
			cell(g.First.UTC().Format(time.RFC3339)), cell(g.Last.UTC().Format(time.RFC3339)))
		t.AddRow(row...)
	}
	return t
}

// keyValue shows an empty value of k: a cluster-scoped request's
// namespace, a status-less event's code.
func keyValue(k load.Key, v string) string {
	switch {
	case k == load.Namespace && v == "":
		return "(cluster)"
	case k == load.Status && v == "0":
		return "-"
	case k == load.Resource && v == "":
		return "(non-resource)"
	}
	return dash(v)
}

// Wasted is a row per writer, the most wasted writes first.
func Wasted(rep *load.Report, top int) *output.TableData {
	t := &output.TableData{Columns: output.Columns("writer", "writes", "already exists", "no-ops", "lost (409)", "wasted", "share")}
	for i, w := range rep.Wasted {
		if top > 0 && i == top {
			break
		}
		noOps := "?"
		if w.NoOps != nil {
			noOps = strconv.Itoa(*w.NoOps)
		}
		wasted := num(w.Wasted)
		if w.Wasted > 0 {
			wasted.Style = output.Red
		}
		t.AddRow(cell(w.Writer), num(w.Attempts), num(w.AlreadyExists), cell(noOps), num(w.Lost), wasted, cell(percent(w.Share)))
	}
	return t
}

// Findings is a row per hot loop.
func Findings(rep *load.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("hot loop", "client", "object", "requests", "per sec", "from", "for")}
	for _, f := range rep.Findings {
		t.AddRow(output.Cell{Text: f.Kind, Style: output.Red}, cell(f.Client), cell(f.Object), num(f.Count),
			cell(strconv.FormatFloat(f.PerSecond, 'f', 1, 64)), cell(f.From.UTC().Format(time.RFC3339)),
			cell(output.Duration(f.To.Sub(f.From))))
	}
	return t
}

func statuses(s []load.StatusCount) string {
	parts := make([]string, 0, len(s))
	for i, c := range s {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("+%d more", len(s)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%s:%d", keyValue(load.Status, strconv.Itoa(c.Code)), c.Count))
	}
	return strings.Join(parts, " ")
}

func objects(o []load.ObjectCount) string {
	parts := make([]string, 0, len(o))
	for _, c := range o {
		n := strconv.Itoa(c.Count)
		if c.Error > 0 {
			// At least Count-Error, at most Count.
			n = strconv.Itoa(c.Count-c.Error) + "-" + n
		}
		parts = append(parts, c.Object+" ("+n+")")
	}
	return dash(strings.Join(parts, ", "))
}

func millis(ms float64) string { return strconv.FormatFloat(ms, 'f', 1, 64) + "ms" }

func rate(r float64) string { return strconv.FormatFloat(r, 'f', 1, 64) }

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }

func num(n int) output.Cell { return cell(strconv.Itoa(n)) }

func cell(s string) output.Cell { return output.Cell{Text: s} }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// htmlRows is how many groups and writers the page shows: a page is read
// by a person, -o json has them all.
const htmlRows = 200

// HTML is --report FILE.html: the top table, the wasted writes and the hot
// loops, on one page.
func HTML(rep *load.Report) []byte {
	var b bytes.Buffer
	output.HTMLOpen(&b, "kubectl rv conflicts: who loads the API server", "")
	fmt.Fprintf(&b, "<h2>Requests by %s</h2>\n<p class=\"desc\">%s over %s (%s a minute).</p>\n",
		text.EscapeMarkup(keyNames(rep.By)), text.Plural(rep.Total, "request"),
		output.Duration(time.Duration(rep.Window.Minutes*float64(time.Minute))), rate(perMinute(rep)))
	output.HTMLTable(&b, Top(rep, htmlRows))
	b.WriteString("<h2>Hot loops</h2>\n")
	if len(rep.Findings) == 0 {
		b.WriteString("<p class=\"desc\">None at the --hot-rate and --hot-for given.</p>\n")
	} else {
		output.HTMLTable(&b, Findings(rep))
	}
	b.WriteString("<h2>Wasted writes</h2>\n")
	output.HTMLTable(&b, Wasted(rep, htmlRows))
	output.HTMLClose(&b, "Generated by kubectl rv conflicts from the API server's audit log.")
	return b.Bytes()
}

func keyNames(by []load.Key) string {
	names := make([]string, len(by))
	for i, k := range by {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
