package cireport

import "testing"

// TestPerKind: a rule, group and case per kind, in order; a finding takes
// its kind's rule, and is an error only where --fail-on fails its class.
func TestPerKind(t *testing.T) {
	obj := Object{Type: "configmaps", Namespace: "ns", Name: "a"}
	r := PerKind(Tool{Name: "kubectl-rv"}, "churn", func(c string) bool { return c == "fight" }, []Kind{
		{Rule: Rule{ID: "churn/loop", Name: "self-loop"}, Class: "loop", Findings: []Finding{{Object: obj, Message: "m"}}},
		{Rule: Rule{ID: "churn/fight", Name: "fight"}, Class: "fight", Findings: []Finding{{Object: obj, Message: "n"}}},
		{Rule: Rule{ID: "churn/none", Name: "none"}, Class: "none"},
	})
	if len(r.Rules) != 3 || len(r.Groups) != 3 || r.Command != "churn" {
		t.Fatalf("report %+v", r)
	}
	loop, fight := r.Groups[0].Cases[0].Findings[0], r.Groups[1].Cases[0].Findings[0]
	if loop.Rule != "churn/loop" || loop.Level != Warning || fight.Rule != "churn/fight" || fight.Level != Error {
		t.Errorf("findings %+v, %+v: want a warning of churn/loop and an error of churn/fight", loop, fight)
	}
	if g := r.Groups[2]; g.Name != "none" || g.Cases[0].Name != "none" || g.Cases[0].Findings != nil {
		t.Errorf("a kind without findings: %+v, want a passing case named after its rule", g)
	}
}
