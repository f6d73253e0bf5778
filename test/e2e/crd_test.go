//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
	crdrules "github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
)

// installCRD applies a CRD manifest, deletes it when the test ends
// (deleteCRD) and waits until the API server serves it. It returns the
// type converter of its schema and the offline engine given the CRD as
// predict --schema gives it (the server's rules of built-in kinds, the
// CRD's structural schema, defaults and validation).
func installCRD(t *testing.T, manifest string) (managedfields.TypeConverter, *predict.Offline) {
	t.Helper()
	var crd struct {
		Metadata struct{ Name string }
	}
	if err := yaml.Unmarshal([]byte(manifest), &crd); err != nil || crd.Metadata.Name == "" {
		t.Fatalf("the test's CRD manifest has no name (%v):\n%s", err, manifest)
	}
	cluster.KubectlStdin(t, manifest, "apply", "-f", "-")
	t.Cleanup(func() { deleteCRD(t, crd.Metadata.Name) })
	cluster.MustKubectl(t, "wait", "--for=condition=Established", "crd/"+crd.Metadata.Name, "--timeout=60s")
	tc, err := managedfields.ParseSchema([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	off := predict.NewOffline(tc)
	if off.Rules, err = crdrules.WithSchema([]byte(manifest)); err != nil {
		t.Fatal(err)
	}
	return tc, off
}

// crdManifest is the CRD of a namespaced custom kind in group (plural and
// singular its lower-case name, plus s), with one version, v1, served and
// stored, whose other fields (schema, subresources) are versionFields:
// YAML as at the top level, indented here under the version.
func crdManifest(group, kind, versionFields string) string {
	lower := strings.ToLower(kind)
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: %[1]ss.%[2]s}
spec:
  group: %[2]s
  names: {kind: %[3]s, plural: %[1]ss, singular: %[1]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
`, lower, group, kind)
	for _, l := range strings.Split(strings.TrimSuffix(versionFields, "\n"), "\n") {
		if l != "" {
			b.WriteString("    ")
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
