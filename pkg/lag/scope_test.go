package lag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestDiscoverScope(t *testing.T) {
	lw := []string{"get", "list", "watch"}
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: lw},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "patch"}},
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: lw},
			{Name: "replicationcontrollers", Kind: "ReplicationController", Namespaced: true, Verbs: lw},
			{Name: "namespaces", Kind: "Namespace", Verbs: lw},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: lw},
			{Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true, Verbs: lw},
		}},
		{GroupVersion: "policy/v1", APIResources: []metav1.APIResource{
			{Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true, Verbs: lw},
		}},
		{GroupVersion: "apiextensions.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "customresourcedefinitions", Kind: "CustomResourceDefinition", Verbs: lw},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: lw},
			{Name: "clusterwidgets", Kind: "ClusterWidget", Verbs: lw},
			{Name: "listonly", Kind: "ListOnly", Namespaced: true, Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "metrics.k8s.io/v1beta1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "PodMetrics", Namespaced: true, Verbs: []string{"get", "list"}},
		}},
	}}}
	names := func(ts []Target) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Name())
		}
		return out
	}
	got, _, err := Discover(d, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pods", "replicationcontrollers", "deployments.apps", "widgets.example.com", "poddisruptionbudgets.policy"}
	if diff := cmp.Diff(want, names(got)); diff != "" {
		t.Errorf("namespaced scope (-want +got)\n%s", diff)
	}
	got, _, err = Discover(d, true)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"pods", "replicationcontrollers", "deployments.apps", "clusterwidgets.example.com", "widgets.example.com", "poddisruptionbudgets.policy"}
	if diff := cmp.Diff(want, names(got)); diff != "" {
		t.Errorf("cluster scope (-want +got)\n%s", diff)
	}
	for _, tg := range got {
		wantExpected := tg.Resource.Resource == "deployments" || tg.Resource.Resource == "replicationcontrollers" || tg.Resource.Resource == "poddisruptionbudgets"
		if tg.Expected != wantExpected {
			t.Errorf("%s: Expected = %v", tg.Name(), tg.Expected)
		}
		if tg.Builtin != (tg.Resource.Group != "example.com") {
			t.Errorf("%s: Builtin = %v", tg.Name(), tg.Builtin)
		}
	}
}
