//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestOwnersFileCIFormatsAtTheReplicasLine: ci applies web (server-side
// apply), an HPA-like manager sets its replicas through /scale, and the
// object is dumped as kubectl get -o yaml --show-managed-fields prints
// it. owners -f on the dump, expecting ci to own the spec, finds the
// replicas drift and places it at the dump's `replicas:` line of the spec:
// an error annotation with -o github, a SARIF result there that validates,
// a JUnit failure there, and the line and column in -o json; the exit code
// is 1 in every format, as for the table.
func TestOwnersFileCIFormatsAtTheReplicasLine(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	cluster.KubectlStdin(t, strings.ReplaceAll(predictWeb, "NS", ns), "apply", "--server-side", "--field-manager", "ci", "-f", "-")
	dyn := cluster.Dynamic(t, "hpa-controller")
	if _, err := dyn.Resource(deploymentsGVR).Namespace(ns).Patch(context.Background(), "web", types.MergePatchType,
		[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "hpa-controller"}, "scale"); err != nil {
		t.Fatalf("patch /scale: %v", err)
	}
	waitScaled(t, deploymentsGVR, ns, "web")
	dump := cluster.MustKubectl(t, "get", "-n", ns, "deployment", "web", "-o", "yaml", "--show-managed-fields")
	predictWriteFile(t, dir, "live.yaml", dump)
	// The spec's replicas: the first line at the spec's indentation
	// (status has its own, below it; managedFields say f:replicas).
	n := lineOf(t, dump, "  replicas:")
	args := []string{"owners", "-f", "live.yaml", "--expect-manager", "ci", "--field", ".spec", "--include-scale"}

	code, table, stderr := rvIn(t, dir, args...)
	if code != 1 || !strings.Contains(table, "hpa-controller") {
		t.Fatalf("table: exit %d, want 1 and the hpa-controller's replicas\n%s%s", code, table, stderr)
	}
	code, gh, stderr := rvIn(t, dir, append(args, "-o", "github")...)
	want := fmt.Sprintf(`::error file=live.yaml,line=%d,col=3,title=drift%%3A Deployment/%s/web drift from "ci"::.spec.replicas is owned by hpa-controller (Update/scale), not by "ci"`, n, ns)
	if code != 1 || !strings.Contains(gh, want) {
		t.Errorf("-o github: exit %d, want 1 and\n%s\ngot:\n%s%s", code, want, gh, stderr)
	}

	code, sarif, stderr := rvIn(t, dir, append(args, "-o", "sarif")...)
	if code != 1 {
		t.Errorf("-o sarif: exit %d, want 1\n%s", code, stderr)
	}
	validateSARIF(t, dir, sarif)
	if got := sarifResultLine(t, sarif, "owners/drift", "live.yaml"); got != n {
		t.Errorf("-o sarif: the drift is at live.yaml line %d, want %d\n%s", got, n, sarif)
	}

	code, junit, stderr := rvIn(t, dir, append(args, "-o", "junit")...)
	if code != 1 || !junitHasFailure(t, junit, "owners/drift", fmt.Sprintf("live.yaml:%d:3: error: .spec.replicas is owned by hpa-controller", n)) {
		t.Errorf("-o junit: exit %d, want 1 and the drift failure at live.yaml:%d:3\n%s%s", code, n, junit, stderr)
	}

	code, js, stderr := rvIn(t, dir, append(args, "-o", "json")...)
	var rep struct {
		Items []struct {
			Drift struct {
				Fields []struct {
					Path         string
					Line, Column int
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != 1 || len(rep.Items) != 1 {
		t.Fatalf("-o json: exit %d, %v\n%s%s", code, err, js, stderr)
	}
	found := false
	for _, f := range rep.Items[0].Drift.Fields {
		found = found || f.Path == ".spec.replicas" && f.Line == n && f.Column == 3
	}
	if !found {
		t.Errorf("-o json: no drift field .spec.replicas at line %d, column 3\n%s", n, js)
	}
}
