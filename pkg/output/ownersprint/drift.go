package ownersprint

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// Drift writes one row per owner other than the expected manager of each
// field that has one: FIELD, MANAGER, OPERATION, SUBRESOURCE (scale or
// status when the owner wrote through it), the time (by Options.Time),
// EXPECTED (the manager expected to own everything) and CO-OWNED (yes when
// the expected manager owns the field too). Objects without drift have no
// rows; the command says so.
func Drift(p *output.Printer, objs []owners.Object, opts Options) error {
	t := &output.TableData{Columns: append(objectColumns(objs, opts), output.Columns("FIELD", "MANAGER", "OPERATION", "SUBRESOURCE")...)}
	t.Columns = append(t.Columns, timeColumn(opts.Time, "AGE")...)
	t.Columns = append(t.Columns, output.Columns("EXPECTED", "CO-OWNED")...)
	t.Columns = append(t.Columns, output.Column{Name: "APIVERSION", Wide: true})
	t.Columns = append(t.Columns, positionColumn(opts)...)
	for _, o := range objs {
		if o.Drift == nil || len(o.Drift.Fields) == 0 {
			continue
		}
		lead := objectCells(objs, o, opts)
		for _, f := range o.Drift.Fields {
			field := output.Cell{Text: string(managedfields.AppendDisplayPath(nil, f.Node.Path())), Style: output.Yellow}
			coOwned := "no"
			if f.Shared {
				coOwned = "yes"
			}
			var at []output.Cell
			if opts.Locate != nil {
				at = output.Cells(positionText(opts.Locate.field(o, f.Node.Path())))
			}
			for _, ow := range f.Others {
				row := append(append([]output.Cell(nil), lead...), field)
				row = append(row, output.Cells(managerText(ow.Manager), string(ow.Operation), dash(ow.Subresource))...)
				if opts.Time != TimeNone {
					row = append(row, output.Cell{Text: dash(timeText(opts.Time, opts.Now, ow.Time))})
				}
				row = append(row, output.Cells(managerText(o.Drift.Expected), coOwned, dash(ow.APIVersion))...)
				row = append(row, at...)
				t.AddRow(row...)
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return p.PrintTable(t)
}
