package simprint

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// The picture's geometry below the lanes (pkg/output.Swimlanes draws
// those).
const (
	// labelWidth is the lanes' label column: client names are short.
	labelWidth = 170
	panelW     = 310
	panelH     = 160
	// invLine is the height of one line of the invariants block.
	invLine = 18
)

var outcomeColor = map[string]string{
	"ok":       "#2e9e44",
	"noop":     "#8a8f98",
	"conflict": "#d6452b",
	"invalid":  "#e08a00",
	"error":    "#7a2bd6",
	"giveup":   "#111111",
}

func esc(s string) string { return text.EscapeMarkup(s) }

// SVG renders a run as a static picture on the report pictures'
// swimlanes (pkg/output): one lane per client over virtual time with every write marked (success, no-op, 409, 422, give-up) and
// compactions as dashed lines, then the latency distribution of each actor.
// Text comes from the scenario and is escaped; the picture needs nothing
// but itself to display.
func SVG(r *simulate.Result) []byte {
	var b bytes.Buffer
	labels, hidden := output.CapLanes(laneOrder(r))
	lanes := &output.Swimlanes{Top: 90, LabelWidth: labelWidth, Labels: labels, Hidden: hidden, Noun: "clients", Span: r.End.D(), Ticks: 10}
	top := lanes.Top
	lanesH := len(labels)*output.LaneHeight + 40
	if len(labels) == 0 {
		lanesH = 50
	}
	var withLatency []simulate.ActorReport
	for _, a := range r.Actors {
		if a.Latency.Count > 0 {
			withLatency = append(withLatency, a)
		}
	}
	perRow := (output.SVGWidth - 40) / (panelW + 10)
	rows := (len(withLatency) + perRow - 1) / perRow
	invTop := top + lanesH + 30
	histTop := invTop + invariantsHeight(r) + 30
	height := histTop + rows*(panelH+40) + 20
	output.SVGOpen(&b, height, r.Scenario+": writers over virtual time", fmt.Sprintf("seed %d · %d requests · %s of virtual time · revisions %d → %d", r.Seed, r.Requests, Dur(r.End.D()), r.StartRevision, r.FinalRevision))
	legend(&b, 20, 72)

	if len(labels) == 0 {
		fmt.Fprintf(&b, `<text x="20" y="%d" fill="#555">%s</text>`+"\n", top+20, esc("No request trace: the run was too long to trace (set trace: true in the scenario to draw every request)."))
	} else {
		drawLanes(&b, r, lanes)
	}
	invariants(&b, r, invTop)

	if len(withLatency) > 0 {
		fmt.Fprintf(&b, `<text x="20" y="%d" font-size="15" font-weight="bold">Latency of successful operations (virtual time, retries and backoff included)</text>`+"\n", histTop-20)
	}
	for i, a := range withLatency {
		px := 20 + (i%perRow)*(panelW+10)
		py := histTop + (i/perRow)*(panelH+40)
		histogram(&b, a, px, py)
	}
	output.SVGClose(&b)
	return b.Bytes()
}

// drawLanes draws one lane per client: the time axis, compactions,
// leadership terms and a mark per request.
func drawLanes(b *bytes.Buffer, r *simulate.Result, lanes *output.Swimlanes) {
	idx := map[string]int{}
	for i, l := range lanes.Labels {
		idx[l] = i
	}
	lanes.Draw(b)
	x := func(t time.Duration) float64 { return lanes.X(t) }
	top, bottom := lanes.Top, lanes.Bottom()
	for _, c := range r.Compactions {
		cx := x(c.At.D())
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#3b6fd6" stroke-dasharray="4 3"/>`+"\n", cx, top-4, cx, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="#3b6fd6" text-anchor="middle" font-size="10">compact %d</text>`+"\n", cx, top-8, c.Revision)
	}
	if l := r.Leadership; l != nil {
		for _, term := range l.Terms {
			if i, ok := idx[term.Holder]; ok {
				x0, x1 := x(term.From.D()), x(term.To.D())
				fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#2e9e44" fill-opacity="0.15"><title>%s</title></rect>`+"\n",
					x0, lanes.LaneTop(i)+2, max(x1-x0, 1), output.LaneHeight-4, esc(fmt.Sprintf("%s leads from %s to %s (%s)", term.Holder, Dur(term.From.D()), Dur(term.To.D()), term.Ended)))
			}
		}
	}
	// Give-ups first: the 409 that caused one is drawn at the same time
	// and must stay visible on top of it.
	for _, giveUps := range []bool{true, false} {
		for _, s := range r.Steps {
			i, ok := idx[s.Actor]
			if !ok || s.Verb == "RETRY" || (s.Outcome == "giveup") != giveUps {
				continue
			}
			mark(b, s, x(s.At.D()), lanes.Mid(i))
		}
	}
	lanes.DrawHidden(b)
}

// laneOrder lists the clients that appear in the trace, actor by actor and
// replica by replica.
func laneOrder(r *simulate.Result) []string {
	active := map[string]bool{}
	for _, s := range r.Steps {
		active[s.Actor] = true
	}
	var lanes []string
	for _, a := range r.Actors {
		names := []string{a.Name}
		if a.Replicas > 1 {
			names = names[:0]
			for i := 1; i <= a.Replicas; i++ {
				names = append(names, fmt.Sprintf("%s-%d", a.Name, i))
			}
		}
		for _, n := range names {
			if active[n] {
				lanes = append(lanes, n)
			}
		}
	}
	return lanes
}

func legend(b *bytes.Buffer, x, y int) {
	var items []output.LegendItem
	for _, it := range []struct{ outcome, label string }{
		{"ok", "success"}, {"noop", "no-op"}, {"conflict", "409 / 410"}, {"invalid", "422"}, {"giveup", "give-up / crash"}, {"info", "event"}, {"read", "read"},
	} {
		items = append(items, output.LegendItem{Label: it.label, Draw: func(b *bytes.Buffer, x, y int) { mark(b, simulate.Step{Outcome: it.outcome}, float64(x), float64(y-4)) }})
	}
	// About 7px a character at 12px, then a gap wider than a mark.
	output.Legend(b, x, y, 10, 28, items)
}

func mark(b *bytes.Buffer, s simulate.Step, cx, cy float64) {
	title := ""
	if s.Verb != "" {
		title = fmt.Sprintf("<title>%s</title>", esc(fmt.Sprintf("%s %s %s %d %s %s", Dur(s.At.D()), s.Actor, s.Verb, s.Code, s.Reason, s.Note)))
	}
	c := outcomeColor[s.Outcome]
	switch s.Outcome {
	case "ok":
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s">%s</circle>`+"\n", cx, cy, c, title)
	case "noop":
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="none" stroke="%s" stroke-width="1.5">%s</circle>`+"\n", cx, cy, c, title)
	case "conflict", "error":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="%s" stroke-width="2">%s</path>`+"\n", cx-4, cy-4, cx+4, cy+4, cx-4, cy+4, cx+4, cy-4, c, title)
	case "invalid":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="%s">%s</path>`+"\n", cx, cy-5, cx+5, cy+4, cx-5, cy+4, c, title)
	case "giveup":
		// Hollow, so that the 409 drawn at the same time shows inside.
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="none" stroke="%s" stroke-width="1.5">%s</rect>`+"\n", cx-6, cy-6, c, title)
	case "info":
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="#3b6fd6">%s</path>`+"\n", cx, cy-5, cx+4, cy, cx, cy+5, cx-4, cy, title)
	case "read":
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#9aa3ad" stroke-width="1">%s</line>`+"\n", cx, cy-3, cx, cy+3, title)
	}
}

// invariantsHeight is the height of the invariants block.
func invariantsHeight(r *simulate.Result) int {
	if len(r.Invariants) == 0 {
		return 0
	}
	n := len(r.Invariants)
	if len(lostBy(r)) > 0 {
		n++
	}
	return 24 + n*invLine
}

// lostBy lists the actors whose updates were lost: "hasty 20".
func lostBy(r *simulate.Result) []string {
	var out []string
	for _, a := range r.Actors {
		if a.LostUpdates > 0 {
			out = append(out, fmt.Sprintf("%s %d", a.Name, a.LostUpdates))
		}
	}
	return out
}

// invariants draws the checked invariants from y = top: a failed one, and
// the lost updates it found, in red.
func invariants(b *bytes.Buffer, r *simulate.Result, top int) {
	if len(r.Invariants) == 0 {
		return
	}
	fmt.Fprintf(b, `<text x="20" y="%d" font-size="15" font-weight="bold">Invariants</text>`+"\n", top+4)
	y := top + 4 + invLine
	for _, inv := range r.Invariants {
		verdict, color := "held", "#2e9e44"
		if !inv.Held {
			verdict, color = "NOT HELD", "#d6452b"
		}
		if inv.Reason != "" {
			verdict += " (" + inv.Reason + ")"
		}
		text := fmt.Sprintf("%s: expected %s, actual %s", inv.Name, inv.Expected, inv.Actual)
		if inv.Lost != 0 {
			text += fmt.Sprintf(": %d lost updates", inv.Lost)
		}
		fmt.Fprintf(b, `<text x="20" y="%d"><tspan fill="%s" font-weight="bold">%s</tspan> %s</text>`+"\n", y, color, esc(verdict), esc(text))
		y += invLine
	}
	if lost := lostBy(r); len(lost) > 0 {
		fmt.Fprintf(b, `<text x="20" y="%d" fill="#d6452b">%s</text>`+"\n", y, esc("Lost updates by actor: "+strings.Join(lost, ", ")))
	}
}

func histogram(b *bytes.Buffer, a simulate.ActorReport, px, py int) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#fafbfc" stroke="#d0d7de"/>`+"\n", px, py, panelW, panelH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", px+8, py+16, esc(a.Name))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10" fill="#555">%s</text>`+"\n", px+8, py+30,
		esc(fmt.Sprintf("p50 %s · p95 %s · p99 %s · %d ops", Dur(a.Latency.P50.D()), Dur(a.Latency.P95.D()), Dur(a.Latency.P99.D()), a.Latency.Count)))
	// Draw the buckets from the first to the last non-empty one.
	first, last := -1, -1
	maxC := 0
	for i, h := range a.LatencyHistogram {
		if h.Count > 0 {
			if first < 0 {
				first = i
			}
			last = i
			maxC = max(maxC, h.Count)
		}
	}
	if first < 0 {
		return
	}
	n := last - first + 1
	// The tallest bar's count sits above it, under the subtitle.
	areaX, areaY, areaW, areaH := px+8, py+48, panelW-16, panelH-76
	bw := float64(areaW) / float64(n)
	for i := first; i <= last; i++ {
		h := a.LatencyHistogram[i]
		bh := float64(areaH) * math.Sqrt(float64(h.Count)/float64(maxC))
		bx := float64(areaX) + float64(i-first)*bw
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4c78a8"><title>%s</title></rect>`+"\n",
			bx+1, float64(areaY+areaH)-bh, bw-2, bh, esc(fmt.Sprintf("%s: %d", bucketLabel(a.LatencyHistogram, i), h.Count)))
		if h.Count > 0 {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="9" text-anchor="middle" fill="#333">%d</text>`+"\n", bx+bw/2, float64(areaY+areaH)-bh-2, h.Count)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="9" text-anchor="end" transform="rotate(-40 %.1f %d)">%s</text>`+"\n",
			bx+bw/2+3, areaY+areaH+12, bx+bw/2+3, areaY+areaH+12, esc(bucketLabel(a.LatencyHistogram, i)))
	}
}

func bucketLabel(hs []simulate.LatencyBucket, i int) string {
	if hs[i].Le == 0 {
		return ">" + hs[i-1].Le.D().String()
	}
	return "≤" + hs[i].Le.D().String()
}

// HTML renders a self-contained page: the picture and the tables.
func HTML(r *simulate.Result) []byte {
	var b bytes.Buffer
	output.HTMLOpen(&b, "kubectl rv simulate: "+r.Scenario, "")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"desc\">%s</p>\n", esc(r.Scenario), esc(r.Description))
	b.Write(SVG(r))
	b.WriteString("<h2>Actors</h2>\n<table><tr><th>actor</th><th>method</th><th>retry</th><th>ops</th><th>attempts</th><th>ok</th><th>no-op</th><th>409</th><th>apply 409</th><th>422</th><th>errors</th><th>give-ups</th><th>p50</th><th>p95</th><th>p99</th><th>revisions</th><th>lost</th></tr>\n")
	for _, a := range r.Actors {
		cls := func(n int) string {
			if n > 0 {
				return ` class="bad"`
			}
			return ""
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td class=\"good\">%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td%s>%d</td><td%s>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td%s>%d</td></tr>\n",
			esc(a.Name), esc(a.Method), esc(a.Retry), a.Operations, a.Attempts, a.Successes, a.NoOps, a.Conflicts, a.ApplyConflicts, a.Invalid,
			cls(a.Errors), a.Errors, cls(a.GiveUps), a.GiveUps, Dur(a.Latency.P50.D()), Dur(a.Latency.P95.D()), Dur(a.Latency.P99.D()), a.RevisionsConsumed, cls(a.LostUpdates), a.LostUpdates)
	}
	b.WriteString("</table>\n")
	if len(r.Invariants) > 0 {
		b.WriteString("<h2>Invariants</h2>\n<table><tr><th>invariant</th><th>held</th><th>expected</th><th>actual</th><th>lost</th></tr>\n")
		for _, inv := range r.Invariants {
			held := `<td class="good">yes</td>`
			if !inv.Held {
				held = `<td class="bad">NO</td>`
			}
			if inv.Reason != "" {
				held = `<td class="bad">NO (` + esc(inv.Reason) + `)</td>`
			}
			fmt.Fprintf(&b, "<tr><td>%s</td>%s<td>%s</td><td>%s</td><td>%d</td></tr>\n", esc(inv.Name), held, esc(inv.Expected), esc(inv.Actual), inv.Lost)
		}
		b.WriteString("</table>\n")
	}
	if l := r.Leadership; l != nil && len(l.Failovers) > 0 {
		b.WriteString("<h2>Failover</h2>\n<ul>\n")
		for _, f := range l.Failovers {
			fmt.Fprintf(&b, "<li>%s crashed at %s; %s took the lease at %s: <b>%s</b> without a leader</li>\n",
				esc(f.Crashed), Dur(f.CrashedAt.D()), esc(f.NewLeader), Dur(f.AcquiredAt.D()), Dur(f.Gap.D()))
		}
		b.WriteString("</ul>\n")
	}
	output.HTMLClose(&b, "Generated by kubectl rv simulate. Virtual time; the same seed gives the same page.")
	return b.Bytes()
}
