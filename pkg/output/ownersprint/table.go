package ownersprint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// objectColumns are the leading columns of tables that hold several objects.
func objectColumns(objs []owners.Object, opts Options) []output.Column {
	if len(objs) < 2 && !opts.ObjectColumns {
		return nil
	}
	return output.Columns("NAMESPACE", "OBJECT")
}

func objectCells(objs []owners.Object, o owners.Object, opts Options) []output.Cell {
	if len(objs) < 2 && !opts.ObjectColumns {
		return nil
	}
	ns := o.Object.GetNamespace()
	if ns == "" {
		ns = "-"
	}
	return output.Cells(ns, o.Object.GetKind()+"/"+o.Object.GetName())
}

// MultiMarker marks, in the table view, the rows of a field owned by more
// than one entry.
const MultiMarker = "MULTI"

// timeColumn is the table column of the entries' times, by format: AGE for
// ages, TIME for full times, none for TimeNone.
func timeColumn(f TimeFormat, name string) []output.Column {
	switch f {
	case TimeNone:
		return nil
	case TimeFull:
		return output.Columns("TIME")
	}
	return output.Columns(name)
}

// Table writes one row per owner of each owned field: FIELD, MANAGER,
// OPERATION, SUBRESOURCE, APIVERSION, AGE (or TIME, or none, by
// Options.Time) and SHARED, which is MULTI on every row of a field owned by
// more than one entry; then the hazards.
func Table(p *output.Printer, objs []owners.Object, opts Options) error {
	t := &output.TableData{Columns: append(objectColumns(objs, opts), output.Columns("FIELD", "MANAGER", "OPERATION", "SUBRESOURCE", "APIVERSION")...)}
	t.Columns = append(t.Columns, timeColumn(opts.Time, "AGE")...)
	t.Columns = append(t.Columns, output.Column{Name: "SHARED"}, output.Column{Name: "PRESENT", Wide: true})
	t.Columns = append(t.Columns, positionColumn(opts)...)
	rows := 0
	for _, o := range objs {
		rows += o.Ownership.OwnedCount()
	}
	t.Rows = make([][]output.Cell, 0, rows)
	for _, o := range objs {
		lead := objectCells(objs, o, opts)
		// Entry indexes name owners within one object only.
		cols := ownerColumns{opts: opts, cache: map[int][]output.Cell{}}
		eachDisplayField(o.Ownership, func(n *managedfields.Node, path string) {
			field := output.Cell{Text: path}
			shared := output.Cell{Text: "-"}
			switch {
			case !n.Present:
				field.Style = output.Red
			case len(n.Owners) > 1:
				field.Style = output.Yellow
			}
			if len(n.Owners) > 1 {
				shared = output.Cell{Text: MultiMarker, Style: output.Yellow}
			}
			tail := []output.Cell{shared, {Text: strconv.FormatBool(n.Present)}}
			if opts.Locate != nil {
				tail = append(tail, output.Cell{Text: positionText(opts.Locate.field(o, n.Path()))})
			}
			for _, ow := range n.Owners {
				row := append(slices.Clip(lead), field)
				row = append(row, cols.of(ow)...)
				t.AddRow(append(row, tail...)...)
			}
		})
	}
	if err := p.PrintTable(t); err != nil {
		return err
	}
	return printHazards(p, objs, opts)
}

// positionColumn is the -o wide column of the fields' places in the files
// the objects were read from, when they were.
func positionColumn(opts Options) []output.Column {
	if opts.Locate == nil {
		return nil
	}
	return []output.Column{{Name: "POSITION", Wide: true}}
}

// ownerColumns writes the owner cells of a table row (MANAGER, OPERATION,
// SUBRESOURCE, APIVERSION and the time) for one object, remembering them
// per entry: a large object has thousands of fields and a few entries.
type ownerColumns struct {
	opts  Options
	cache map[int][]output.Cell
}

func (c *ownerColumns) of(ow managedfields.Owner) []output.Cell {
	if s, ok := c.cache[ow.Entry]; ok {
		return s
	}
	s := output.Cells(managerText(ow.Manager), string(ow.Operation), dash(ow.Subresource), dash(ow.APIVersion))
	if c.opts.Time != TimeNone {
		s = append(s, output.Cell{Text: dash(timeText(c.opts.Time, c.opts.Now, ow.Time))})
	}
	c.cache[ow.Entry] = s
	return s
}

// Summary writes one row per managedFields entry: MANAGER, OPERATION,
// APIVERSION, SUBRESOURCE, LAST WRITE, FIELDS, then the hazards.
func Summary(p *output.Printer, objs []owners.Object, opts Options) error {
	t := &output.TableData{Columns: append(objectColumns(objs, opts), output.Columns("MANAGER", "OPERATION", "APIVERSION", "SUBRESOURCE")...)}
	t.Columns = append(t.Columns, timeColumn(opts.Time, "LAST WRITE")...)
	t.Columns = append(t.Columns, output.Column{Name: "FIELDS"}, output.Column{Name: "ENTRY", Wide: true})
	// -o wide adds the full time next to the age (with --time full it is
	// already there).
	wideTime := opts.Time != TimeNone && opts.Time != TimeFull
	if wideTime {
		t.Columns = append(t.Columns, output.Column{Name: "TIME", Wide: true})
	}
	for _, o := range objs {
		for _, e := range o.Entries {
			row := append(objectCells(objs, o, opts), output.Cells(managerText(e.Manager), string(e.Operation), dash(e.APIVersion), dash(e.Subresource))...)
			if opts.Time != TimeNone {
				row = append(row, output.Cell{Text: dash(timeText(opts.Time, opts.Now, e.Time))})
			}
			row = append(row, output.Cells(strconv.Itoa(e.FieldCount()), strconv.Itoa(e.Index))...)
			if wideTime {
				row = append(row, output.Cell{Text: dash(timeText(TimeFull, opts.Now, e.Time))})
			}
			t.AddRow(row...)
		}
	}
	if err := p.PrintTable(t); err != nil {
		return err
	}
	return printHazards(p, objs, opts)
}

func printHazards(p *output.Printer, objs []owners.Object, opts Options) error {
	t := &output.TableData{Columns: append(objectColumns(objs, opts), output.Columns("HAZARD", "MANAGERS", "FIELDS", "DETAIL")...)}
	for _, o := range objs {
		for _, h := range o.Hazards {
			row := append(objectCells(objs, o, opts), output.Cell{Text: string(h.Type), Style: output.Yellow},
				output.Cell{Text: strings.Join(h.Managers(), ",")}, output.Cell{Text: fieldCount(h.Fields)},
				output.Cell{Text: h.Message})
			t.AddRow(row...)
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(p.Out); err != nil {
		return err
	}
	return p.PrintTable(t)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func managerText(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func fieldCount[T any](fs []T) string {
	if len(fs) == 0 {
		return "-"
	}
	return strconv.Itoa(len(fs))
}
