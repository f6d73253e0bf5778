package cmdutil

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

var (
	deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	cmGVK     = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	nodeGVK   = schema.GroupVersionKind{Version: "v1", Kind: "Node"}
)

func testMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}})
	m.Add(deployGVK, meta.RESTScopeNamespace)
	m.Add(cmGVK, meta.RESTScopeNamespace)
	m.Add(nodeGVK, meta.RESTScopeRoot)
	return m
}

func TestResolveType(t *testing.T) {
	for _, typ := range []string{"deployments", "deployment", "Deployment", "deployments.apps", "deployments.v1.apps", "Deployment.apps"} {
		m, err := ResolveType(testMapper(), typ)
		if err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if m.GroupVersionKind != deployGVK || m.Resource.Resource != "deployments" || m.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Errorf("%s: mapping %v %v %v", typ, m.GroupVersionKind, m.Resource, m.Scope.Name())
		}
	}
	if m, err := ResolveType(testMapper(), "nodes"); err != nil || m.Scope.Name() != meta.RESTScopeNameRoot {
		t.Errorf("nodes: %v, %v", m, err)
	}
	for _, typ := range []string{"nosuchthings", "deployments.extensions", "deploy,configmaps"} {
		_, err := ResolveType(testMapper(), typ)
		want := `unknown resource type "` + typ + `": list the served types with kubectl api-resources`
		if err == nil || err.Error() != want || exitcode.Classify(err) != exitcode.CodeUsage {
			t.Errorf("%s: error %v (exit %d), want a usage error %q", typ, err, exitcode.Classify(err), want)
		}
	}
}

// unreachableMapper fails as a mapper over an unreachable cluster does.
type unreachableMapper struct{ meta.RESTMapper }

func (unreachableMapper) KindFor(schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, &url.Error{Op: "Get", URL: "https://127.0.0.1:1/api", Err: errors.New("connection refused")}
}

func (unreachableMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, &url.Error{Op: "Get", URL: "https://127.0.0.1:1/api", Err: errors.New("connection refused")}
}

func TestResolveTypeUnreachable(t *testing.T) {
	_, err := ResolveType(unreachableMapper{}, "deployments")
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %v (exit %d), want the cluster's error", err, exitcode.Classify(err))
	}
}

func TestResolveTypeNameArgs(t *testing.T) {
	type got struct {
		Resource string
		Names    []string
	}
	tests := []struct {
		name    string
		args    []string
		want    []got
		wantErr string
	}{
		{"types", []string{"deploy,cm"}, nil, `unknown resource type "deploy"`},
		{"types and names", []string{"deployments,configmaps", "a", "b"}, []got{{"deployments", []string{"a", "b"}}, {"configmaps", []string{"a", "b"}}}, ""},
		{"type/name merged", []string{"deployment/a", "deployments.apps/b", "configmap/a", "deployment/a"}, []got{{"deployments", []string{"a", "b"}}, {"configmaps", []string{"a"}}}, ""},
		{"every object wins", []string{"deployments,deployment", "a"}, []got{{"deployments", []string{"a"}}}, ""},
		{"every object absorbs names", []string{"deployments,configmaps,Deployment"}, []got{{"deployments", nil}, {"configmaps", nil}}, ""},
		{"mixed forms", []string{"deployment/a", "b"}, nil, `argument "b": when one argument is TYPE/NAME, all must be`},
		{"empty type", []string{"deployments,", "a"}, nil, `argument "deployments,": empty resource type`},
		{"namespace in the name", []string{"deployment/shop/a"}, nil, `argument "deployment/shop/a": give TYPE/NAME and the namespace with -n shop`},
		{"empty name", []string{"deployment/a", "deployment/"}, nil, `argument "deployment/" is not TYPE/NAME or TYPE/NAMESPACE/NAME`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := ResolveTypeNameArgs(testMapper(), tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || exitcode.Classify(err) != exitcode.CodeUsage {
					t.Fatalf("error %v, want a usage error starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var g []got
			for _, r := range rs {
				g = append(g, got{r.Mapping.Resource.Resource, r.Names})
			}
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNearTypes(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Kind: "Pod", ShortNames: []string{"po"}},
			{Name: "pods/status", Kind: "Pod"},
			{Name: "nodes", SingularName: "node", Kind: "Node", ShortNames: []string{"no"}},
			{Name: "configmaps", SingularName: "configmap", Kind: "ConfigMap", ShortNames: []string{"cm"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Kind: "Deployment", ShortNames: []string{"deploy"}},
			{Name: "statefulsets", SingularName: "statefulset", Kind: "StatefulSet", ShortNames: []string{"sts"}},
		}},
	}
	tests := []struct {
		typ  string
		want []string
	}{
		{"deploymnts", []string{"deployments.apps"}},
		{"Deploymnet", []string{"deployments.apps"}},
		{"deplyo", []string{"deployments.apps"}},
		{"stateful", []string{"statefulsets.apps"}},
		{"configmapz", []string{"configmaps"}},
		{"foo", []string{}},
		{"xyzzy", []string{}},
		{"podz", []string{"pods"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, nearTypes(tt.typ, lists)); diff != "" {
			t.Errorf("nearTypes(%q) (-want +got):\n%s", tt.typ, diff)
		}
	}
	err := &unknownTypeError{typ: "deploymnts", near: []string{"deployments.apps"}}
	if want := `unknown resource type "deploymnts": did you mean deployments.apps? (kubectl api-resources lists the served types)`; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}
