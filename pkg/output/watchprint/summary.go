package watchprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Summary renders the end-of-run summary: a JSON line with -o json, else
// a few tables after the rows.
func (w *Printer) Summary(s inspect.Summary) error {
	if w.p.Structured() {
		return w.p.PrintJSONLine(summaryJSON{TypeMeta: output.NewTypeMeta(SummaryKind), Summary: s})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s: %s, %s, %s, %s, %s\n", w.p.Paint(output.Bold, "Summary of"), output.Duration(time.Duration(s.Duration)), text.Plural(s.Creates, "create"), text.Plural(s.Writes, "write"), text.Plural(s.Deletes, "delete"), text.Plural(len(s.Gaps), "gap"), text.Plural(len(s.Fights), "fight"))
	if len(s.Objects) > 0 {
		t := &output.TableData{Columns: output.Columns("Object", "Writes", "Spec", "Status", "Metadata", "Other", "Managers", "Hot")}
		if w.opts.ShowNamespace {
			t.Columns = append([]output.Column{{Name: "Namespace"}}, t.Columns...)
		}
		for _, o := range s.Objects {
			hot := ""
			if o.Hot {
				hot = fmt.Sprintf("%.2g/s", o.PeakRate)
			}
			obj := o.Object
			if o.Deleted {
				obj += " (deleted)"
			}
			row := []output.Cell{{Text: obj}, {Text: strconv.Itoa(o.Writes)}, {Text: strconv.Itoa(o.Spec)}, {Text: strconv.Itoa(o.Status)}, {Text: strconv.Itoa(o.Metadata)}, {Text: strconv.Itoa(o.Other)}, {Text: dash(strings.Join(o.Managers, ", "))}, {Text: dash(hot), Style: output.Yellow}}
			if w.opts.ShowNamespace {
				row = append([]output.Cell{{Text: dash(o.Namespace)}}, row...)
			}
			t.AddRow(row...)
		}
		b.WriteByte('\n')
		b.Write(w.plain().RenderTable(t))
	}
	if len(s.Managers) > 0 {
		t := &output.TableData{Columns: output.Columns("Manager", "Writes", "Fields", "Objects")}
		for _, m := range s.Managers {
			t.AddRow(output.Cells(m.Manager, strconv.Itoa(m.Writes), strconv.Itoa(m.Fields), strconv.Itoa(m.Objects))...)
		}
		b.WriteByte('\n')
		b.Write(w.plain().RenderTable(t))
	}
	if len(s.HotFields) > 0 {
		t := &output.TableData{Columns: output.Columns("Object", "Hottest fields", "Writes", "Managers")}
		for _, f := range s.HotFields {
			t.AddRow(output.Cells(f.Object, f.Field, strconv.Itoa(f.Writes), dash(strings.Join(f.Managers, ", ")))...)
		}
		b.WriteByte('\n')
		b.Write(w.plain().RenderTable(t))
	}
	if len(s.Gaps) > 0 {
		t := &output.TableData{Columns: output.Columns("Gap in", "Lost after RV", "Up to RV", "Revisions", "Changes seen after")}
		for _, g := range s.Gaps {
			revs := "-"
			if g.Revisions != nil {
				revs = strconv.FormatUint(*g.Revisions, 10)
			}
			t.AddRow(output.Cells(g.Resource, dash(g.From), g.To, revs, strconv.Itoa(g.Changes))...)
		}
		b.WriteByte('\n')
		b.Write(w.plain().RenderTable(t))
	}
	if len(s.Fights) > 0 {
		t := &output.TableData{Columns: output.Columns("Fight over", "Field", "Managers", "Flips", "Per minute")}
		for _, f := range s.Fights {
			t.AddRow(output.Cell{Text: f.Object, Style: output.Red}, output.Cell{Text: f.Field}, output.Cell{Text: strings.Join(f.Managers, ", ")}, output.Cell{Text: output.AtLeast(f.Flips, f.Capped)}, output.Cell{Text: strconv.FormatFloat(f.PerMinute, 'f', 1, 64)})
		}
		b.WriteByte('\n')
		b.Write(w.plain().RenderTable(t))
	}
	_, err := io.WriteString(w.p.Out, b.String())
	return err
}

// plain is the printer for summary tables: always with headers, never wide.
func (w *Printer) plain() *output.Printer {
	p := *w.p
	p.Format = output.Table
	p.NoHeaders = false
	return &p
}
