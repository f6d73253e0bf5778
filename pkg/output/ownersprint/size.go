package ownersprint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// SizeKind is the kind of the structured size report.
const SizeKind = "OwnersSizeReport"

// SizeReport is the structured output of owners --view size.
type SizeReport struct {
	output.TypeMeta `json:",inline"`
	*owners.SizeReport
}

// NewSizeReport wraps the engine's report with its apiVersion and kind.
func NewSizeReport(r *owners.SizeReport) SizeReport {
	return SizeReport{TypeMeta: output.NewTypeMeta(SizeKind), SizeReport: r}
}

// Size writes the managedFields weight: one row per kind, then the
// heaviest objects with what makes them heavy.
func Size(p *output.Printer, r *owners.SizeReport) error {
	t := &output.TableData{Columns: output.Columns("KIND", "OBJECTS", "MANAGEDFIELDS BYTES", "OBJECT BYTES", "SHARE", "ENTRIES", "MAX ENTRIES", "NEAR CAP", "ANCIENT", "GENERATED APPLY")}
	t.Columns = append(t.Columns, output.Column{Name: "GENERATED STEMS", Wide: true}, output.Column{Name: "NO MANAGEDFIELDS", Wide: true})
	for _, k := range r.Kinds {
		generated := strconv.Itoa(k.GeneratedApplyEntries)
		if k.GeneratedApplyEntries > 0 {
			generated += fmt.Sprintf(" in %d", k.GeneratedObjects)
		}
		var stems []string
		for _, s := range k.GeneratedStems {
			stems = append(stems, fmt.Sprintf("%s-* (%d)", s.Stem, s.Entries))
		}
		t.AddRow(output.Cells(k.Kind, strconv.Itoa(k.Objects), strconv.FormatInt(k.ManagedFieldsBytes, 10), strconv.FormatInt(k.ObjectBytes, 10),
			percent(k.Share()), strconv.FormatInt(k.Entries, 10), strconv.Itoa(k.MaxEntries), strconv.Itoa(k.NearCapObjects), strconv.Itoa(k.AncientObjects),
			generated, dash(strings.Join(stems, ", ")), strconv.Itoa(k.NoManagedFields))...)
	}
	if err := p.PrintTable(t); err != nil {
		return err
	}
	if len(r.Top) == 0 {
		return nil
	}
	top := &output.TableData{Columns: output.Columns("NAMESPACE", "OBJECT", "MANAGEDFIELDS BYTES", "OBJECT BYTES", "SHARE", "ENTRIES", "UPDATE", "NOTES")}
	for _, o := range r.Top {
		top.AddRow(output.Cells(dash(o.Namespace), o.Kind+"/"+o.Name, strconv.Itoa(o.ManagedFieldsBytes), strconv.Itoa(o.ObjectBytes),
			percent(o.Share()), strconv.Itoa(o.Entries), strconv.Itoa(o.UpdateEntries), dash(sizeNotes(o)))...)
	}
	if _, err := fmt.Fprintf(p.Out, "\nHEAVIEST %d BY MANAGEDFIELDS BYTES\n", len(r.Top)); err != nil {
		return err
	}
	return p.PrintTable(top)
}

// sizeNotes says what makes an object's managedFields heavy.
func sizeNotes(o owners.ObjectSize) string {
	var notes []string
	if o.AncientChanges {
		notes = append(notes, "ancient-changes: over the cap of "+strconv.Itoa(owners.MaxUpdateManagers)+" Update entries")
	} else if o.NearCap {
		notes = append(notes, fmt.Sprintf("near the cap: %d of %d Update entries", o.UpdateEntries, owners.MaxUpdateManagers))
	}
	if n := len(o.GeneratedApply); n > 0 {
		notes = append(notes, fmt.Sprintf("%d generated Apply managers (%s)", n, strings.Join(o.GeneratedApply[:min(n, 3)], ", ")+more(n-3)))
	}
	return strings.Join(notes, "; ")
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(", %d more", n)
}

func percent(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" }
