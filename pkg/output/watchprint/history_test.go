package watchprint

import (
	"bytes"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/pkg/diff"
	"github.com/kubectl-rv/kubectl-rv/pkg/inspect"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// TestHistoryPrinters renders every view of a recording's history, as
// table and as JSON, into one golden file.
func TestHistoryPrinters(t *testing.T) {
	list := inspect.HistoryList{Objects: []inspect.HistorySummary{
		{Ref: "configmaps/ns/c", ResourceVersions: []string{"10", "12", "20"}},
		{Ref: "configmaps/ns/evil\x1b]0;pwned\x07", ResourceVersions: []string{"11", "25"}, Deleted: true},
	}}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "ns", "resourceVersion": "12"}, "data": map[string]any{"k": "b"}}}
	at := inspect.VersionAt{Ref: "configmaps/ns/c", Version: inspect.Version{ResourceVersion: "12", Type: follow.Modified, Object: obj}}
	deleted := inspect.VersionAt{Ref: "configmaps/ns/d", Version: inspect.Version{ResourceVersion: "25", Type: follow.Deleted, Object: obj}}
	changes := diff.Objects(map[string]any{"data": map[string]any{"k": "a", "n": "1"}}, map[string]any{"data": map[string]any{"k": "c"}})
	vd := inspect.VersionDiff{Ref: "configmaps/ns/c", From: "10", To: "20", Changes: changes}
	same := inspect.VersionDiff{Ref: "configmaps/ns/c", From: "12", To: "12", Changes: []diff.Change{}}

	var out, errOut bytes.Buffer
	for _, f := range []output.Format{output.Table, output.JSON} {
		p := &output.Printer{Format: f, Out: &out}
		for _, err := range []error{
			PrintHistoryList(p, &errOut, list),
			PrintHistoryList(p, &errOut, inspect.HistoryList{Objects: []inspect.HistorySummary{}}),
			PrintVersionAt(p, at),
			PrintVersionAt(p, deleted),
			PrintVersionDiff(p, &errOut, vd),
			PrintVersionDiff(p, &errOut, same),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	out.WriteString("--- stderr\n")
	out.Write(errOut.Bytes())
	golden.Assert(t, "history.txt", out.Bytes())
	if bytes.Contains(out.Bytes(), []byte("\x1b]0;pwned")) {
		t.Errorf("a recorded string reached the terminal unescaped")
	}
}
