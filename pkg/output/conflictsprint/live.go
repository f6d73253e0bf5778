package conflictsprint

import (
	"fmt"
	"strconv"

	"github.com/kubectl-rv/kubectl-rv/pkg/conflicts"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
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
		count(rep.Conflicts), rep.Seconds, rate(rep.PerSecond), count(rep.Requests), output.Escape(server))
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
