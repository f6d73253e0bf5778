package conflictsprint

import (
	"bytes"
	"fmt"
	"html"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// The picture's geometry, as in simulate's report (pkg/output/simprint).
const (
	svgWidth   = 1000
	laneLeft   = 330
	laneRight  = 30
	laneHeight = 22
	maxLanes   = 40
)

// esc makes log strings safe in XML: control characters (not allowed in
// XML 1.0) are escaped as on a terminal, then markup.
func esc(s string) string { return html.EscapeString(output.Escape(s)) }

// SVG draws the report's timeline: one lane per writer over time, each
// write attempt marked (success, 409, give-up, other failure), the way
// simulate's report draws its writers. Text from the log is escaped.
func SVG(rep *conflicts.Report) []byte {
	var b bytes.Buffer
	lanes, hidden := writerLanes(rep.Timeline)
	top := 90
	height := top + len(lanes)*laneHeight + 70
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, height)
	title := "no write attempts"
	if rep.TimelineObject != nil {
		title = rep.TimelineObject.String() + ": writers over time"
	}
	fmt.Fprintf(&b, `<text x="20" y="28" font-size="18" font-weight="bold">%s</text>`+"\n", esc(title))
	var n409, gave int
	for _, a := range rep.Timeline {
		if a.Code == 409 {
			n409++
		}
		if a.GiveUp {
			gave++
		}
	}
	fmt.Fprintf(&b, `<text x="20" y="48" fill="#555">%s</text>`+"\n", esc(fmt.Sprintf("%d write attempts · %d conflicts · %d give-ups · %d writers", len(rep.Timeline), n409, gave, len(lanes)+hidden)))
	legend(&b, 20, 72)
	drawLanes(&b, rep.Timeline, lanes, top)
	if hidden > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">%s</text>`+"\n", laneLeft, top+len(lanes)*laneHeight+50, esc(fmt.Sprintf("%d more writers not drawn", hidden)))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// HTML is the picture in a page of its own, with the causes below it.
func HTML(rep *conflicts.Report) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kubectl rv conflicts</title></head>\n<body style=\"font-family: Helvetica, Arial, sans-serif\">\n")
	b.Write(SVG(rep))
	b.WriteString("<table cellpadding=\"4\"><tr><th align=\"left\">cause</th><th>409s</th><th>writers</th><th align=\"left\">fix</th></tr>\n")
	for _, c := range rep.Causes {
		fmt.Fprintf(&b, "<tr><td>%s</td><td align=\"right\">%d</td><td align=\"right\">%d</td><td>%s</td></tr>\n", esc(string(c.Cause)), c.Count, c.Writers, esc(c.Fix))
	}
	b.WriteString("</table>\n</body></html>\n")
	return b.Bytes()
}

func writerLanes(tl []conflicts.Attempt) ([]string, int) {
	var lanes []string
	seen := map[string]bool{}
	for _, a := range tl {
		if !seen[a.Writer] {
			seen[a.Writer] = true
			lanes = append(lanes, a.Writer)
		}
	}
	if len(lanes) > maxLanes {
		return lanes[:maxLanes], len(lanes) - maxLanes
	}
	return lanes, 0
}

func drawLanes(b *bytes.Buffer, tl []conflicts.Attempt, lanes []string, top int) {
	idx := map[string]int{}
	for i, l := range lanes {
		idx[l] = i
		y := top + i*laneHeight
		if i%2 == 0 {
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f6f8"/>`+"\n", laneLeft, y, svgWidth-laneLeft-laneRight, laneHeight)
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end" font-size="10">%s<title>%s</title></text>`+"\n", laneLeft-8, y+15, esc(laneLabel(l)), esc(l))
	}
	if len(tl) == 0 {
		return
	}
	start, end := tl[0].Received, tl[len(tl)-1].Received
	span := max(end.Sub(start), time.Millisecond)
	plotW := float64(svgWidth - laneLeft - laneRight - 10)
	x := func(t time.Time) float64 { return float64(laneLeft+5) + plotW*float64(t.Sub(start))/float64(span) }
	bottom := top + len(lanes)*laneHeight
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", laneLeft, bottom, svgWidth-laneRight, bottom)
	for i := 0; i <= 5; i++ {
		t := start.Add(span * time.Duration(i) / 5)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="10" fill="#333">+%.2fs</text>`+"\n", x(t), bottom+17, t.Sub(start).Seconds())
	}
	for _, a := range tl {
		i, ok := idx[a.Writer]
		if !ok {
			continue
		}
		title := esc(fmt.Sprintf("+%.3fs %s %s %d chain %d.%d %s", a.Received.Sub(start).Seconds(), a.Writer, a.Verb, a.Code, a.Chain, a.Step, a.Cause))
		mark(b, outcome(a), x(a.Received), float64(top+i*laneHeight)+laneHeight/2, title)
	}
}

// laneLabel keeps the end of a long writer name (its manager and pod), which
// tells writers of one user apart.
func laneLabel(l string) string {
	const most = 56
	if r := []rune(l); len(r) > most {
		return "…" + string(r[len(r)-most+1:])
	}
	return l
}

func outcome(a conflicts.Attempt) string {
	switch {
	case a.GiveUp:
		return "giveup"
	case a.Code == 409:
		return "conflict"
	case a.Code/100 == 2:
		return "ok"
	}
	return "error"
}

func legend(b *bytes.Buffer, x, y int) {
	for _, it := range []struct{ outcome, label string }{{"ok", "success"}, {"conflict", "409"}, {"giveup", "409, gave up"}, {"error", "other failure"}} {
		mark(b, it.outcome, float64(x), float64(y-4), "")
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+9, y, esc(it.label))
		x += 18 + 7*len(it.label)
	}
}

func mark(b *bytes.Buffer, outcome string, cx, cy float64, title string) {
	if title != "" {
		title = "<title>" + title + "</title>"
	}
	switch outcome {
	case "ok":
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="#2e9e44">%s</circle>`+"\n", cx, cy, title)
	case "conflict":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="#d6452b" stroke-width="2">%s</path>`+"\n", cx-4, cy-4, cx+4, cy+4, cx-4, cy+4, cx+4, cy-4, title)
	case "giveup":
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="8" height="8" fill="#111111">%s</rect>`+"\n", cx-4, cy-4, title)
	default:
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="#e08a00">%s</path>`+"\n", cx, cy-5, cx+5, cy+4, cx-5, cy+4, title)
	}
}
