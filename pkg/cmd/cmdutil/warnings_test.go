package cmdutil

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
)

// TestWarningsOfUnnamedTypesAreSummarised lists three types from a server
// that warns about two of them, as kube-apiserver warns about v1 Endpoints
// on every list: warnings pass as the server sent them unless the command
// covers types the user did not name, whose warnings become one line, once
// however often the command flushes; a command that takes no types
// (drop) cannot advise naming one and prints none of them.
func TestWarningsOfUnnamedTypesAreSummarised(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/endpoints":
			w.Header().Add("Warning", `299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"`)
		case "/api/v1/namespaces/default/componentstatuses":
			w.Header().Add("Warning", `299 - "v1 ComponentStatus is deprecated in v1.19+"`)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"kind":"SomeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	}))
	defer srv.Close()
	endpoints := schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}
	componentStatuses := schema.GroupVersionResource{Version: "v1", Resource: "componentstatuses"}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	const endpointsWarning = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"
	const componentStatusesWarning = "Warning: v1 ComponentStatus is deprecated in v1.19+\n"
	for _, tc := range []struct {
		name  string
		named []schema.GroupResource // nil: the command did not ask
		ask   bool
		drop  bool
		want  string
	}{
		{"a command that does not ask passes every warning", nil, false, false, endpointsWarning + componentStatusesWarning},
		{"no type named: one line", nil, true, false,
			"Warning: 2 deprecation warnings for types you did not name (componentstatuses, endpoints): name a type to see its warnings\n"},
		{"endpoints named: its warning as sent, the other summarised", []schema.GroupResource{endpoints.GroupResource()}, true, false,
			endpointsWarning + "Warning: 1 deprecation warning for types you did not name (componentstatuses): name a type to see its warnings\n"},
		{"a command without types: its own type's warning, the others dropped", []schema.GroupResource{endpoints.GroupResource()}, true, true,
			endpointsWarning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := srv.URL
			flags := genericclioptions.NewConfigFlags(false)
			flags.APIServer = &server
			f := NewFactory(flags)
			if tc.ask {
				f.warnings.onlyFor(tc.named, tc.drop)
			}
			var errOut bytes.Buffer
			cfg, err := f.RESTConfig(0, 0)
			if err != nil {
				t.Fatal(err)
			}
			cfg.WarningHandler = NewWarningHandler(&errOut)
			client, err := dynamic.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				for range 2 {
					for _, r := range []dynamic.ResourceInterface{client.Resource(endpoints), client.Resource(componentStatuses).Namespace("default"), client.Resource(deployments)} {
						if _, err := r.List(context.Background(), metav1.ListOptions{}); err != nil {
							t.Fatal(err)
						}
					}
				}
				f.warnings.flush(&errOut)
			}
			if diff := cmp.Diff(tc.want, errOut.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupResourceOf(t *testing.T) {
	for _, tc := range []struct {
		path string
		want schema.GroupResource
		ok   bool
	}{
		{"/api/v1/endpoints", schema.GroupResource{Resource: "endpoints"}, true},
		{"/api/v1/namespaces/ns/endpoints/web", schema.GroupResource{Resource: "endpoints"}, true},
		{"/apis/apps/v1/namespaces/ns/deployments/web/scale", schema.GroupResource{Group: "apps", Resource: "deployments"}, true},
		{"/apis/apps/v1/deployments", schema.GroupResource{Group: "apps", Resource: "deployments"}, true},
		{"/api/v1/namespaces", schema.GroupResource{Resource: "namespaces"}, true},
		{"/api/v1/namespaces/ns", schema.GroupResource{Resource: "namespaces"}, true},
		{"/api/v1/namespaces/ns/finalize", schema.GroupResource{Resource: "namespaces"}, true},
		{"/apis/apps/v1", schema.GroupResource{}, false},
		{"/api/v1", schema.GroupResource{}, false},
		{"/version", schema.GroupResource{}, false},
	} {
		got, ok := groupResourceOf(tc.path)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %v %v, want %v %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}
