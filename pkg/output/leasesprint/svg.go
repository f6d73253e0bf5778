package leasesprint

import (
	"bytes"
	"fmt"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/leases"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// esc makes server strings safe in XML.
func esc(s string) string { return text.EscapeMarkup(s) }

// lane is one candidate of one lock.
type lane struct {
	lock   leases.LockRef
	holder string
}

// SVG draws who held each lock when on the report pictures' swimlanes
// (pkg/output): one lane per lock and holder, its holding spans as bars (to
// the last renewal, then lighter to the span's end), takeovers as orange
// lines, expiries as red marks and the writes of a former holder after it
// lost the lock as red bars.
func SVG(rep *leases.Report) []byte {
	keys, idx, hidden := spanLanes(rep)
	labels := make([]string, len(keys))
	for i, l := range keys {
		labels[i] = l.lock.String() + " " + l.holder
	}
	from, to := axisOf(rep)
	lanes := &output.Swimlanes{Top: 90, LabelWidth: 330, Labels: labels, Hidden: hidden, Noun: "lanes", Span: to.Sub(from), Ticks: 8, TickPrefix: "+"}
	var b bytes.Buffer
	sub := fmt.Sprintf("%s to %s · %s · %s · %s", stamp(from), stamp(to),
		text.Plural(len(rep.Takeovers), "takeover"), text.Plurals(len(rep.Expiries), "expiry", "expiries"), text.Plural(len(rep.Acting), "acting-while-not-leader window"))
	if from.After(rep.Start) || to.Before(rep.End) {
		sub += fmt.Sprintf(" · zoomed in on the locks (the history runs %s to %s)", stamp(rep.Start), stamp(rep.End))
	}
	output.SVGOpen(&b, lanes.Bottom()+70, "Leases: who held each lock when", sub)
	legend(&b, 20, 72)
	lanes.Draw(&b)
	x := func(t time.Time) float64 { return lanes.X(t.Sub(from)) }
	drawSpans(&b, rep, idx, x, lanes.Top)
	drawFindings(&b, rep, idx, x, lanes)
	lanes.DrawHidden(&b)
	output.SVGClose(&b)
	return b.Bytes()
}

// axisMinMargin is the least time the axis shows before the locks' first
// moment and after their last.
const axisMinMargin = time.Second

// axisOf is the time the picture spans: the locks' own activity (their
// holding spans, takeovers, expiries and acting windows) with a margin of
// a twentieth of it, at least axisMinMargin, on each side, within the
// report's start and end. A span still open counts until its last
// renewal plus the lease duration: after that the lock has expired, and
// the report says so. An audit log's other writes, before and after,
// are not drawn: 15 s of a Lease in a 20-minute log fill the picture.
// With nothing to draw, it is the report's start and end.
func axisOf(rep *leases.Report) (time.Time, time.Time) {
	var first, last time.Time
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	for _, l := range rep.Locks {
		for _, s := range l.Spans {
			see(s.From)
			see(s.LastRenew)
			if s.To != nil {
				see(*s.To)
			} else if held := s.LastRenew.Add(l.LeaseDuration.D()); held.Before(rep.End) {
				see(held)
			} else {
				see(rep.End)
			}
		}
	}
	for _, t := range rep.Takeovers {
		see(t.Time)
	}
	for _, e := range rep.Expiries {
		see(e.At)
	}
	for _, a := range rep.Acting {
		see(a.First)
		see(a.Last)
	}
	if first.IsZero() {
		return rep.Start, rep.End
	}
	margin := max(last.Sub(first)/20, axisMinMargin)
	from, to := first.Add(-margin), last.Add(margin)
	if from.Before(rep.Start) {
		from = rep.Start
	}
	if to.After(rep.End) {
		to = rep.End
	}
	if !to.After(from) {
		to = from.Add(axisMinMargin)
	}
	return from, to
}

// spanLanes are the lanes, in the order of the locks and of each lock's
// holders' first span, at most output.MaxLanes.
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
			if len(lanes) < output.MaxLanes {
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
			y := float64(top+i*output.LaneHeight) + 5
			to := rep.End // clipped to the axis by x
			if s.To != nil {
				to = *s.To
			}
			title := esc(fmt.Sprintf("%s held %s from %s to %s, last renewed %s, %d renewals", s.Holder, l.LockRef, stamp(s.From), stamp(to), stamp(s.LastRenew), s.Renewals))
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="12" fill="#2e9e44"><title>%s</title></rect>`+"\n", x(s.From), y, max(x(s.LastRenew)-x(s.From), 1), title)
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="12" fill="#2e9e44" fill-opacity="0.3"><title>%s</title></rect>`+"\n", x(s.LastRenew), y, max(x(to)-x(s.LastRenew), 0), title)
		}
	}
}

func drawFindings(b *bytes.Buffer, rep *leases.Report, idx map[lane]int, x func(time.Time) float64, lanes *output.Swimlanes) {
	top, bottom := lanes.Top, lanes.Bottom()
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
		cx, cy := x(e.At), lanes.Mid(i)
		fmt.Fprintf(b, `<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" fill="#d6452b"><title>%s</title></path>`+"\n", cx, cy-6, cx+5, cy+5, cx-5, cy+5,
			esc(fmt.Sprintf("%s's lease expired at %s (last renewal %s)", e.Holder, stamp(e.At), stamp(e.LastRenew))))
	}
	for _, a := range rep.Acting {
		i, ok := idx[lane{a.Lock, a.Writer}]
		if !ok {
			continue
		}
		y := float64(lanes.LaneTop(i)) + 3
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="16" fill="none" stroke="#d6452b" stroke-width="2"><title>%s</title></rect>`+"\n", x(a.First), y, max(x(a.Last)-x(a.First), 2),
			esc(fmt.Sprintf("%s wrote %d times after it lost the lock at %s (%s): %v", a.Writer, a.Writes, stamp(a.LostAt), a.Reason, a.Objects)))
	}
}

func legend(b *bytes.Buffer, x, y int) {
	var items []output.LegendItem
	for _, it := range []struct{ shape, label string }{
		{`<rect x="%d" y="%d" width="14" height="10" fill="#2e9e44"/>`, "held, renewing"},
		{`<rect x="%d" y="%d" width="14" height="10" fill="#2e9e44" fill-opacity="0.3"/>`, "held, not renewed since"},
		{`<rect x="%d" y="%d" width="4" height="10" fill="#e8912d"/>`, "takeover"},
		{`<rect x="%d" y="%d" width="10" height="10" fill="#d6452b"/>`, "expiry"},
		{`<rect x="%d" y="%d" width="14" height="10" fill="none" stroke="#d6452b" stroke-width="2"/>`, "acting while not leader"},
	} {
		items = append(items, output.LegendItem{Label: it.label, Draw: func(b *bytes.Buffer, x, y int) { fmt.Fprintf(b, it.shape+"\n", x, y-9) }})
	}
	output.Legend(b, x, y, 19, 30, items)
}

// HTML is the picture in a page of its own, with the takeovers and the
// acting windows below it, in the style of conflicts' report.
func HTML(rep *leases.Report) []byte {
	var b bytes.Buffer
	output.HTMLOpen(&b, "kubectl rv leases", "")
	b.Write(SVG(rep))
	for _, t := range []struct {
		title string
		table *output.TableData
	}{{"Takeovers", Takeovers(rep)}, {"Acting while not leader", Acting(rep)}, {SharedTitle, SharedWriters(rep)}, {"Expiries", Expiries(rep)}} {
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
	output.HTMLClose(&b, "Generated by kubectl rv leases.")
	return b.Bytes()
}
