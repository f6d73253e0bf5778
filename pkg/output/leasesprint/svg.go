package leasesprint

import (
	"bytes"
	"fmt"
	"html"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// The picture's geometry, as in conflicts' and simulate's reports.
const (
	svgWidth   = 1000
	laneLeft   = 330
	laneRight  = 30
	laneHeight = 22
	maxLanes   = 40
	axisTicks  = 8
)

// esc makes server strings safe in XML: control characters escaped as on
// a terminal, then markup.
func esc(s string) string { return html.EscapeString(text.Escape(s)) }

// lane is one candidate of one lock.
type lane struct {
	lock   leases.LockRef
	holder string
}

// SVG draws who held each lock when: one lane per lock and holder, its
// holding spans as bars (to the last renewal, then lighter to the span's
// end), takeovers as orange lines, expiries as red marks and the writes of
// a former holder after it lost the lock as red bars.
func SVG(rep *leases.Report) []byte {
	lanes, idx, hidden := spanLanes(rep)
	var b bytes.Buffer
	top := 90
	height := top + len(lanes)*laneHeight + 70
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, height)
	fmt.Fprintf(&b, `<text x="20" y="28" font-size="18" font-weight="bold">%s</text>`+"\n", esc("Leases: who held each lock when"))
	fmt.Fprintf(&b, `<text x="20" y="48" fill="#555">%s</text>`+"\n", esc(fmt.Sprintf("%s to %s · %s · %s · %s", stamp(rep.Start), stamp(rep.End),
		text.Plural(len(rep.Takeovers), "takeover"), text.Plurals(len(rep.Expiries), "expiry", "expiries"), text.Plural(len(rep.Acting), "acting-while-not-leader window"))))
	legend(&b, 20, 72)
	start, end := rep.Start, output.AxisEnd(rep.End.Sub(rep.Start), axisTicks)
	plotW := float64(svgWidth - laneLeft - laneRight - 10)
	x := func(t time.Time) float64 {
		d := min(max(t.Sub(start), 0), end)
		return float64(laneLeft+5) + plotW*float64(d)/float64(end)
	}
	bottom := top + len(lanes)*laneHeight
	for i, l := range lanes {
		y := top + i*laneHeight
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f6f8"/>`+"\n", laneLeft, y, svgWidth-laneLeft-laneRight, laneHeight)
		}
		label := l.lock.String() + " " + l.holder
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s<title>%s</title></text>`+"\n", laneLeft-8, y+15, esc(laneLabel(label)), esc(label))
	}
	axis(&b, func(d time.Duration) float64 { return x(start.Add(d)) }, end, top, bottom)
	drawSpans(&b, rep, idx, x, top)
	drawFindings(&b, rep, idx, x, top, bottom)
	if hidden > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">%s</text>`+"\n", laneLeft, bottom+50, esc(fmt.Sprintf("%d more lanes not drawn", hidden)))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// spanLanes are the lanes, in the order of the locks and of each lock's
// holders' first span, at most maxLanes.
func spanLanes(rep *leases.Report) ([]lane, map[lane]int, int) {
	var lanes []lane
	idx := map[lane]int{}
	n := 0
	for _, l := range rep.Locks {
		for _, s := range l.Spans {
			k := lane{l.LockRef, s.Holder}
			if _, ok := idx[k]; ok {
				continue
			}
			n++
			if len(lanes) < maxLanes {
				idx[k] = len(lanes)
				lanes = append(lanes, k)
			}
		}
	}
	return lanes, idx, n - len(lanes)
}

func drawSpans(b *bytes.Buffer, rep *leases.Report, idx map[lane]int, x func(time.Time) float64, top int) {
	for _, l := range rep.Locks {
		for _, s := range l.Spans {
			i, ok := idx[lane{l.LockRef, s.Holder}]
			if !ok {
				continue
			}
			y := float64(top+i*laneHeight) + 5
			to := rep.End
			if s.To != nil {
				to = *s.To
			}
			title := esc(fmt.Sprintf("%s held %s from %s to %s, last renewed %s, %d renewals", s.Holder, l.LockRef, stamp(s.From), stamp(to), stamp(s.LastRenew), s.Renewals))
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="12" fill="#2e9e44"><title>%s</title></rect>`+"\n", x(s.From), y, max(x(s.LastRenew)-x(s.From), 1), title)
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="12" fill="#2e9e44" fill-opacity="0.3"><title>%s</title></rect>`+"\n", x(s.LastRenew), y, max(x(to)-x(s.LastRenew), 0), title)
		}
	}
}

func drawFindings(b *bytes.Buffer, rep *leases.Report, idx map[lane]int, x func(time.Time) float64, top, bottom int) {
	for _, t := range rep.Takeovers {
		tx := x(t.Time)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e8912d" stroke-width="2"><title>%s</title></line>`+"\n", tx, top, tx, bottom,
			esc(fmt.Sprintf("%s: %s took over from %s at %s", t.Lock, t.To, t.From, stamp(t.Time))))
	}
	for _, e := range rep.Expiries {
		i, ok := idx[lane{e.Lock, e.Holder}]
		if !ok {
			continue
		}
		cx, cy := x(e.At), float64(top+i*laneHeight)+laneHeight/2
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="#d6452b"><title>%s</title></path>`+"\n", cx, cy-6, cx+5, cy+5, cx-5, cy+5,
			esc(fmt.Sprintf("%s's lease expired at %s (last renewal %s)", e.Holder, stamp(e.At), stamp(e.LastRenew))))
	}
	for _, a := range rep.Acting {
		i, ok := idx[lane{a.Lock, a.Writer}]
		if !ok {
			continue
		}
		y := float64(top+i*laneHeight) + 3
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="16" fill="none" stroke="#d6452b" stroke-width="2"><title>%s</title></rect>`+"\n", x(a.First), y, max(x(a.Last)-x(a.First), 2),
			esc(fmt.Sprintf("%s wrote %d times after it lost the lock at %s (%s): %v", a.Writer, a.Writes, stamp(a.LostAt), a.Reason, a.Objects)))
	}
}

// axis draws the time axis at round steps from the start, with a grid
// line at each, as conflicts' picture does.
func axis(b *bytes.Buffer, x func(time.Duration) float64, end time.Duration, top, bottom int) {
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", laneLeft, bottom, svgWidth-laneRight, bottom)
	step := output.NiceStep(end, axisTicks)
	for t := time.Duration(0); t <= end; t += step {
		tx := x(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e1e4e8"/>`+"\n", tx, top, tx, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#333">+%s</text>`+"\n", tx, bottom+18, esc(output.TickLabel(t)))
	}
}

// laneLabel keeps the end of a long label (the holder).
func laneLabel(l string) string {
	const most = 46
	if r := []rune(l); len(r) > most {
		return "…" + string(r[len(r)-most+1:])
	}
	return l
}

func legend(b *bytes.Buffer, x, y int) {
	items := []struct{ shape, label string }{
		{`<rect x="%d" y="%d" width="14" height="10" fill="#2e9e44"/>`, "held, renewing"},
		{`<rect x="%d" y="%d" width="14" height="10" fill="#2e9e44" fill-opacity="0.3"/>`, "held, not renewed since"},
		{`<rect x="%d" y="%d" width="4" height="10" fill="#e8912d"/>`, "takeover"},
		{`<rect x="%d" y="%d" width="10" height="10" fill="#d6452b"/>`, "expiry"},
		{`<rect x="%d" y="%d" width="14" height="10" fill="none" stroke="#d6452b" stroke-width="2"/>`, "acting while not leader"},
	}
	for _, it := range items {
		fmt.Fprintf(b, it.shape+"\n", x, y-9)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+19, y, esc(it.label))
		x += 30 + 7*len(it.label)
	}
}

// HTML is the picture in a page of its own, with the takeovers and the
// acting windows below it, in the style of conflicts' report.
func HTML(rep *leases.Report) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kubectl rv leases</title>\n")
	b.WriteString(output.ReportCSS + "</head><body>\n")
	b.Write(SVG(rep))
	for _, t := range []struct {
		title string
		table *output.TableData
	}{{"Takeovers", Takeovers(rep)}, {"Acting while not leader", Acting(rep)}, {"Expiries", Expiries(rep)}} {
		if len(t.table.Rows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n<table><tr>", esc(t.title))
		for _, c := range t.table.Columns {
			fmt.Fprintf(&b, "<th>%s</th>", esc(c.Name))
		}
		b.WriteString("</tr>\n")
		for _, row := range t.table.Rows {
			b.WriteString("<tr>")
			for _, c := range row {
				fmt.Fprintf(&b, "<td>%s</td>", esc(c.Text))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
	b.WriteString("<p style=\"color:#777\">Generated by kubectl rv leases.</p>\n</body></html>\n")
	return b.Bytes()
}
