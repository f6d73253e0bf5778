package objects

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// Selection says which objects a command works on.
type Selection struct {
	// Args are kubectl's TYPE NAME, TYPE/NAME and TYPE[,TYPE...] arguments.
	Args []string
	// Filenames are -f values; when set, the objects are read offline.
	Filenames     []string
	Recursive     bool
	LabelSelector string
	FieldSelector string
	AllNamespaces bool
	// ChunkSize is the page size of list calls (kubectl's --chunk-size).
	ChunkSize int64
}

// Offline reports whether objects come from files.
func (s Selection) Offline() bool { return len(s.Filenames) > 0 }

// Load returns the selected objects: from files when -f was given (no cluster
// needed), else from the cluster through getter in namespace (ignored with
// -A). Errors in the files are usage errors (exit 2); the cluster's errors
// come back as the client returned them, for exitcode.Classify.
func (s Selection) Load(ctx context.Context, getter resource.RESTClientGetter, namespace string, stdin io.Reader) ([]Object, error) {
	if s.Offline() {
		objs, err := Read(ctx, s.Filenames, s.Recursive, stdin)
		return objs, exitcode.Usage(WithFlag("-f", err))
	}
	var out []Object
	err := s.Visit(ctx, getter, namespace, func(u *unstructured.Unstructured, m *meta.RESTMapping) error {
		out = append(out, Object{Object: u, Source: Source{Item: -1}})
		return nil
	})
	return out, err
}

// Visit calls fn for every selected object in the cluster, page by page, so
// that a caller can process objects as a stream.
func (s Selection) Visit(ctx context.Context, getter resource.RESTClientGetter, namespace string, fn func(*unstructured.Unstructured, *meta.RESTMapping) error) error {
	if namespace == "" {
		namespace = "default"
	}
	r := resource.NewBuilder(getter).
		Unstructured().
		NamespaceParam(namespace).DefaultNamespace().AllNamespaces(s.AllNamespaces).
		LabelSelectorParam(s.LabelSelector).
		FieldSelectorParam(s.FieldSelector).
		RequestChunksOf(s.ChunkSize).
		ResourceTypeOrNameArgs(true, s.Args...).
		ContinueOnError().
		Flatten().
		Do()
	if err := r.Err(); err != nil {
		return err
	}
	return r.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("%s %s: unexpected object type %T", info.Mapping.Resource.Resource, info.Name, info.Object)
		}
		return fn(u, info.Mapping)
	})
}
