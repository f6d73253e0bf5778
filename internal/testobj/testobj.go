// Package testobj builds objects from YAML for tests, through the same
// decoder kubectl-rv uses for -f input (pkg/objects), so test fixtures are
// read exactly like users' manifests. It is for tests only.
package testobj

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
)

// FromYAML decodes one object from y and fails the test unless y holds
// exactly one.
func FromYAML(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	objs, err := objects.Decode("fixture.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("fixture holds %d objects, want 1", len(objs))
	}
	return objs[0].Object
}
