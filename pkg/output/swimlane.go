package output

import (
	"bytes"
	"fmt"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// The report pictures' geometry, shared by simulate's, conflicts' and
// leases' swimlanes.
const (
	// SVGWidth is the width of every report picture.
	SVGWidth = 1000
	// LaneRight is the margin right of the lanes.
	LaneRight = 30
	// LaneHeight is the height of one lane.
	LaneHeight = 22
	// MaxLanes is how many lanes a picture draws at most; the rest are
	// counted under the plot.
	MaxLanes = 40
	// plotPad keeps the first and last marks inside the lanes.
	plotPad = 5
	// charWidth is about how wide a character of 12px text is.
	charWidth = 7
)

// Swimlanes is the frame of a report picture: one lane per actor (writer,
// client, lock holder) over time, the time axis at round ticks, and the
// count of lanes not drawn. The printers draw their own marks on it at
// X(time) and Mid(lane).
type Swimlanes struct {
	// Top is the y of the first lane.
	Top int
	// LabelWidth is the width of the label column left of the lanes.
	LabelWidth int
	// Labels are the lanes' labels, top to bottom, at most MaxLanes.
	Labels []string
	// Hidden counts the lanes not drawn, named Noun ("writers").
	Hidden int
	Noun   string
	// Span is the time the marks cover from the axis' origin; the axis
	// ends at the next round tick after it.
	Span time.Duration
	// Ticks is about how many ticks the axis has.
	Ticks int
	// TickPrefix comes before every tick label: "+" where the axis counts
	// from the first event, "" where it is a clock of its own (virtual time).
	TickPrefix string
}

// CapLanes keeps the first MaxLanes labels and counts the others.
func CapLanes(labels []string) ([]string, int) {
	if len(labels) > MaxLanes {
		return labels[:MaxLanes], len(labels) - MaxLanes
	}
	return labels, 0
}

// end is where the axis ends: a round tick at or after Span.
func (s *Swimlanes) end() time.Duration { return AxisEnd(s.Span, s.Ticks) }

// X is the horizontal position of time d from the axis' origin; times
// outside the axis are drawn at its ends.
func (s *Swimlanes) X(d time.Duration) float64 {
	end := s.end()
	d = min(max(d, 0), end)
	plotW := float64(SVGWidth - s.LabelWidth - LaneRight - 2*plotPad)
	return float64(s.LabelWidth+plotPad) + plotW*float64(d)/float64(end)
}

// LaneTop is the y of lane i's top edge.
func (s *Swimlanes) LaneTop(i int) int { return s.Top + i*LaneHeight }

// Mid is the y of lane i's middle, where its marks sit.
func (s *Swimlanes) Mid(i int) float64 { return float64(s.LaneTop(i)) + LaneHeight/2 }

// Bottom is the y under the last lane, where the axis is.
func (s *Swimlanes) Bottom() int { return s.LaneTop(len(s.Labels)) }

// Draw writes the lanes (every other one shaded, each with its label, cut
// to the label column and whole in its tooltip) and the time axis, with a
// grid line at each tick.
func (s *Swimlanes) Draw(b *bytes.Buffer) {
	for i, l := range s.Labels {
		y := s.LaneTop(i)
		if i%2 == 0 {
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f6f8"/>`+"\n", s.LabelWidth, y, SVGWidth-s.LabelWidth-LaneRight, LaneHeight)
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s<title>%s</title></text>`+"\n", s.LabelWidth-8, y+15, text.EscapeMarkup(s.laneLabel(l)), text.EscapeMarkup(l))
	}
	bottom := s.Bottom()
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", s.LabelWidth, bottom, SVGWidth-LaneRight, bottom)
	end := s.end()
	step := NiceStep(end, s.Ticks)
	for t := time.Duration(0); t <= end; t += step {
		tx := s.X(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e1e4e8"/>`+"\n", tx, s.Top, tx, bottom)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>`+"\n", tx, bottom, tx, bottom+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#333">%s</text>`+"\n", tx, bottom+18, text.EscapeMarkup(s.TickPrefix+TickLabel(t)))
	}
}

// DrawHidden writes, under the axis, how many lanes were not drawn.
func (s *Swimlanes) DrawHidden(b *bytes.Buffer) {
	if s.Hidden > 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#555">%s</text>`+"\n", s.LabelWidth, s.Bottom()+50, text.EscapeMarkup(fmt.Sprintf("%d more %s not drawn", s.Hidden, s.Noun)))
	}
}

// laneLabel keeps the end of a label too long for the label column (of a
// writer, its manager and pod), which tells the lanes of one user apart.
func (s *Swimlanes) laneLabel(l string) string {
	most := (s.LabelWidth - 8) / charWidth
	if r := []rune(l); len(r) > most {
		return "…" + string(r[len(r)-most+1:])
	}
	return l
}

// SVGOpen starts a report picture of the given height: a white page, its
// title and a line under it.
func SVGOpen(b *bytes.Buffer, height int, title, subtitle string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", SVGWidth, height, SVGWidth, height)
	fmt.Fprintf(b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", SVGWidth, height)
	fmt.Fprintf(b, `<text x="20" y="28" font-size="18" font-weight="bold">%s</text>`+"\n", text.EscapeMarkup(title))
	fmt.Fprintf(b, `<text x="20" y="48" fill="#555">%s</text>`+"\n", text.EscapeMarkup(subtitle))
}

// SVGClose ends a report picture.
func SVGClose(b *bytes.Buffer) { b.WriteString("</svg>\n") }

// LegendItem is one entry of a picture's legend: its mark, drawn by Draw
// with its center (or, for a bar, its left edge) at x and its baseline at
// y, and what it means.
type LegendItem struct {
	Draw  func(b *bytes.Buffer, x, y int)
	Label string
}

// Legend writes items in a row from (x, y): each mark, its label labelDX
// to the right of it, and the next item gap further on than the label's
// end (the marks of the pictures differ in width).
func Legend(b *bytes.Buffer, x, y, labelDX, gap int, items []LegendItem) {
	for _, it := range items {
		it.Draw(b, x, y)
		fmt.Fprintf(b, `<text x="%d" y="%d">%s</text>`+"\n", x+labelDX, y, text.EscapeMarkup(it.Label))
		x += gap + charWidth*len(it.Label)
	}
}
