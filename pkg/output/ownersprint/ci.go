package ownersprint

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// CI says how the ownership becomes a CI report (-o github, junit, sarif).
type CI struct {
	Tool cireport.Tool
	// Fails reports whether --fail-on fails on a findings class
	// (owners.Findings: "hazard"): hazards are errors then, warnings
	// otherwise. Drift is always an error: the drift check fails the run.
	Fails func(class string) bool
	// Locate places findings on the lines of the files the objects were
	// read from; nil for the cluster.
	Locate Locate
}

// DriftRule is the rule of a field owned by a manager other than the
// expected one.
const DriftRule = "owners/drift"

// ciHazards are the hazard rules, in the order the engine ranks them, with
// the one-line fix of each.
var ciHazards = []struct {
	Type      managedfields.HazardType
	Help, Fix string
}{
	{managedfields.HazardClientSideApplyMigration, "fields owned by both kubectl-client-side-apply and a server-side apply manager: fields removed from the manifest stay, because the client-side apply entry still owns them",
		"see what the move to server-side apply takes with kubectl rv predict -f MANIFEST --method apply --field-manager M, then apply with that manager"},
	{managedfields.HazardApplyUpdateShared, "a field co-owned by an Apply manager and an Update manager: the applier's next change conflicts, and dropping the field leaves it owned by the Update manager",
		"give the field one owner: apply it with force from the applier, or leave it out of the manifest"},
	{managedfields.HazardStaleFields, "a managedFields entry owns fields the object does not have",
		"write the object again as that manager, which drops the fields it no longer sets"},
	{managedfields.HazardAncientChanges, "more than ten Update managers wrote the object, so the API server merged the oldest into an ancient-changes entry: who wrote those fields is lost",
		"set a distinct, stable field manager per writer, or write with server-side apply"},
	{managedfields.HazardGenericManager, "a manager named Go-http-client, unknown or empty hides the real writer",
		"set a user agent or a field manager in the client that writes the object"},
	{managedfields.HazardDuplicateEntry, "two managedFields entries of one manager, operation and subresource: the API server keeps only the last, and the fields only the earlier lists are owned by no one",
		"write the object once more: the API server drops the earlier entry"},
}

// HazardRule is the CI rule of a hazard type: "owners/ApplyUpdateShared".
func HazardRule(t managedfields.HazardType) string { return "owners/" + string(t) }

// CIReport turns the ownership of objs into a CI report: a group per
// object; in it a case per hazard type, with a finding per hazard at its
// first field (an entry's hazard at the entry in metadata.managedFields),
// and, with the drift check, a case "drift from M" with a finding per
// field a manager other than M owns, at the field's line.
func CIReport(objs []owners.Object, ci CI) cireport.Report {
	r := cireport.Report{Tool: ci.Tool, Command: "owners"}
	r.Rules = append(r.Rules, cireport.Rule{ID: DriftRule, Name: "drift",
		Help: "a field is owned by a manager other than the expected one (--expect-manager, --drift): someone ran kubectl scale or kubectl edit, or a controller or webhook took it",
		Fix:  "take the field back with a forced apply as the expected manager, or leave it out of the manifest and let its owner keep it"})
	for _, h := range ciHazards {
		r.Rules = append(r.Rules, cireport.Rule{ID: HazardRule(h.Type), Name: string(h.Type), Help: h.Help, Fix: h.Fix})
	}
	level := cireport.LevelOf(ci.Fails, "hazard")
	for _, o := range objs {
		obj := cireport.Object{Type: o.Object.GetKind(), Namespace: o.Object.GetNamespace(), Name: o.Object.GetName()}
		g := cireport.Group{Name: obj.String()}
		for _, h := range ciHazards {
			c := cireport.Case{Name: string(h.Type)}
			for _, hz := range o.Hazards {
				if hz.Type == h.Type {
					c.Findings = append(c.Findings, cireport.Finding{Rule: HazardRule(hz.Type), Level: level, Message: hz.Message,
						Object: obj, Location: ci.Locate.nearest(o, hazardPath(hz))})
				}
			}
			g.Cases = append(g.Cases, c)
		}
		if o.Drift != nil {
			g.Cases = append(g.Cases, driftCase(o, obj, ci.Locate))
		}
		r.Groups = append(r.Groups, g)
	}
	return r
}

// hazardPath is where a hazard points: its first field, or the
// managedFields entry it is about.
func hazardPath(h managedfields.Hazard) fieldpath.Path {
	if len(h.Fields) > 0 {
		return h.Fields[0]
	}
	if len(h.Owners) > 0 {
		return fieldpath.MakePathOrDie("metadata", "managedFields", h.Owners[0].Entry)
	}
	return fieldpath.Path{}
}

// driftCase is the drift check of one object: an error per field another
// manager owns, or a warning when there was no manager to expect.
func driftCase(o owners.Object, obj cireport.Object, locate Locate) cireport.Case {
	d := o.Drift
	if d.Expected == "" {
		return cireport.Case{Name: "drift", Findings: []cireport.Finding{{Rule: DriftRule, Level: cireport.Warning, Object: obj,
			Message:  "no Apply manager to expect, drift not checked: give --expect-manager NAME",
			Location: locate.nearest(o, fieldpath.Path{})}}}
	}
	c := cireport.Case{Name: fmt.Sprintf("drift from %q", d.Expected)}
	for _, f := range d.Fields {
		p := f.Node.Path()
		others := make([]string, len(f.Others))
		for i, ow := range f.Others {
			others[i] = ownerLabel(ow, Options{Time: TimeNone})
		}
		field := string(managedfields.AppendDisplayPath(nil, p))
		msg := fmt.Sprintf("%s is owned by %s, not by %q", field, strings.Join(others, ", "), d.Expected)
		if f.Shared {
			msg = fmt.Sprintf("%s is co-owned by %s besides %q: the next apply of %q that changes it conflicts", field, strings.Join(others, ", "), d.Expected, d.Expected)
		}
		c.Findings = append(c.Findings, cireport.Finding{Rule: DriftRule, Level: cireport.Error, Message: msg, Object: obj, Location: locate.nearest(o, p)})
	}
	return c
}

// PrintCI writes the ownership of objs in the CI format f to out.
func PrintCI(out io.Writer, f output.Format, objs []owners.Object, ci CI) error {
	return cireport.Write(out, f, CIReport(objs, ci))
}
