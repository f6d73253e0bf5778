package predict

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// dryRunAll is the dryRun value that makes the server run every stage of a
// write (admission, validation, field management) without persisting it.
var dryRunAll = []string{metav1.DryRunAll}

// Server returns an executor that sends every write to the API server as a
// server-side dry run (dryRun=All) through ri, the resource client of the
// object's kind and namespace. Nothing is persisted; admission webhooks
// still see the requests (with dryRun set).
func Server(ri dynamic.ResourceInterface, name string) Executor {
	return &serverExecutor{ri: ri, name: name}
}

type serverExecutor struct {
	ri   dynamic.ResourceInterface
	name string
}

var _ Executor = (*serverExecutor)(nil)

func (e *serverExecutor) Engine() string { return "server" }

func (e *serverExecutor) Live(ctx context.Context) (*unstructured.Unstructured, error) {
	return e.ri.Get(ctx, e.name, metav1.GetOptions{})
}

func (e *serverExecutor) Update(ctx context.Context, obj *unstructured.Unstructured, w Write) (*unstructured.Unstructured, error) {
	return e.ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: dryRunAll, FieldManager: w.Manager, FieldValidation: w.FieldValidation})
}

func (e *serverExecutor) Patch(ctx context.Context, pt types.PatchType, data []byte, w Write) (*unstructured.Unstructured, error) {
	opts := metav1.PatchOptions{DryRun: dryRunAll, FieldManager: w.Manager, FieldValidation: w.FieldValidation}
	if pt == types.ApplyPatchType {
		opts.Force = &w.Force
	}
	return e.ri.Patch(ctx, e.name, pt, data, opts)
}

func (e *serverExecutor) Create(ctx context.Context, obj *unstructured.Unstructured, w Write) (*unstructured.Unstructured, error) {
	return e.ri.Create(ctx, obj, metav1.CreateOptions{DryRun: dryRunAll, FieldManager: w.Manager, FieldValidation: w.FieldValidation})
}
