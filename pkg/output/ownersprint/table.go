package ownersprint

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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

// Table writes one row per owned field: FIELD, MANAGERS, OPERATION,
// SUBRESOURCE, APIVERSION, AGE (parallel lists when a field has several
// owners), then the hazards.
func Table(p *output.Printer, objs []owners.Object, opts Options) error {
	t := &output.TableData{Columns: append(objectColumns(objs, opts), output.Columns("FIELD", "MANAGERS", "OPERATION", "SUBRESOURCE", "APIVERSION", "AGE")...)}
	t.Columns = append(t.Columns, output.Column{Name: "PRESENT", Wide: true})
	rows := 0
	for _, o := range objs {
		rows += o.Ownership.OwnedCount()
	}
	t.Rows = make([][]output.Cell, 0, rows)
	for _, o := range objs {
		lead := objectCells(objs, o, opts)
		// Entry indexes name owners within one object only.
		cols := ownerColumns{now: opts.Now, cache: map[[4]int][5]string{}}
		o.Ownership.EachField(false, func(n *managedfields.Node, path string, _ []string) {
			field := output.Cell{Text: path}
			switch {
			case !n.Present:
				field.Style = output.Red
			case len(n.Owners) > 1:
				field.Style = output.Yellow
			}
			c := cols.of(n.Owners)
			row := append(slices.Clip(lead), field,
				output.Cell{Text: c[0]}, output.Cell{Text: c[1]}, output.Cell{Text: c[2]},
				output.Cell{Text: c[3]}, output.Cell{Text: c[4]}, output.Cell{Text: strconv.FormatBool(n.Present)})
			t.AddRow(row...)
		})
	}
	if err := p.PrintTable(t); err != nil {
		return err
	}
	return printHazards(p, objs, opts)
}

// ownerColumns writes the owner columns of the table (MANAGERS, OPERATION,
// SUBRESOURCE, APIVERSION, AGE: parallel lists) for one object,
// remembering them for the few owner lists a large object has.
type ownerColumns struct {
	now   time.Time
	cache map[[4]int][5]string
}

func (c *ownerColumns) of(owners []managedfields.Owner) [5]string {
	key, cacheable := ownersKey(owners)
	if s, ok := c.cache[key]; ok && cacheable {
		return s
	}
	var mgrs, ops, subs, vers, ages []string
	for _, ow := range owners {
		mgrs = append(mgrs, ow.Manager)
		ops = append(ops, string(ow.Operation))
		subs = append(subs, dash(ow.Subresource))
		vers = append(vers, dash(ow.APIVersion))
		ages = append(ages, dash(age(c.now, ow.Time)))
	}
	s := [5]string{strings.Join(mgrs, ","), strings.Join(ops, ","), strings.Join(subs, ","), strings.Join(vers, ","), strings.Join(ages, ",")}
	if cacheable {
		c.cache[key] = s
	}
	return s
}

// Summary writes one row per managedFields entry: MANAGER, OPERATION,
// APIVERSION, SUBRESOURCE, LAST WRITE, FIELDS, then the hazards.
func Summary(p *output.Printer, objs []owners.Object, opts Options) error {
	t := &output.TableData{Columns: append(objectColumns(objs, opts), output.Columns("MANAGER", "OPERATION", "APIVERSION", "SUBRESOURCE", "LAST WRITE", "FIELDS")...)}
	t.Columns = append(t.Columns, output.Column{Name: "ENTRY", Wide: true}, output.Column{Name: "TIME", Wide: true})
	for _, o := range objs {
		for _, e := range o.Entries {
			ts := "-"
			if !e.Time.IsZero() {
				ts = e.Time.UTC().Format("2006-01-02T15:04:05Z")
			}
			row := append(objectCells(objs, o, opts), output.Cells(managerText(e.Manager), string(e.Operation), dash(e.APIVersion), dash(e.Subresource),
				dash(age(opts.Now, e.Time)), strconv.Itoa(e.FieldCount()), strconv.Itoa(e.Index), ts)...)
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
