package apitypes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubetesting "k8s.io/client-go/testing"
)

func TestListableKeepsListableWatchableTypes(t *testing.T) {
	d := &fakediscovery.FakeDiscovery{Fake: &kubetesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: []string{"list", "watch", "get"}},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
			{Name: "nodes", Kind: "Node", Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: []string{"list", "watch"}},
			{Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true, Verbs: []string{"list"}},
		}},
	}}}
	names := func(ts []Type) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name())
		}
		return out
	}
	got, err := Listable(d, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"pods", "deployments.apps"}, names(got.Types)); diff != "" {
		t.Errorf("namespaced types (-want +got):\n%s", diff)
	}
	got, err = Listable(d, true)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"nodes", "pods", "deployments.apps"}, names(got.Types)); diff != "" {
		t.Errorf("all types (-want +got):\n%s", diff)
	}
	if got.Types[0].Namespaced || !got.Types[1].Namespaced || got.Types[2].Resource != (schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}) {
		t.Errorf("types = %+v", got.Types)
	}
}

func TestCollectionPath(t *testing.T) {
	for _, tc := range []struct {
		t    Type
		ns   string
		want string
	}{
		{Type{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}, "web", "/api/v1/namespaces/web/pods"},
		{Type{Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}, "", "/api/v1/pods"},
		{Type{Resource: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}, "a", "/apis/apps/v1/namespaces/a/deployments"},
		{Type{Resource: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}}, "a", "/api/v1/nodes"},
	} {
		if got := CollectionPath(tc.t, tc.ns); got != tc.want {
			t.Errorf("CollectionPath(%v, %q) = %q, want %q", tc.t, tc.ns, got, tc.want)
		}
	}
}
