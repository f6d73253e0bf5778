package doctorprint

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/doctor"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the kind of the structured report.
const Kind = "DoctorReport"

// Scope says what was probed.
type Scope struct {
	// Namespace is the namespace namespaced types were probed in; empty
	// means all namespaces.
	Namespace string   `json:"namespace,omitempty"`
	Types     []string `json:"types"`
	// WriteProbe is the namespace of the write probe, when it ran.
	WriteProbe string `json:"writeProbe,omitempty"`
}

// Document is the structured report (-o json|yaml).
type Document struct {
	output.TypeMeta `json:",inline"`
	Scope           Scope              `json:"scope"`
	Summary         doctor.Summary     `json:"summary"`
	Resources       []doctor.Resource  `json:"resources"`
	Checks          []doctor.CheckInfo `json:"checks"`
	Warnings        []string           `json:"warnings,omitempty"`
}

// NewDocument wraps a report for printing.
func NewDocument(rep *doctor.Report, scope Scope) Document {
	res := rep.Resources
	if res == nil {
		res = []doctor.Resource{}
	}
	return Document{
		TypeMeta: output.NewTypeMeta(Kind), Scope: scope, Summary: rep.Summary,
		Resources: res, Checks: doctor.Checks, Warnings: rep.Warnings,
	}
}

// Options tune the tables.
type Options struct {
	// Details shows every resource's checks; otherwise only the resources
	// with a failure or a warning get their table.
	Details bool
}

// Print writes the summary table (a row per resource), then a table of
// checks for each resource that failed or warned (every resource with
// Details), then the counts.
func Print(p *output.Printer, rep *doctor.Report, opts Options) error {
	if err := p.PrintTable(Summary(rep)); err != nil {
		return err
	}
	for _, r := range rep.Resources {
		if len(r.Checks) == 0 || !opts.Details && r.Count(doctor.Fail)+r.Count(doctor.Warn) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(p.Out, "\n%s (%s):\n", text.Escape(r.Name()), text.Escape(groupVersion(r))); err != nil {
			return err
		}
		if err := p.PrintTable(Checks(r)); err != nil {
			return err
		}
	}
	s := rep.Summary
	gone := ""
	if s.Gone > 0 {
		gone = fmt.Sprintf(" (%d removed during the run)", s.Gone)
	}
	if s.Unreachable > 0 {
		gone += fmt.Sprintf(" (%d did not answer)", s.Unreachable)
	}
	_, err := fmt.Fprintf(p.Out, "\n%s%s: %s passed, %d failed, %d warned, %d skipped\n",
		text.Plural(s.Resources, "resource"), gone, text.Plural(s.Pass, "check"), s.Fail, s.Warn, s.Skip)
	return err
}

// Summary is a row per resource.
func Summary(rep *doctor.Report) *output.TableData {
	t := &output.TableData{Columns: output.Columns("resource", "pass", "fail", "warn", "skip", "failed")}
	for _, r := range rep.Resources {
		if r.Warning != "" {
			t.AddRow(output.Cell{Text: r.Name()}, cell("-"), cell("-"), cell("-"), cell("-"), output.Cell{Text: r.Warning, Style: output.Yellow})
			continue
		}
		var failed []string
		for _, c := range r.Checks {
			if c.Status == doctor.Fail {
				failed = append(failed, c.ID)
			}
		}
		st := output.Green
		if len(failed) > 0 {
			st = output.Red
		}
		t.AddRow(output.Cell{Text: r.Name()}, count(r, doctor.Pass), count(r, doctor.Fail), count(r, doctor.Warn), count(r, doctor.Skip),
			output.Cell{Text: dash(strings.Join(failed, ",")), Style: st})
	}
	return t
}

// Checks is a row per check of one resource.
func Checks(r doctor.Resource) *output.TableData {
	t := &output.TableData{Columns: output.Columns("check", "status", "observed")}
	for _, c := range r.Checks {
		t.AddRow(cell(c.ID), output.Cell{Text: string(c.Status), Style: statusStyle(c.Status)}, cell(c.Observed))
	}
	return t
}

// Explain writes each check's contract and the clients it protects, for
// --help and docs.
func Explain(w io.Writer) error {
	for _, c := range doctor.Checks {
		if _, err := fmt.Fprintf(w, "  %-26s %s\n  %-26s breaks: %s\n", c.ID, c.Contract, "", c.Breaks); err != nil {
			return err
		}
	}
	return nil
}

func statusStyle(s doctor.Status) output.Style {
	switch s {
	case doctor.Pass:
		return output.Green
	case doctor.Fail:
		return output.Red
	case doctor.Warn:
		return output.Yellow
	}
	return output.None
}

func count(r doctor.Resource, s doctor.Status) output.Cell { return cell(strconv.Itoa(r.Count(s))) }

func cell(s string) output.Cell { return output.Cell{Text: s} }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func groupVersion(r doctor.Resource) string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}
