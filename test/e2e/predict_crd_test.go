//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

// TestPredictCustomResourceSchemaRules runs kubectl rv predict on the
// cases #29 found offline wrong or failing, for a custom resource whose
// CRD has defaults: against the server (dry run) and offline with the CRD
// (--schema, a file whose second CRD it is), which must give the server's verdict, code and reason for
// every method; and offline without the CRD, which must exit 0 or 1 with
// `unknown` where it cannot know, never another verdict than the server's.
func TestPredictCustomResourceSchemaRules(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	crd := dialCRD
	_, _ = installCRD(t, crd)
	obj := "apiVersion: predict.example.com/v1\nkind: Dial\nmetadata: {name: d, namespace: " + ns + "}\nspec: {size: 2}\n"
	cluster.KubectlStdin(t, obj, "apply", "--server-side", "--field-manager", "owner", "-f", "-")
	// Another CRD first: --schema takes every CRD of a file (before, the
	// first only, and the Dial would have been unknown).
	crdFile := predictWriteFile(t, dir, "crd.yaml", gadgetCRD+"---\n"+crd)
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "dial", "d", "-n", ns, "-o", "yaml", "--show-managed-fields"))
	cases := []struct{ name, args string }{
		// A read copy that leaves out the defaulted color: re-defaulted.
		{"defaulted field left out", "-f " + predictWriteFile(t, dir, "copy.yaml", obj)},
		{"size null", "d --type merge --patch {\"spec\":{\"size\":null}}"},
		{"unknown field", "-f " + predictWriteFile(t, dir, "unknown.yaml", strings.Replace(obj, "size: 2", "size: 2, shape: round", 1))},
		{"wrong type", "-f " + predictWriteFile(t, dir, "type.yaml", strings.Replace(obj, "size: 2", "size: two", 1))},
		{"CEL rule", "-f " + predictWriteFile(t, dir, "cel.yaml", strings.Replace(obj, "size: 2", "size: 9", 1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := strings.Fields(c.args)
			if args[0] == "d" {
				args[0] = "dial/d"
				args = append(args, "-n", ns)
			}
			args = append(args, "--field-manager", "ci")
			srv, _ := predictReport(t, args...)
			off, _ := predictReport(t, append(args, "--offline", "--live", live, "--schema", crdFile)...)
			bare, _ := predictReport(t, append(args, "--offline", "--live", live)...)
			sm, om, bm := methodMap(srv), methodMap(off), methodMap(bare)
			for m, s := range sm {
				o := om[m]
				if o.Verdict != s.Verdict || o.Code != s.Code || o.Reason != s.Reason {
					t.Errorf("%s: offline with the CRD %s %d %q, server %s %d %q", m, o.Verdict, o.Code, o.Reason, s.Verdict, s.Code, s.Reason)
				}
				if b := bm[m]; b.Verdict != s.Verdict && b.Verdict != predict.Unknown {
					t.Errorf("%s: offline without the CRD %s (%s), server %s", m, b.Verdict, b.Reason, s.Verdict)
				}
			}
		})
	}
}

// dialCRD is a CRD with defaults and a CEL rule on spec ("size is at
// most 8").
var dialCRD = crdManifest("predict.example.com", "Dial", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        x-kubernetes-validations:
        - {rule: "self.size <= 8", message: size is at most 8}
        properties:
          size: {type: integer, default: 3}
          color: {type: string, default: blue}
`)

// TestPredictInvalidReasonOnce: the server's 422 names a field error in
// its message and again in its causes; predict shows it once, whole in
// -o json and -o wide.
func TestPredictInvalidReasonOnce(t *testing.T) {
	ns := cluster.Namespace(t)
	_, _ = installCRD(t, crdManifest("predict.example.com", "Knob", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          size: {type: integer, minimum: 1}
`))
	obj := "apiVersion: predict.example.com/v1\nkind: Knob\nmetadata: {name: k, namespace: " + ns + "}\nspec: {size: 2}\n"
	cluster.KubectlStdin(t, obj, "apply", "--server-side", "--field-manager", "owner", "-f", "-")
	f := predictWriteFile(t, t.TempDir(), "zero.yaml", strings.Replace(obj, "size: 2", "size: 0", 1))
	const msg = "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
	rep, _ := predictReport(t, "-f", f, "--field-manager", "ci")
	// The methods the server refuses for spec.size (update-no-rv and
	// strategic-merge-patch are refused for other reasons).
	invalid := 0
	for _, m := range rep.Objects[0].Methods {
		if m.Verdict != predict.Invalid || !strings.Contains(m.Reason, "spec.size") {
			continue
		}
		invalid++
		if strings.Count(m.Reason, "greater than or equal to 1") != 1 || !strings.Contains(m.Reason, msg) {
			t.Errorf("-o json: %s: want %q once, got %q", m.Method, msg, m.Reason)
		}
	}
	if invalid == 0 {
		t.Fatalf("no method is invalid for spec.size: %+v", rep.Objects[0].Methods)
	}
	wide := cluster.RV(t, "predict", "-f", f, "--field-manager", "ci", "-o", "wide")
	rows := 0
	for _, l := range strings.Split(wide.Stdout, "\n") {
		if !strings.Contains(l, " invalid ") || !strings.Contains(l, "spec.size") {
			continue
		}
		rows++
		if strings.Count(l, "greater than or equal to 1") != 1 || !strings.Contains(l, msg) {
			t.Errorf("-o wide: want %q once in the row, got %q", msg, l)
		}
	}
	if rows != invalid {
		t.Errorf("-o wide: %d invalid rows, -o json %d:\n%s", rows, invalid, wide)
	}
}
