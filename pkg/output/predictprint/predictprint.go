package predictprint

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Kind is the report's kind.
const Kind = "PredictReport"

// WebhookNote is the note every server-engine report carries.
const WebhookNote = "server dry runs (dryRun=All) persist nothing, but still pass through admission webhooks, which see dryRun=true and may have side effects if they are not marked sideEffects: None"

// OfflineNote is the note every offline report carries.
const OfflineNote = "offline predictions run the API server's field manager and patch code in process, and its defaulting, validation and registry strategy where the offline engine has them (each object's note says which ran; custom resources against --schema); they do not run admission webhooks, RBAC's escalation check or see cluster state such as quota, and a write whose verdict depends on rules that did not run is unknown"

// Report is the structured output of kubectl rv predict.
type Report struct {
	output.TypeMeta `json:",inline"`
	// Engine is server or offline.
	Engine string `json:"engine"`
	// Notes qualify the predictions.
	Notes   []string         `json:"notes,omitempty"`
	Objects []predict.Result `json:"objects"`
}

// NewReport wraps results in a report.
func NewReport(engine string, results []predict.Result) Report {
	r := Report{TypeMeta: output.NewTypeMeta(Kind), Engine: engine, Objects: results}
	if r.Objects == nil {
		r.Objects = []predict.Result{}
	}
	switch engine {
	case "server":
		r.Notes = []string{WebhookNote}
	case "offline":
		r.Notes = []string{OfflineNote}
	}
	return r
}

// CheckSecrets returns an error unless every result of a Secret went
// through pkg/redact (redact.Guarded).
func (r Report) CheckSecrets() error {
	for _, o := range r.Objects {
		if err := o.CheckSecrets(); err != nil {
			return err
		}
	}
	return nil
}

// Print writes the report with p: structured, or a table of methods with
// one row per object and method (the OBJECT column only when there are
// several objects). Notes go to errOut in table mode. A report with a
// Secret's result that has not been through pkg/redact is refused, in
// every format.
func Print(p *output.Printer, errOut io.Writer, r Report) error {
	if err := r.CheckSecrets(); err != nil {
		return err
	}
	if p.Structured() {
		return p.PrintObject(r)
	}
	if len(r.Objects) == 1 {
		if _, err := fmt.Fprintf(p.Out, "%s\n", text.Escape(header(r.Objects[0]))); err != nil {
			return err
		}
	}
	t := Table(r, len(r.Objects) > 1, p.Format == output.Wide)
	if err := p.PrintTable(t); err != nil {
		return err
	}
	return printNotes(errOut, r)
}

// printNotes writes the report's notes and each object's rules note to
// errOut.
func printNotes(errOut io.Writer, r Report) error {
	for _, n := range r.Notes {
		if _, err := fmt.Fprintf(errOut, "note: %s\n", text.Escape(n)); err != nil {
			return err
		}
	}
	for _, o := range r.Objects {
		if o.Rules == "" {
			continue
		}
		if _, err := fmt.Fprintf(errOut, "note: %s: %s\n", text.Escape(o.Object.String()), text.Escape(o.Rules)); err != nil {
			return err
		}
	}
	return nil
}

func header(o predict.Result) string {
	var b strings.Builder
	if o.FieldManager == "" {
		fmt.Fprintf(&b, "%s (%s engine, kubectl's field managers)", o.Object, o.Engine)
	} else {
		fmt.Fprintf(&b, "%s (%s engine, field manager %q)", o.Object, o.Engine, o.FieldManager)
	}
	if o.LiveResourceVersion == "" {
		b.WriteString(": does not exist")
		return b.String()
	}
	fmt.Fprintf(&b, ": live resourceVersion %s", o.LiveResourceVersion)
	switch {
	case o.BaseAssumed:
		b.WriteString(", base assumed fresh")
	case o.Stale:
		fmt.Fprintf(&b, ", base %s is stale", o.BaseResourceVersion)
	default:
		fmt.Fprintf(&b, ", base %s is current", o.BaseResourceVersion)
	}
	return b.String()
}

var verdictStyle = map[predict.Verdict]output.Style{
	predict.OK:            output.Green,
	predict.Conflict:      output.Red,
	predict.ApplyConflict: output.Red,
	predict.Clobber:       output.Yellow,
	predict.Invalid:       output.Red,
	predict.ServerError:   output.Red,
	predict.NotFound:      output.Faint,
	predict.Unknown:       output.Yellow,
}

// Table builds the method table. withObject adds the OBJECT column;
// whole shows the server's reasons whole (-o wide), where the table cuts
// them to their first line and 160 bytes.
func Table(r Report, withObject, whole bool) *output.TableData {
	cols := []output.Column{}
	if withObject {
		cols = append(cols, output.Column{Name: "object"})
	}
	cols = append(cols, output.Columns("method", "verdict", "code", "generation", "detail")...)
	cols = append(cols, output.Column{Name: "changed", Wide: true}, output.Column{Name: "ownership", Wide: true})
	t := &output.TableData{Columns: cols}
	for _, o := range r.Objects {
		for _, m := range o.Methods {
			var row []output.Cell
			if withObject {
				row = append(row, output.Cell{Text: o.Object.String()})
			}
			gen := "-"
			switch {
			case m.Verdict != predict.OK && m.Verdict != predict.Clobber:
			case m.GenerationBumped:
				gen = "bumped"
			default:
				gen = "same"
			}
			code := "-"
			if m.Code != 0 {
				code = fmt.Sprint(m.Code)
			}
			row = append(row,
				output.Cell{Text: string(m.Method)},
				output.Cell{Text: string(m.Verdict), Style: verdictStyle[m.Verdict]},
				output.Cell{Text: code},
				output.Cell{Text: gen},
				output.Cell{Text: detailOf(o, m, whole)},
				output.Cell{Text: changed(m)},
				output.Cell{Text: ownership(m)},
			)
			t.AddRow(row...)
		}
	}
	return t
}

// Detail explains one method's verdict in a line, as the table does.
func Detail(o predict.Result, m predict.MethodResult) string { return detailOf(o, m, false) }

func detailOf(o predict.Result, m predict.MethodResult, whole bool) string {
	d := detail(o, m, whole)
	if ca := m.ClientApply; ca != nil {
		d = join(clientApply(ca, m.Verdict), d)
	}
	if u := m.CSAUpgrade; u != nil {
		d = join(d, csaUpgrade(u, m.Verdict))
	}
	return d
}

func join(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}

// csaUpgrade sums up the move to server-side apply of an object last
// applied client-side.
func csaUpgrade(u *predict.CSAUpgrade, v predict.Verdict) string {
	when := ""
	if v == predict.ApplyConflict {
		when = "once an apply succeeds, "
	}
	s := fmt.Sprintf("last applied client-side (%s): %sthe managedFields upgrade moves %d field(s)", strings.Join(u.Managers, ", "), when, len(u.Moved))
	if len(u.Deleted) > 0 {
		s += fmt.Sprintf(", then the apply deletes %s", strings.Join(u.Deleted, ", "))
	}
	return s
}

// clientApply says what kubectl's client-side apply did beyond the
// verdict: the fields it deletes because they left the manifest, a
// missing annotation, a create or no request at all.
func clientApply(ca *predict.ClientApplyResult, v predict.Verdict) string {
	var parts []string
	switch ca.Action {
	case predict.ActionCreate:
		if v == predict.OK {
			parts = append(parts, "creates it with the last-applied annotation")
		}
	case predict.ActionUnchanged:
		return "unchanged: the three-way patch is empty, kubectl sends nothing"
	}
	if ca.AnnotationMissing {
		parts = append(parts, "no last-applied annotation: kubectl warns, deletes nothing and adds it")
	}
	if len(ca.Deleted) > 0 {
		parts = append(parts, fmt.Sprintf("deletes %s (left the manifest)", strings.Join(ca.Deleted, ", ")))
	}
	return strings.Join(parts, "; ")
}

func detail(o predict.Result, m predict.MethodResult, whole bool) string {
	switch m.Verdict {
	case predict.Conflict:
		if o.Stale {
			return fmt.Sprintf("stale resourceVersion %s (live %s)", o.BaseResourceVersion, o.LiveResourceVersion)
		}
		return reason(m.Reason, whole)
	case predict.ApplyConflict:
		parts := make([]string, len(m.Conflicts))
		for i, c := range m.Conflicts {
			parts[i] = fmt.Sprintf("%s (%s)", c.Field, c.Owner())
		}
		return fmt.Sprintf("%d conflict(s): %s", len(m.Conflicts), strings.Join(parts, ", "))
	case predict.Clobber:
		return clobbered(m)
	case predict.OK:
		if m.ClientApply != nil && m.ClientApply.Action == predict.ActionUnchanged {
			return ""
		}
		if m.NoOp {
			return "no change (resourceVersion stays)"
		}
		return fmt.Sprintf("%d field(s) change", len(m.Changed))
	}
	return reason(m.Reason, whole)
}

// clobbered says which fields the write takes from each other manager
// (overwrites, and owns them then) and which it removes, as the changed
// fields say: "takes .spec.replicas from "hpa"; removes
// .metadata.labels.app from "kubectl-create"".
func clobbered(m predict.MethodResult) string {
	removed := map[string]bool{}
	for _, c := range m.Changed {
		if c.Change == "removed" {
			removed[c.Path] = true
		}
	}
	var parts []string
	for _, c := range m.Clobbered {
		var takes, removes []string
		for _, f := range c.Fields {
			if removed[f] {
				removes = append(removes, f)
			} else {
				takes = append(takes, f)
			}
		}
		if len(takes) > 0 {
			parts = append(parts, fmt.Sprintf("takes %s from %q", strings.Join(takes, ", "), c.Manager))
		}
		if len(removes) > 0 {
			parts = append(parts, fmt.Sprintf("removes %s from %q", strings.Join(removes, ", "), c.Manager))
		}
	}
	return strings.Join(parts, "; ")
}

// reason is a server's reason in a table cell: whole, its lines joined,
// or its first line cut to 160 bytes.
func reason(s string, whole bool) string {
	if whole {
		return strings.Join(strings.Split(s, "\n"), "; ")
	}
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func changed(m predict.MethodResult) string {
	parts := make([]string, len(m.Changed))
	for i, c := range m.Changed {
		parts[i] = c.Path
	}
	return strings.Join(parts, ", ")
}

func ownership(m predict.MethodResult) string {
	var parts []string
	for _, c := range m.OwnershipChanges {
		s := c.Manager
		if len(c.Gained) > 0 {
			s += fmt.Sprintf(" +%d", len(c.Gained))
		}
		if len(c.Lost) > 0 {
			s += fmt.Sprintf(" -%d", len(c.Lost))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
