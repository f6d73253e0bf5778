package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// TableData is a table to print: kubectl's plain look, upper-case headers,
// columns three spaces apart, no borders.
type TableData struct {
	Columns []Column
	Rows    [][]Cell
}

// Column is a table column. Wide columns are shown only with -o wide.
type Column struct {
	Name string
	Wide bool
}

// Cell is one table cell. Text is escaped for the terminal when printed.
type Cell struct {
	Text  string
	Style Style
}

// Cells makes plain cells from strings.
func Cells(texts ...string) []Cell {
	cs := make([]Cell, len(texts))
	for i, t := range texts {
		cs[i] = Cell{Text: t}
	}
	return cs
}

// Columns makes narrow columns from names.
func Columns(names ...string) []Column {
	cs := make([]Column, len(names))
	for i, n := range names {
		cs[i] = Column{Name: n}
	}
	return cs
}

// AddRow appends a row; it panics when the row does not fit the columns,
// which is a bug in the caller.
func (t *TableData) AddRow(cells ...Cell) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("output: row has %d cells, table has %d columns", len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// PrintTable writes t. With -o wide the wide columns are included.
func (p *Printer) PrintTable(t *TableData) error {
	_, err := p.Out.Write(p.RenderTable(t))
	return err
}

// RenderTable returns t as text.
func (p *Printer) RenderTable(t *TableData) []byte {
	keep := make([]int, 0, len(t.Columns))
	for i, c := range t.Columns {
		if !c.Wide || p.Format == Wide {
			keep = append(keep, i)
		}
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Settings: tw.Settings{
				Separators: tw.SeparatorsNone,
				Lines:      tw.LinesNone,
			},
		})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: "   ", Overwrite: true}},
			},
			Row: tw.CellConfig{
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
				Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
				Padding:    tw.CellPadding{Global: tw.Padding{Left: "", Right: "   ", Overwrite: true}},
			},
		}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	if !p.NoHeaders {
		hdr := make([]any, len(keep))
		for i, k := range keep {
			hdr[i] = strings.ToUpper(t.Columns[k].Name)
		}
		tbl.Header(hdr...)
	}
	for _, r := range t.Rows {
		row := make([]string, len(keep))
		for i, k := range keep {
			row[i] = p.Paint(r[k].Style, Escape(r[k].Text))
		}
		_ = tbl.Append(row)
	}
	_ = tbl.Render()
	// kubectl prints no trailing blanks; the renderer pads the last column.
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	var out bytes.Buffer
	for _, l := range lines {
		if strings.TrimSpace(l) == "" && len(t.Rows) == 0 && p.NoHeaders {
			continue
		}
		out.WriteString(strings.TrimRight(l, " "))
		out.WriteByte('\n')
	}
	return out.Bytes()
}
