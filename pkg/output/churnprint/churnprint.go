package churnprint

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/churn"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the kind of the structured report.
const Kind = "ChurnReport"

// Scope says what was watched.
type Scope struct {
	// Namespace is the namespace namespaced types were watched in; empty
	// means all namespaces.
	Namespace string `json:"namespace,omitempty"`
	// Types are the types asked for; empty means every listable type.
	Types []string `json:"types,omitempty"`
	// LoopRate is the --loop-rate a self-loop exceeds, in writes a minute.
	LoopRate float64 `json:"loopRate"`
}

// Document is the structured report (-o json|yaml).
type Document struct {
	output.TypeMeta `json:",inline"`
	Scope           Scope  `json:"scope"`
	Duration        string `json:"duration"`
	churn.Report    `json:",inline"`
}

// NewDocument wraps a report for printing.
func NewDocument(rep *churn.Report, scope Scope) Document {
	return Document{TypeMeta: output.NewTypeMeta(Kind), Scope: scope, Duration: rep.Duration.Round(time.Second).String(), Report: *rep}
}

// Print writes the headline, then a table for each of loops, fights,
// objects, managers, types and gaps that has rows.
func Print(p *output.Printer, rep *churn.Report, scope Scope) error {
	if _, err := fmt.Fprintf(p.Out, "Watched %s (%s) for %s: %s.\n",
		text.Plural(rep.ObjectsWatched, "object"), text.Plural(rep.TypesWatched, "type"), rep.Duration.Round(time.Second), text.Plural(rep.Writes, "write")); err != nil {
		return err
	}
	sections := []struct {
		title string
		table *output.TableData
	}{
		{fmt.Sprintf("Self-loops (one manager rewriting one object more than %s times a minute without a generation change)", num(scope.LoopRate)), Loops(rep)},
		{"Fights (a field changing hands between managers)", Fights(rep)},
		{"Busiest objects", Objects(rep)},
		{"Busiest managers", Managers(rep)},
		{"Types", Types(rep)},
		{"Gaps (history lost after 410 Gone; the watch relisted and resumed)", Gaps(rep)},
	}
	for _, s := range sections {
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
	if len(rep.Loops)+len(rep.Fights) == 0 {
		_, err := fmt.Fprintln(p.Out, "\nNo self-loop or fight found.")
		return err
	}
	return nil
}

// Loops is a row per self-loop.
func Loops(rep *churn.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("namespace", "object", "manager", "class", "writes", "per min", "changing fields")}
	for _, l := range rep.Loops {
		t.AddRow(cell(dash(l.Namespace)), cell(l.Resource+"/"+l.Name), cell(manager(l.Manager, l.Subresource)),
			output.Cell{Text: string(l.Class), Style: output.Yellow}, cell(strconv.Itoa(l.Writes)), output.Cell{Text: num(l.PerMinute), Style: output.Red},
			cell(Explain(l.Explain)))
	}
	return t
}

// Fights is a row per fight.
func Fights(rep *churn.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("namespace", "object", "field", "managers", "flips", "per min")}
	for _, f := range rep.Fights {
		t.AddRow(cell(dash(f.Namespace)), cell(f.Object), cell(f.Field), cell(strings.Join(f.Managers, ", ")),
			cell(output.AtLeast(f.Flips, f.Capped)), output.Cell{Text: num(f.PerMinute), Style: output.Red})
	}
	return t
}

// Objects is a row per ranked object.
func Objects(rep *churn.Report) *output.TableData {
	t := &output.TableData{Columns: append(output.Columns("namespace", "object", "writes", "per min", "spec", "status", "metadata", "other", "managers"),
		output.Column{Name: "changing fields", Wide: true})}
	for _, o := range rep.Objects {
		var ms []string
		for _, m := range o.Managers {
			ms = append(ms, fmt.Sprintf("%s %d", manager(m.Manager, m.Subresource), m.Writes))
		}
		t.AddRow(append([]output.Cell{cell(dash(o.Namespace)), cell(o.Resource + "/" + o.Name), cell(strconv.Itoa(o.Writes)), cell(num(o.PerMinute))},
			append(counts(o.Counts), cell(strings.Join(ms, ", ")), cell(Explain(o.Explain)))...)...)
	}
	return t
}

// Managers is a row per ranked manager.
func Managers(rep *churn.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("manager", "objects", "writes", "per min", "spec", "status", "metadata", "other")}
	for _, m := range rep.Managers {
		t.AddRow(append([]output.Cell{cell(manager(m.Manager, m.Subresource)), cell(strconv.Itoa(m.Objects)), cell(strconv.Itoa(m.Writes)), cell(num(m.PerMinute))}, counts(m.Counts)...)...)
	}
	return t
}

// Types is a row per type with activity.
func Types(rep *churn.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("type", "objects", "writes", "per min", "spec", "status", "metadata", "other", "created", "deleted")}
	for _, ty := range rep.Types {
		row := append([]output.Cell{cell(ty.Resource), cell(strconv.Itoa(ty.Objects)), cell(strconv.Itoa(ty.Writes)), cell(num(ty.PerMinute))}, counts(ty.Counts)...)
		t.AddRow(append(row, cell(strconv.Itoa(ty.Created)), cell(strconv.Itoa(ty.Deleted)))...)
	}
	return t
}

// Gaps is a row per gap.
func Gaps(rep *churn.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("type", "from", "to", "changed", "error")}
	for _, g := range rep.Gaps {
		t.AddRow(cell(g.Resource), cell(dash(g.From)), cell(g.To), cell(strconv.Itoa(g.Changes)), cell(dash(g.Error)))
	}
	return t
}

// Explain says in a phrase which fields an explained object's writes change.
func Explain(e *churn.Explanation) string {
	if e == nil {
		return "-"
	}
	var fs []string
	for _, f := range e.Fields {
		fs = append(fs, f.Path)
	}
	switch {
	case len(fs) == 0:
		return fmt.Sprintf("nothing changes in %d samples", e.Samples)
	case e.TimestampOnly:
		return "only " + strings.Join(fs, ", ") + " changes: a timestamp-only write that re-triggers its own watch"
	}
	return strings.Join(fs, ", ")
}

func counts(c churn.Counts) []output.Cell {
	return []output.Cell{cell(strconv.Itoa(c.Spec)), cell(strconv.Itoa(c.Status)), cell(strconv.Itoa(c.Metadata)), cell(strconv.Itoa(c.Other))}
}

func manager(m, sub string) string {
	if sub != "" {
		return m + " (" + sub + ")"
	}
	return m
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func cell(s string) output.Cell { return output.Cell{Text: s} }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
