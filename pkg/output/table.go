package output

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
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

// RenderTable returns t as text: left-aligned columns three spaces apart,
// sized by the display width of their cells (wide East Asian characters
// count two), no trailing blanks, as kubectl prints.
func (p *Printer) RenderTable(t *TableData) []byte {
	keep := make([]int, 0, len(t.Columns))
	for i, c := range t.Columns {
		if !c.Wide || p.Format == Wide {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	rows, widths := p.escapeCells(t, keep)
	return p.layOut(rows, widths)
}

// tableCell is a cell ready to lay out.
type tableCell struct {
	text  string // escaped
	width int
	style Style
}

// escapeCells returns the header (unless --no-headers) and the rows of the
// kept columns, escaped, and each column's width.
func (p *Printer) escapeCells(t *TableData, keep []int) (rows [][]tableCell, widths []int) {
	rows = make([][]tableCell, 0, len(t.Rows)+1)
	widths = make([]int, len(keep))
	add := func(row []tableCell) {
		for i, c := range row {
			widths[i] = max(widths[i], c.width)
		}
		rows = append(rows, row)
	}
	if !p.NoHeaders {
		row := make([]tableCell, len(keep))
		for i, k := range keep {
			h := text.Escape(strings.ToUpper(t.Columns[k].Name))
			row[i] = tableCell{text: h, width: displayWidth(h)}
		}
		add(row)
	}
	cells := make([]tableCell, len(t.Rows)*len(keep))
	for r, in := range t.Rows {
		row := cells[r*len(keep) : (r+1)*len(keep)]
		for i, k := range keep {
			cell, width := in[k].Text, len(in[k].Text)
			if !text.PrintableASCII(cell) {
				cell = text.Escape(cell)
				width = displayWidth(cell)
			}
			row[i] = tableCell{text: cell, width: width, style: in[k].Style}
		}
		add(row)
	}
	return rows, widths
}

// layOut writes rows in columns of the given widths.
func (p *Printer) layOut(rows [][]tableCell, widths []int) []byte {
	line := 0 // the widest line's width: blanks owed never exceed it
	for _, w := range widths {
		line += w + len(columnGap)
	}
	spaces := strings.Repeat(" ", line)
	var out bytes.Buffer
	out.Grow(len(rows) * (line + 1))
	for _, row := range rows {
		pad := 0 // blanks owed before the next non-empty cell
		for i, c := range row {
			if c.text != "" {
				out.WriteString(spaces[:pad])
				out.WriteString(p.Paint(c.style, c.text))
				pad = 0
			}
			if i < len(row)-1 {
				pad += widths[i] - c.width + len(columnGap)
			}
		}
		// Cells may end in blanks too; kubectl prints none at line ends.
		b := out.Bytes()
		out.Truncate(len(bytes.TrimRight(b, " ")))
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// columnGap separates table columns.
const columnGap = "   "

// displayWidth is how many terminal columns s takes; s is escaped, so it
// holds no escape sequences.
func displayWidth(s string) int {
	if text.PrintableASCII(s) {
		return len(s)
	}
	return twwidth.WidthNoCache(s)
}

// Ellipsis marks a cell cut to fit its column.
const Ellipsis = "…"

// DisplayWidth is how many terminal columns s takes (wide East Asian
// characters take two).
func DisplayWidth(s string) int { return displayWidth(s) }

// Truncate cuts s to at most width terminal columns, ending it with
// Ellipsis when it had to cut, so that a reader knows there is more.
func Truncate(s string, width int) string {
	if displayWidth(s) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := displayWidth(string(r))
		if used+w > width-1 {
			break
		}
		b.WriteRune(r)
		used += w
	}
	return b.String() + Ellipsis
}
