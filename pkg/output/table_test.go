package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// tablewriterRender is how RenderTable laid tables out before it aligned
// columns itself: tablewriter with kubectl's plain look, trailing blanks
// trimmed. The aligner must lay out every table the same way.
func tablewriterRender(p *Printer, t *TableData) []byte {
	var keep []int
	for i, c := range t.Columns {
		if !c.Wide || p.Format == Wide {
			keep = append(keep, i)
		}
	}
	pad := tw.CellPadding{Global: tw.Padding{Left: "", Right: "   ", Overwrite: true}}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Borders: tw.BorderNone, Settings: tw.Settings{Separators: tw.SeparatorsNone, Lines: tw.LinesNone}})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{Formatting: tw.CellFormatting{AutoFormat: tw.Off, AutoWrap: tw.WrapNone}, Alignment: tw.CellAlignment{Global: tw.AlignLeft}, Padding: pad},
			Row:    tw.CellConfig{Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone}, Alignment: tw.CellAlignment{Global: tw.AlignLeft}, Padding: pad},
		}),
		tablewriter.WithTrimSpace(tw.Off),
	)
	if !p.NoHeaders {
		var hdr []any
		for _, k := range keep {
			hdr = append(hdr, strings.ToUpper(t.Columns[k].Name))
		}
		tbl.Header(hdr...)
	}
	for _, r := range t.Rows {
		var row []string
		for _, k := range keep {
			row = append(row, p.Paint(r[k].Style, text.Escape(r[k].Text)))
		}
		_ = tbl.Append(row)
	}
	_ = tbl.Render()
	var out bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if strings.TrimSpace(l) == "" && len(t.Rows) == 0 && p.NoHeaders {
			continue
		}
		out.WriteString(strings.TrimRight(l, " "))
		out.WriteByte('\n')
	}
	return out.Bytes()
}

var (
	ansiCodes      = regexp.MustCompile("\x1b\\[[0-9;]*m")
	trailingBlanks = regexp.MustCompile(" +\n")
)

// TestRenderTableMatchesTablewriter lays out random tables (empty cells,
// wide columns, accents, CJK, emoji, control characters, color) both ways.
func TestRenderTableMatchesTablewriter(t *testing.T) {
	words := []string{"", "", "a", "web", "kube-controller-manager", "Go-http-client", "café", "名前", "ｆｕｌｌ", "🙂x", "  padded  ", "1.5/s", "-", "tab\there", "esc\x1b]0;x\a", "\x00", "\x7f"}
	rng := rand.New(rand.NewPCG(20261121, 1))
	for i := range 500 {
		cols := 1 + rng.IntN(5)
		td := &TableData{}
		for c := range cols {
			// (Column names are the program's own, never escaped before.)
			td.Columns = append(td.Columns, Column{Name: fmt.Sprintf("col%d %s", c, words[rng.IntN(len(words)-4)]), Wide: rng.IntN(4) == 0})
		}
		for range rng.IntN(6) {
			row := make([]Cell, cols)
			for c := range row {
				row[c] = Cell{Text: words[rng.IntN(len(words))] + words[rng.IntN(len(words))], Style: Style(rng.IntN(3))}
			}
			td.AddRow(row...)
		}
		p := &Printer{Format: []Format{Table, Wide}[rng.IntN(2)], NoHeaders: rng.IntN(4) == 0, Color: rng.IntN(2) == 0}
		got, want := p.RenderTable(td), tablewriterRender(p, td)
		if shown := slices.IndexFunc(td.Columns, func(c Column) bool { return !c.Wide || p.Format == Wide }); shown < 0 {
			// No column to show: nothing, where tablewriter wrote a blank line.
			if len(got) != 0 {
				t.Fatalf("table %d shows no column but printed %q", i, got)
			}
			continue
		}
		if p.Color {
			// tablewriter writes a stray reset after a colored cell's
			// padding, which keeps the blanks before it at the end of a line.
			// (A colored cell's own trailing blanks stay inside its color.)
			plain := func(b []byte) []byte {
				return trailingBlanks.ReplaceAll(ansiCodes.ReplaceAll(b, nil), []byte("\n"))
			}
			got, want = plain(got), plain(want)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("table %d (%+v) differs from tablewriter's (-tablewriter +ours):\n%s", i, *p, diff)
		}
	}
}

// BenchmarkRenderTable renders a 5,000-row, six-column table.
func BenchmarkRenderTable(b *testing.B) {
	td := &TableData{Columns: Columns("field", "managers", "operation", "subresource", "apiVersion", "age")}
	for i := range 5000 {
		td.AddRow(Cells(fmt.Sprintf(".spec.items[name=\"item-%05d\"].image", i), "manager-01,manager-02", "Update", "", "example.com/v1", "5m")...)
	}
	p := &Printer{Format: Table}
	b.ReportAllocs()
	for b.Loop() {
		p.RenderTable(td)
	}
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		in    string
		width int
		want  string
	}{
		{"kube-controller-manager (status)", 32, "kube-controller-manager (status)"},
		{"kube-controller-manager (status)", 10, "kube-cont…"},
		{"名前名前", 5, "名前…"},
		{"abc", 0, ""},
	} {
		if got := Truncate(tt.in, tt.width); got != tt.want || DisplayWidth(got) > tt.width {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
		}
	}
}
