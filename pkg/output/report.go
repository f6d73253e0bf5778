package output

import (
	"bytes"
	"fmt"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// ReportCSS is the style of the HTML reports (simulate's, conflicts' and
// leases'): their tables look alike.
const ReportCSS = `<style>
body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#1f2328;max-width:1040px}
table{border-collapse:collapse;margin:12px 0 24px}
th,td{padding:4px 10px;border-bottom:1px solid #d0d7de;text-align:right;font-size:13px}
th:first-child,td:first-child{text-align:left}
th{background:#f6f8fa}
.bad{color:#d6452b;font-weight:bold}.good{color:#2e9e44}
p.desc{color:#444;max-width:900px}
</style>`

// HTMLOpen starts a report page (simulate's, conflicts', leases'): its
// title, the reports' style (ReportCSS) and css, the page's own rules.
func HTMLOpen(b *bytes.Buffer, title, css string) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(b, "<title>%s</title>\n", text.EscapeMarkup(title))
	b.WriteString(ReportCSS)
	if css != "" {
		b.WriteString("\n<style>" + css + "</style>")
	}
	b.WriteString("</head><body>\n")
}

// HTMLClose ends a report page with a line saying what made it; footer is
// the printer's own words, markup allowed.
func HTMLClose(b *bytes.Buffer, footer string) {
	fmt.Fprintf(b, "<p style=\"color:#777\">%s</p>\n</body></html>\n", footer)
}

// HTMLTable writes t as a report page's table, its wide columns too;
// every cell is escaped, and a Red cell is marked bad.
func HTMLTable(b *bytes.Buffer, t *TableData) {
	b.WriteString("<table><tr>")
	for _, c := range t.Columns {
		fmt.Fprintf(b, "<th>%s</th>", text.EscapeMarkup(c.Name))
	}
	b.WriteString("</tr>\n")
	for _, row := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range row {
			class := ""
			if c.Style == Red {
				class = ` class="bad"`
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, text.EscapeMarkup(c.Text))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}
