package follow

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// Target is one resource to watch.
type Target struct {
	Resource schema.GroupVersionResource
	// Namespace limits a namespaced resource to one namespace; "" means all
	// namespaces (and is required for cluster-scoped resources).
	Namespace string
	// Names, when set, limits the watch to these objects.
	Names []string
}

// ResourceKey returns the target's resource as group/version/resource, the
// form recordings use.
func (t Target) ResourceKey() string { return ResourceKey(t.Resource) }

// ResourceKey returns group/version/resource ("v1/pods" in the core group).
func ResourceKey(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Version + "/" + gvr.Resource
	}
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}

// String describes the target for people: "deployments.apps/web -n shop".
func (t Target) String() string {
	s := t.Resource.Resource
	if t.Resource.Group != "" {
		s += "." + t.Resource.Group
	}
	if len(t.Names) > 0 {
		s += "/" + strings.Join(t.Names, ",")
	}
	if t.Namespace != "" {
		s += " -n " + t.Namespace
	}
	return s
}

// Watcher watches the objects of one target: all that Follow needs of the
// API server, since its Handler lists.
type Watcher interface {
	// Watch watches the target's objects from opts.ResourceVersion.
	Watch(ctx context.Context, t Target, opts metav1.ListOptions) (watch.Interface, error)
}

// Source lists and watches the objects of one target: the seam between the
// engines and the API server. NewDynamicSource implements it over a
// dynamic client (full objects), NewMetadataSource over the metadata client
// (metadata only); unit tests implement it with scripted answers.
type Source interface {
	Watcher
	// List returns one page of the target's objects.
	List(ctx context.Context, t Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
}

// NewDynamicSource returns a Source over a dynamic client.
func NewDynamicSource(client dynamic.Interface) Source { return dynamicSource{client: client} }

type dynamicSource struct{ client dynamic.Interface }

var _ Source = dynamicSource{}

func (d dynamicSource) resource(t Target) dynamic.ResourceInterface {
	r := d.client.Resource(t.Resource)
	if t.Namespace != "" {
		return r.Namespace(t.Namespace)
	}
	return r
}

func (d dynamicSource) List(ctx context.Context, t Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return d.resource(t).List(ctx, opts)
}

func (d dynamicSource) Watch(ctx context.Context, t Target, opts metav1.ListOptions) (watch.Interface, error) {
	return d.resource(t).Watch(ctx, opts)
}
