package watchprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/diff"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// EventKind and SummaryKind are the kinds of the JSON lines.
const (
	EventKind   = "WatchEvent"
	SummaryKind = "WatchSummary"
)

// Options say how to render.
type Options struct {
	// Diff prints every change of a row under it.
	Diff bool
	// ShowNamespace adds a NAMESPACE column (watches across namespaces).
	ShowNamespace bool
	// Location is the time zone of the TIME column; nil means UTC.
	Location *time.Location
	// MaxFields is how many changes the FIELDS column shows before "+N
	// more" (all with -o wide). Default 3.
	MaxFields int
	// ErrOut receives warnings and notices; nil discards them.
	ErrOut io.Writer
}

// Printer renders a watch stream.
type Printer struct {
	p      *output.Printer
	opts   Options
	widths []int
	header bool
}

// New returns a Printer writing through p (its format, color and headers).
func New(p *output.Printer, opts Options) *Printer {
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	if opts.MaxFields <= 0 {
		opts.MaxFields = 3
	}
	if opts.ErrOut == nil {
		opts.ErrOut = io.Discard
	}
	return &Printer{p: p, opts: opts}
}

// The Printer is the sink of kubectl rv watch: rows to Out, warnings and
// notices to ErrOut.
var _ inspect.Sink = (*Printer)(nil)

// Warning writes a warning the watch survives to ErrOut.
func (w *Printer) Warning(msg string) {
	fmt.Fprintf(w.opts.ErrOut, "warning: %s\n", text.Escape(msg))
}

// Empty tells on ErrOut that a resource's initial list found nothing yet.
func (w *Printer) Empty(resource, rv string) {
	fmt.Fprintf(w.opts.ErrOut, "No %s found yet; watching from resourceVersion %s.\n", text.Escape(resource), text.Escape(rv))
}

type eventJSON struct {
	output.TypeMeta
	inspect.Event
}

type summaryJSON struct {
	output.TypeMeta
	inspect.Summary
}

func (w *Printer) columns() []string {
	cols := []string{"TIME", "EVENT"}
	if w.opts.ShowNamespace {
		cols = append(cols, "NAMESPACE")
	}
	cols = append(cols, "OBJECT", "RV", "REVS", "GEN", "MANAGER", "FIELDS")
	if w.p.Format == output.Wide {
		cols = append(cols, "NOTE")
	}
	return cols
}

// Event renders one event.
func (w *Printer) Event(e inspect.Event) error {
	if w.p.Structured() {
		return w.p.PrintJSONLine(eventJSON{TypeMeta: output.NewTypeMeta(EventKind), Event: e})
	}
	var b strings.Builder
	if !w.header && !w.p.NoHeaders {
		w.header = true
		w.writeRow(&b, toCells(w.columns()))
	}
	w.writeRow(&b, w.cells(e))
	if w.opts.Diff {
		w.writeDiff(&b, e)
	}
	_, err := io.WriteString(w.p.Out, b.String())
	return err
}

func toCells(ss []string) []output.Cell {
	cs := make([]output.Cell, len(ss))
	for i, s := range ss {
		cs[i] = output.Cell{Text: s}
	}
	return cs
}

func (w *Printer) cells(e inspect.Event) []output.Cell {
	cells := []output.Cell{{Text: e.Time.In(w.opts.Location).Format("15:04:05")}, {Text: string(e.Type), Style: eventStyle(e.Type)}}
	if w.opts.ShowNamespace {
		cells = append(cells, output.Cell{Text: dash(e.Namespace)})
	}
	manager, mStyle := managerCell(e)
	cells = append(cells,
		output.Cell{Text: e.Object},
		output.Cell{Text: rvCell(e)},
		output.Cell{Text: revsCell(e)},
		output.Cell{Text: genCell(e)},
		output.Cell{Text: dash(manager), Style: mStyle},
		output.Cell{Text: w.fieldsText(e)},
	)
	note := notes(e, w.p.Format == output.Wide)
	if w.p.Format == output.Wide {
		return append(cells, output.Cell{Text: note, Style: output.Yellow})
	}
	if note != "" {
		last := &cells[len(cells)-1]
		if last.Text == "" {
			last.Text = "(" + note + ")"
		} else {
			last.Text += " (" + note + ")"
		}
	}
	return cells
}

func eventStyle(t inspect.EventType) output.Style {
	switch t {
	case inspect.EventAdded:
		return output.Green
	case inspect.EventDeleted, inspect.EventFight:
		return output.Red
	case inspect.EventGap:
		return output.Yellow
	case inspect.EventBookmark:
		return output.Faint
	}
	return output.None
}

// rvCell is the new resourceVersion, "?" when unknown (a deletion seen
// only after a gap).
func rvCell(e inspect.Event) string {
	if e.ResourceVersion == "" {
		return "?"
	}
	return e.ResourceVersion
}

func revsCell(e inspect.Event) string {
	if e.Revisions == nil {
		return "-"
	}
	return "+" + strconv.FormatUint(*e.Revisions, 10)
}

// genCell is the generation, with * when this write bumped it.
func genCell(e inspect.Event) string {
	if e.Generation == nil {
		return "-"
	}
	gen := strconv.FormatInt(*e.Generation, 10)
	if e.GenerationBumped {
		gen += "*"
	}
	return gen
}

// managerCell is the writer, the candidates when it is unknown, or the
// managers of a fight.
func managerCell(e inspect.Event) (string, output.Style) {
	if e.Type == inspect.EventFight {
		return strings.Join(e.Fight.Managers, " <-> "), output.Red
	}
	if e.Writer == nil {
		return "", output.None
	}
	if e.Writer.Known() {
		return e.Writer.String(), output.None
	}
	manager := e.Writer.String()
	if len(e.Writer.Candidates) > 0 {
		manager += ": " + strings.Join(e.Writer.Candidates, ", ")
	}
	return manager, output.Faint
}

// fieldsText is the FIELDS cell: the changes, or what a GAP lost and a
// FIGHT fought over.
func (w *Printer) fieldsText(e inspect.Event) string {
	switch e.Type {
	case inspect.EventGap:
		g := e.Gap
		fields := fmt.Sprintf("lost events after RV %s up to %s", dash(g.From), g.To)
		if g.Revisions != nil {
			fields += fmt.Sprintf(" (%d revisions)", *g.Revisions)
		}
		return fields + fmt.Sprintf("; %s seen after the gap", text.Plural(g.Changes, "change"))
	case inspect.EventFight:
		f := e.Fight
		times := fmt.Sprintf("%d times", f.Flips)
		if f.Capped {
			times = "at least " + times
		}
		return fmt.Sprintf("%s changed hands %s in %s (%.1f/min)", f.Field, times, output.Duration(time.Duration(f.Span)), f.PerMinute)
	case inspect.EventModified:
		if len(e.Fields) == 0 && e.PreviousResourceVersion != "" {
			// resourceVersion, generation and managedFields are not diffed:
			// a write that changed nothing else changed ownership only.
			return "(only managedFields changed)"
		}
	}
	return w.fieldsCell(e.Fields)
}

func notes(e inspect.Event, wide bool) string {
	var ns []string
	if e.Initial {
		ns = append(ns, "initial")
	}
	if e.AfterGap {
		ns = append(ns, "seen after gap")
	}
	if e.Hot {
		ns = append(ns, fmt.Sprintf("hot %.2g/s", e.WriteRate))
	}
	if wide && e.Churn != "" {
		ns = append(ns, string(e.Churn))
	}
	return strings.Join(ns, ", ")
}

func (w *Printer) fieldsCell(cs []diff.Change) string {
	limit := w.opts.MaxFields
	if w.p.Format == output.Wide {
		limit = len(cs)
	}
	parts := make([]string, 0, min(len(cs), limit)+1)
	for i, c := range cs {
		if i == limit {
			parts = append(parts, fmt.Sprintf("+%d more", len(cs)-limit))
			break
		}
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// widths are the columns' widths. A table keeps them, so that every row
// stays under the header as a stream goes on: a longer cell is cut to its
// column with output.Ellipsis, except a number (RV, REVS, GEN), which must
// be read whole and widens its column instead. -o wide cuts nothing: a
// longer cell widens its column for the rows after it.
var widths = map[string]int{"TIME": 8, "EVENT": 8, "NAMESPACE": 12, "OBJECT": 26, "RV": 10, "REVS": 5, "GEN": 3, "MANAGER": 32}

// whole are the columns never cut.
var whole = map[string]bool{"RV": true, "REVS": true, "GEN": true}

func (w *Printer) writeRow(b *strings.Builder, cells []output.Cell) {
	cols := w.columns()
	if w.widths == nil {
		w.widths = make([]int, len(cols))
		for i, c := range cols {
			w.widths[i] = max(len(c), widths[c])
		}
	}
	for i, c := range cells {
		text := text.Escape(c.Text)
		if i == len(cells)-1 {
			b.WriteString(w.p.Paint(c.Style, text))
			break
		}
		n := output.DisplayWidth(text)
		if n > w.widths[i] && w.p.Format != output.Wide && !whole[cols[i]] {
			text = output.Truncate(text, w.widths[i])
			n = output.DisplayWidth(text)
		}
		if n > w.widths[i] {
			w.widths[i] = n
		}
		b.WriteString(w.p.Paint(c.Style, text))
		b.WriteString(strings.Repeat(" ", w.widths[i]-n+3))
	}
	// No trailing blanks, as kubectl.
	s := strings.TrimRight(b.String(), " ")
	b.Reset()
	b.WriteString(s)
	b.WriteByte('\n')
}

func (w *Printer) writeDiff(b *strings.Builder, e inspect.Event) {
	for _, c := range e.Fields {
		path := text.Escape(c.Path.String())
		switch c.Op {
		case diff.Added:
			b.WriteString(w.p.Paint(output.Green, "    + "+path+": "+text.Escape(diff.FormatValue(c.New))))
		case diff.Removed:
			b.WriteString(w.p.Paint(output.Red, "    - "+path+": "+text.Escape(diff.FormatValue(c.Old))))
		default:
			b.WriteString(w.p.Paint(output.Yellow, "    ~ "+path+": "+text.Escape(diff.FormatValue(c.Old))+" -> "+text.Escape(diff.FormatValue(c.New))))
		}
		b.WriteByte('\n')
	}
}
