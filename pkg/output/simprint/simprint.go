package simprint

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Report is the structured output of kubectl rv simulate run (kind
// SimulationReport).
type Report struct {
	output.TypeMeta  `json:",inline"`
	*simulate.Result `json:",inline"`
}

// NewReport wraps a result in its versioned report.
func NewReport(r *simulate.Result) Report {
	return Report{TypeMeta: output.NewTypeMeta("SimulationReport"), Result: r}
}

// ScenarioList is the structured output of kubectl rv simulate list.
type ScenarioList struct {
	output.TypeMeta `json:",inline"`
	Items           []ScenarioItem `json:"items"`
}

// ScenarioItem is one built-in scenario.
type ScenarioItem struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// NewScenarioList lists the built-in scenarios.
func NewScenarioList(bs []scenario.Builtin) ScenarioList {
	l := ScenarioList{TypeMeta: output.NewTypeMeta("ScenarioList"), Items: []ScenarioItem{}}
	for _, b := range bs {
		l.Items = append(l.Items, ScenarioItem{Name: b.Name, Description: b.Description})
	}
	return l
}

// PrintList prints the built-in scenarios as a table.
func PrintList(p *output.Printer, l ScenarioList) error {
	t := &output.TableData{Columns: output.Columns("Name", "Description")}
	for _, it := range l.Items {
		d := it.Description
		if p.Format != output.Wide {
			d = firstSentence(d)
		}
		t.AddRow(output.Cells(it.Name, d)...)
	}
	return p.PrintTable(t)
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// Dur formats a virtual duration compactly: 850µs, 12.3ms, 4.25s, 1m30s.
func Dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	}
	return d.Round(time.Second).String()
}

func d(x scenario.Duration) string { return Dur(x.D()) }

// PrintSummary prints the headline, the per-actor table, the invariants,
// the objects and the leadership of a run.
func PrintSummary(p *output.Printer, r *simulate.Result) error {
	w := p.Out
	fmt.Fprintf(w, "Scenario %s (seed %d): %d requests in %s of virtual time, revisions %d -> %d",
		text.Escape(r.Scenario), r.Seed, r.Requests, d(r.End), r.StartRevision, r.FinalRevision)
	if n := len(r.Compactions); n > 0 {
		fmt.Fprintf(w, ", %d compactions", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	if err := p.PrintTable(actorTable(p, r)); err != nil {
		return err
	}
	if len(r.Invariants) > 0 {
		fmt.Fprintln(w)
		t := &output.TableData{Columns: output.Columns("Invariant", "Held", "Expected", "Actual", "Lost")}
		for _, inv := range r.Invariants {
			held := output.Cell{Text: "yes", Style: output.Green}
			if !inv.Held {
				held = output.Cell{Text: "NO", Style: output.Red}
			}
			if inv.Reason != "" {
				held.Text += " (" + inv.Reason + ")"
			}
			t.AddRow(output.Cell{Text: inv.Name}, held, output.Cell{Text: inv.Expected}, output.Cell{Text: inv.Actual}, output.Cell{Text: strconv.Itoa(inv.Lost)})
		}
		if err := p.PrintTable(t); err != nil {
			return err
		}
	}
	if len(r.Objects) > 0 {
		fmt.Fprintln(w)
		t := &output.TableData{Columns: output.Columns("Object", "ResourceVersion", "Generation", "Writes")}
		for _, o := range r.Objects {
			gen := "-"
			if o.Generation > 0 {
				gen = strconv.FormatInt(o.Generation, 10)
			}
			t.AddRow(output.Cells(o.Ref, o.ResourceVersion, gen, strconv.Itoa(o.Writes))...)
		}
		if err := p.PrintTable(t); err != nil {
			return err
		}
	}
	if l := r.Leadership; l != nil {
		fmt.Fprintln(w)
		t := &output.TableData{Columns: output.Columns("Leader", "From", "To", "Ended")}
		for _, term := range l.Terms {
			t.AddRow(output.Cells(term.Holder, d(term.From), d(term.To), term.Ended)...)
		}
		if err := p.PrintTable(t); err != nil {
			return err
		}
		for _, f := range l.Failovers {
			if f.NewLeader == "" {
				fmt.Fprintf(w, "\n%s crashed at %s while leading; nobody took over before the end.\n", text.Escape(f.Crashed), d(f.CrashedAt))
				continue
			}
			fmt.Fprintf(w, "\nFailover: %s crashed at %s while leading; %s acquired the lease at %s: %s without a leader.\n",
				text.Escape(f.Crashed), d(f.CrashedAt), text.Escape(f.NewLeader), d(f.AcquiredAt), p.Paint(output.Bold, d(f.Gap)))
		}
	}
	return nil
}

func actorTable(p *output.Printer, r *simulate.Result) *output.TableData {
	t := &output.TableData{Columns: []output.Column{
		{Name: "Actor"}, {Name: "Replicas", Wide: true}, {Name: "Method"}, {Name: "Retry"}, {Name: "Ops"},
		{Name: "Attempts", Wide: true}, {Name: "OK"}, {Name: "No-op"}, {Name: "409"}, {Name: "Apply-409"}, {Name: "422"},
		{Name: "Errors"}, {Name: "Give-ups"}, {Name: "P50"}, {Name: "P95"}, {Name: "P99"}, {Name: "Revs"}, {Name: "Lost"},
		{Name: "Retries", Wide: true}, {Name: "Manager", Wide: true}, {Name: "Target", Wide: true},
	}}
	n := func(i int) output.Cell { return output.Cell{Text: strconv.Itoa(i)} }
	bad := func(i int, st output.Style) output.Cell {
		c := n(i)
		if i > 0 {
			c.Style = st
		}
		return c
	}
	for _, a := range r.Actors {
		retry := a.Retry
		if retry == "" {
			retry = "-"
		}
		var hist []string
		for _, b := range a.Retries {
			hist = append(hist, fmt.Sprintf("%d:%d", b.Retries, b.Count))
		}
		method := a.Method
		switch a.Method {
		case scenario.MethodLeaderElection:
			method = fmt.Sprintf("%s (%d acquired, %d renewed)", a.Method, a.Acquisitions, a.Renewals)
		case scenario.MethodWatch:
			method = fmt.Sprintf("watch (%d events, %d lists, %d x 410)", a.Events, a.Lists, a.Expired)
		}
		p50, p95, p99 := "-", "-", "-"
		if a.Latency.Count > 0 {
			p50, p95, p99 = d(a.Latency.P50), d(a.Latency.P95), d(a.Latency.P99)
		}
		t.AddRow(output.Cell{Text: a.Name}, n(a.Replicas), output.Cell{Text: method}, output.Cell{Text: retry}, n(a.Operations),
			n(a.Attempts), output.Cell{Text: strconv.Itoa(a.Successes), Style: output.Green}, n(a.NoOps),
			bad(a.Conflicts, output.Yellow), bad(a.ApplyConflicts, output.Yellow), bad(a.Invalid, output.Yellow),
			bad(a.Errors, output.Red), bad(a.GiveUps, output.Red), output.Cell{Text: p50}, output.Cell{Text: p95}, output.Cell{Text: p99},
			n(a.RevisionsConsumed), bad(a.LostUpdates, output.Red), output.Cell{Text: strings.Join(hist, " ")},
			output.Cell{Text: a.FieldManager}, output.Cell{Text: a.Target})
	}
	return t
}

// PrintSteps prints the request trace step by step.
func PrintSteps(p *output.Printer, r *simulate.Result) error {
	t := &output.TableData{Columns: output.Columns("Time", "Actor", "Request", "Result")}
	for _, s := range r.Steps {
		req := s.Verb
		if s.Target != "" && s.Verb != "RETRY" {
			req += " " + s.Target
		}
		if s.SentRV != "" {
			req += " (resourceVersion " + s.SentRV + ")"
		}
		res := ""
		style := output.None
		switch {
		case s.Code == 0:
			res = s.Note
			if s.Outcome == "giveup" {
				style = output.Red
			} else {
				style = output.Faint
			}
		default:
			res = strconv.Itoa(s.Code)
			if s.Reason != "" {
				res += " " + s.Reason
			}
			if s.RV != "" && s.Code < 300 {
				res += ", resourceVersion " + s.RV
			}
			if s.Message != "" {
				res += ": " + s.Message
			}
			if s.Note != "" && s.Verb != "GET" {
				res += " [" + s.Note + "]"
			}
			switch s.Outcome {
			case "ok":
				style = output.Green
			case "conflict", "invalid":
				style = output.Yellow
			case "error", "giveup":
				style = output.Red
			}
		}
		t.AddRow(output.Cell{Text: d(s.At)}, output.Cell{Text: s.Actor}, output.Cell{Text: req}, output.Cell{Text: res, Style: style})
	}
	return p.PrintTable(t)
}

// PrintStory prints what the bare `kubectl rv simulate` shows: the
// scenario's description, the steps and the summary.
func PrintStory(p *output.Printer, r *simulate.Result) error {
	w := p.Out
	fmt.Fprintf(w, "%s\n", p.Paint(output.Bold, "Simulating "+text.Escape(r.Scenario)+" in virtual time (an embedded etcd-exact store, the API server's write path):"))
	fmt.Fprintln(w, text.Wrap(text.Escape(r.Description), 100))
	fmt.Fprintln(w)
	if err := PrintSteps(p, r); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := PrintSummary(p, r); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "More: kubectl rv simulate list; kubectl rv simulate run --builtin retry-storm --report storm.html")
	return nil
}
