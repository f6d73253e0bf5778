//go:build e2e

package e2e

import (
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
