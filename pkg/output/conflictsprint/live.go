package conflictsprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// LiveKind is the kind of the structured --live report.
const LiveKind = "ConflictsLiveReport"

// ReplicaNote says what one scrape of /metrics sees.
const ReplicaNote = "one scrape sees one API-server replica: behind a load balancer, each replica counts only the requests it served"

// LiveScope says where --live read its figures.
type LiveScope struct {
	// Server is the API server's URL, as the kubeconfig names it.
	Server string `json:"server"`
	For    string `json:"for"`
}

// LiveDocument is the structured --live report (-o json|yaml), version
// rv.kubectl-rv.dev/v1alpha1, kind ConflictsLiveReport.
type LiveDocument struct {
	output.TypeMeta `json:",inline"`
	Scope           LiveScope `json:"scope"`
	Note            string    `json:"note"`
	conflicts.LiveReport
}

// NewLiveDocument wraps a --live report for printing.
func NewLiveDocument(rep *conflicts.LiveReport, scope LiveScope) LiveDocument {
	return LiveDocument{TypeMeta: output.NewTypeMeta(LiveKind), Scope: scope, Note: ReplicaNote, LiveReport: *rep}
}

// PrintLive writes a row per group/resource/subresource/verb with 409s,
// then the totals and what one scrape can see.
func PrintLive(p *output.Printer, rep *conflicts.LiveReport, server string) error {
	t := &output.TableData{Columns: output.Columns("group", "resource", "subresource", "verb", "409s", "409/s")}
	for _, r := range rep.Rows {
		n := cell(count(r.Conflicts))
		if r.Reset {
			n.Text += " (reset)"
		}
		if r.Conflicts > 0 {
			n.Style = output.Red
		}
		t.AddRow(cell(dash(r.Group)), cell(r.Resource), cell(dash(r.Subresource)), cell(r.Verb), n, cell(rate(r.PerSecond)))
	}
	if len(t.Rows) > 0 {
		if err := p.PrintTable(t); err != nil {
			return err
		}
		fmt.Fprintln(p.Out)
	}
	fmt.Fprintf(p.Out, "%s 409s in %.1fs (%s/s) of %s requests, from %s's /metrics (apiserver_request_total{code=\"409\"})\n",
		count(rep.Conflicts), rep.Seconds, rate(rep.PerSecond), count(rep.Requests), text.Escape(server))
	if rep.Restarted {
		fmt.Fprintln(p.Out, "the API server restarted between the scrapes (its process start time changed), or another replica answered: the figures count only since the restart")
	} else if rep.Resets > 0 {
		fmt.Fprintf(p.Out, "%d counter(s) went down between the scrapes (reset): those rows count only since the reset\n", rep.Resets)
	}
	_, err := fmt.Fprintln(p.Out, ReplicaNote)
	return err
}

func count(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func rate(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// PrintTick writes one line of the per-interval view: the time since
// start, the 409s per second since the previous scrape and the top rows.
func PrintTick(w io.Writer, rep *conflicts.LiveReport, start time.Time) error {
	var rows []string
	for i, r := range rep.Rows {
		if i == 3 {
			rows = append(rows, fmt.Sprintf("+%d more", len(rep.Rows)-3))
			break
		}
		what := r.Resource
		if r.Group != "" {
			what += "." + r.Group
		}
		if r.Subresource != "" {
			what += "/" + r.Subresource
		}
		rows = append(rows, fmt.Sprintf("%s %s %s", what, r.Verb, rate(r.PerSecond)))
	}
	line := fmt.Sprintf("+%-4s %s 409/s", rep.End.Sub(start).Round(time.Second), rate(rep.PerSecond))
	if len(rows) > 0 {
		line += ": " + strings.Join(rows, ", ")
	}
	_, err := fmt.Fprintln(w, text.Escape(line))
	return err
}
