package cmdutil

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// rejectOwnDocuments refuses kubectl rv's own documents (a simulate
// Scenario, a saved report) where Kubernetes objects are read: found in a
// directory given to -f, they would otherwise be judged as objects ("no
// metadata.managedFields") and the message would not say what the file is.
func RejectOwnDocuments(flag string, objs []objects.Object) error {
	for _, ob := range objs {
		if ob.Object.GetAPIVersion() != output.APIVersion {
			continue
		}
		kind := text.Escape(ob.Object.GetKind())
		if kind == "Scenario" {
			return exitcode.Usagef("%s%s: a kubectl rv Scenario, not a Kubernetes object: run it with kubectl rv simulate run %s", flag, ob.Source, text.Escape(ob.Source.File))
		}
		return exitcode.Usagef("%s%s: a kubectl rv %s, not a Kubernetes object: give the objects themselves (kubectl get -o yaml --show-managed-fields)", flag, ob.Source, kind)
	}
	return nil
}
