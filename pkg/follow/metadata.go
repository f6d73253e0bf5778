package follow

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
)

// RawFieldsKey holds, in the objects a metadata Source returns, a
// managedFields entry's fieldsV1 as its raw JSON string: churn's Tracker
// fingerprints it, and decodes it only when it must.
const RawFieldsKey = "fieldsV1Raw"

// NewMetadataSource returns a Source over the metadata client: the server
// sends PartialObjectMetadata, which the Source turns into unstructured
// objects holding only the metadata churn reads (name,
// namespace, uid, resourceVersion, generation, managedFields, with each
// entry's field set as a raw JSON string under fieldsV1Raw).
func NewMetadataSource(client metadata.Interface) Source {
	return metadataSource{client: client}
}

type metadataSource struct{ client metadata.Interface }

var _ Source = metadataSource{}

func (m metadataSource) resource(t Target) metadata.ResourceInterface {
	r := m.client.Resource(t.Resource)
	if t.Namespace != "" {
		return r.Namespace(t.Namespace)
	}
	return r
}

func (m metadataSource) List(ctx context.Context, t Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := m.resource(t).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &unstructured.UnstructuredList{Object: map[string]any{}, Items: make([]unstructured.Unstructured, len(l.Items))}
	out.SetResourceVersion(l.ResourceVersion)
	out.SetContinue(l.Continue)
	for i := range l.Items {
		out.Items[i] = unstructured.Unstructured{Object: MetadataObject(&l.Items[i])}
	}
	return out, nil
}

func (m metadataSource) Watch(ctx context.Context, t Target, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := m.resource(t).Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if p, ok := ev.Object.(*metav1.PartialObjectMetadata); ok {
			ev.Object = &unstructured.Unstructured{Object: MetadataObject(p)}
		}
		return ev, true
	}), nil
}

// MetadataObject returns the unstructured form a metadata Source gives p:
// the metadata it keeps, each entry's field set raw under RawFieldsKey.
func MetadataObject(p *metav1.PartialObjectMetadata) map[string]any {
	md := map[string]any{"name": p.Name, "resourceVersion": p.ResourceVersion, "uid": string(p.UID)}
	if p.Namespace != "" {
		md["namespace"] = p.Namespace
	}
	if p.Generation != 0 {
		md["generation"] = p.Generation
	}
	if len(p.ManagedFields) > 0 {
		mf := make([]any, len(p.ManagedFields))
		for i, e := range p.ManagedFields {
			m := map[string]any{"manager": e.Manager, "operation": string(e.Operation), "apiVersion": e.APIVersion}
			if e.Subresource != "" {
				m["subresource"] = e.Subresource
			}
			if e.Time != nil {
				m["time"] = e.Time.Unix()
			}
			if e.FieldsV1 != nil {
				m[RawFieldsKey] = string(e.FieldsV1.Raw)
			}
			mf[i] = m
		}
		md["managedFields"] = mf
	}
	return map[string]any{"apiVersion": p.APIVersion, "kind": p.Kind, "metadata": md}
}
