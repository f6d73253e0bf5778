package lag

import (
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
)

// Client is what the engine needs of the API server.
type Client interface {
	// List returns one page of a type's list as a JSON stream. namespace is
	// ignored for cluster-scoped types and "" means all namespaces.
	List(ctx context.Context, t Target, namespace string, opts metav1.ListOptions) (io.ReadCloser, error)
	// Watch watches a type.
	Watch(ctx context.Context, t Target, namespace string, opts metav1.ListOptions) (watch.Interface, error)
}

type restClient struct {
	rest rest.Interface
	dyn  dynamic.Interface
}

var _ Client = (*restClient)(nil)

// NewClient returns a Client over cfg. Lists ask for JSON and are read as a
// stream; watches go through the dynamic client.
func NewClient(cfg *rest.Config) (Client, error) {
	c := rest.CopyConfig(cfg)
	c.APIPath = "/"
	c.GroupVersion = nil
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	c.AcceptContentTypes = "application/json"
	c.ContentType = "application/json"
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("building the REST client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the dynamic client: %w", err)
	}
	return &restClient{rest: rc, dyn: dyn}, nil
}

func (c *restClient) List(ctx context.Context, t Target, namespace string, opts metav1.ListOptions) (io.ReadCloser, error) {
	req := c.rest.Get().AbsPath(listPath(t, namespace)).SpecificallyVersionedParams(&opts, scheme.ParameterCodec, metav1.Unversioned)
	return req.Stream(ctx)
}

func (c *restClient) Watch(ctx context.Context, t Target, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	r := c.dyn.Resource(t.Resource)
	if t.Namespaced && namespace != "" {
		return r.Namespace(namespace).Watch(ctx, opts)
	}
	return r.Watch(ctx, opts)
}

// listPath is the collection's URL path.
func listPath(t Target, namespace string) string {
	return apitypes.CollectionPath(apitypes.Type{Resource: t.Resource, Kind: t.Kind, Namespaced: t.Namespaced}, namespace)
}
