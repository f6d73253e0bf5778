package lagprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-rv/kubectl-rv/pkg/lag"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the kind of the structured report.
const Kind = "LagReport"

// Scope says what was scanned and which thresholds applied.
type Scope struct {
	// Namespace is the namespace scanned; empty with AllNamespaces.
	Namespace     string   `json:"namespace,omitempty"`
	AllNamespaces bool     `json:"allNamespaces"`
	LabelSelector string   `json:"labelSelector,omitempty"`
	FieldSelector string   `json:"fieldSelector,omitempty"`
	Types         []string `json:"types"`
	FromCache     bool     `json:"fromCache"`
	MaxLag        int64    `json:"maxLag"`
	MinAge        string   `json:"minAge"`
	// For is what counts as done: generation or rollout.
	For string `json:"for"`
}

// Summary totals a report.
type Summary struct {
	Types int `json:"types"`
	// Counts' Findings is not 0 when the command exits 1.
	lag.Counts
}

// Document is the structured report (-o json|yaml).
type Document struct {
	output.TypeMeta `json:",inline"`
	// Now is when ages were measured.
	Now      time.Time         `json:"now"`
	Scope    Scope             `json:"scope"`
	Summary  Summary           `json:"summary"`
	Types    []lag.TypeSummary `json:"types"`
	Items    []lag.Item        `json:"items"`
	Warnings []string          `json:"warnings,omitempty"`
}

// NewDocument wraps a report for printing.
func NewDocument(rep *lag.Report, scope Scope) Document {
	items := rep.Items
	if items == nil {
		items = []lag.Item{}
	}
	return Document{
		TypeMeta: output.NewTypeMeta(Kind),
		Now:      rep.Now.UTC(),
		Scope:    scope,
		Summary:  Summary{Types: len(rep.Types), Counts: rep.Totals()},
		Types:    rep.Types,
		Items:    items,
		Warnings: rep.Warnings,
	}
}

// Options tune the table.
type Options struct {
	// ShowNamespace adds the NAMESPACE column (with --all-namespaces).
	ShowNamespace bool
	// MaxNotes caps the explanation lines under the table; 0 means 20.
	MaxNotes int
	// Notes receives the summary lines and the explanations; nil means
	// the table's own output. With --no-headers the command points it at
	// standard error, so that standard output holds the rows only.
	Notes io.Writer
}

// Table builds the table of the report's items.
func Table(rep *lag.Report, opts Options) *output.TableData {
	cols := []output.Column{}
	if opts.ShowNamespace {
		cols = append(cols, output.Column{Name: "namespace"})
	}
	cols = append(cols, output.Columns("name", "generation", "observed", "lag", "conditions", "state", "age", "observer")...)
	cols = append(cols, output.Column{Name: "spec-manager", Wide: true}, output.Column{Name: "spec-changed", Wide: true})
	t := &output.TableData{Columns: cols}
	for _, it := range rep.Items {
		var row []output.Cell
		if opts.ShowNamespace {
			row = append(row, output.Cell{Text: it.Namespace})
		}
		row = append(row,
			output.Cell{Text: ObjectName(it)},
			output.Cell{Text: optInt(it.Generation)},
			output.Cell{Text: optInt(it.ObservedGeneration)},
			output.Cell{Text: lagText(it)},
			output.Cell{Text: conditions(it.LaggingConditions)},
			output.Cell{Text: string(it.State), Style: stateStyle(it)},
			output.Cell{Text: Age(rep.Now, it.SpecChangedAt)},
			output.Cell{Text: dash(it.Observer)},
			output.Cell{Text: dash(it.SpecManager)},
			output.Cell{Text: it.SpecSource},
		)
		t.AddRow(row...)
	}
	return t
}

// ObjectName names an item the way kubectl get does: deployment.apps/web.
func ObjectName(it lag.Item) string {
	kind := strings.ToLower(it.Kind)
	if g := groupOf(it.APIVersion); g != "" {
		kind += "." + g
	}
	return kind + "/" + it.Name
}

func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}

func lagText(it lag.Item) string {
	if it.State == lag.NeverObserved || it.State == lag.NoGeneration {
		return "-"
	}
	return strconv.FormatInt(it.Lag, 10)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func conditions(cs []lag.Condition) string {
	if len(cs) == 0 {
		return "-"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s@%d", c.Type, c.ObservedGeneration)
	}
	return strings.Join(parts, ",")
}

func stateStyle(it lag.Item) output.Style {
	switch {
	case it.Finding:
		return output.Red
	case it.State == lag.Current:
		return output.Green
	case it.State != lag.NoGeneration:
		return output.Yellow
	}
	return output.None
}

// Age is how long ago t was, relative to now, in kubectl's style (5m10s).
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(max(now.Sub(t), 0))
}

// PrintTable writes the table, then the per-type summary lines and the
// explanations to opts.Notes (after a blank line when that is the table's
// own output). The caller says "nothing lags" on the error stream.
func PrintTable(p *output.Printer, rep *lag.Report, opts Options) error {
	notes := opts.Notes
	if notes == nil {
		notes = p.Out
	}
	if len(rep.Items) > 0 {
		if err := p.PrintTable(Table(rep, opts)); err != nil {
			return err
		}
		if notes == p.Out {
			if _, err := fmt.Fprintln(p.Out); err != nil {
				return err
			}
		}
	}
	if err := PrintSummary(notes, rep); err != nil {
		return err
	}
	return PrintNotes(notes, rep, opts.MaxNotes)
}

// PrintSummary writes one line per type that has objects, then the totals.
func PrintSummary(w io.Writer, rep *lag.Report) error {
	var b strings.Builder
	for _, t := range rep.Types {
		if t.Objects == 0 && t.Error == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", text.Escape(t.Name()), counts(t.Counts, t.Error))
	}
	fmt.Fprintf(&b, "total: %s, %s\n", text.Plural(len(rep.Types), "type"), counts(rep.Totals(), ""))
	_, err := io.WriteString(w, b.String())
	return err
}

// counts says c in words; partial is the error that left them partial.
func counts(t lag.Counts, partial string) string {
	parts := []string{text.Plural(t.Objects, "object"), fmt.Sprintf("%d current", t.Current), fmt.Sprintf("%d lagging", t.Lagging)}
	if t.NeverObserved > 0 {
		parts = append(parts, fmt.Sprintf("%d never-observed", t.NeverObserved))
	}
	if t.NoGeneration > 0 {
		parts = append(parts, fmt.Sprintf("%d no-generation", t.NoGeneration))
	}
	for _, c := range []struct {
		n     int
		state lag.State
	}{{t.RollingOut, lag.RollingOut}, {t.Paused, lag.Paused}, {t.Stalled, lag.Stalled}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.state))
		}
	}
	s := strings.Join(parts, ", ")
	s += fmt.Sprintf(" (%s over the thresholds)", text.Plural(t.Findings, "finding"))
	if partial != "" {
		s += " [partial: " + partial + "]"
	}
	return s
}

// PrintNotes writes the explanations of the items, the findings first. An
// explanation shared by several objects is written once, naming up to three
// of them; at most max lines are written (20 when max is 0).
func PrintNotes(w io.Writer, rep *lag.Report, max int) error {
	if max <= 0 {
		max = 20
	}
	var order []string
	objs := map[string][]string{}
	for _, pass := range []bool{true, false} {
		for _, it := range rep.Items {
			if it.Finding != pass {
				continue
			}
			for _, e := range it.Explanations {
				if _, ok := objs[e]; !ok {
					order = append(order, e)
				}
				objs[e] = append(objs[e], ObjectName(it))
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nnotes:\n")
	for i, e := range order {
		if i == max {
			fmt.Fprintf(&b, "  ... and %d more (-o json lists every explanation)\n", len(order)-max)
			break
		}
		names := objs[e]
		who := strings.Join(names[:min(len(names), 3)], ", ")
		if len(names) > 3 {
			who += fmt.Sprintf(" and %d more", len(names)-3)
		}
		b.WriteString("  " + text.Escape(who+": "+e) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PrintChange writes one line for an item whose state changed while
// following (kubectl get -w style): the table row without a header.
func PrintChange(p *output.Printer, rep *lag.Report, it lag.Item, opts Options) error {
	one := *rep
	one.Items = []lag.Item{it}
	q := *p
	q.NoHeaders = true
	return q.PrintTable(Table(&one, opts))
}
