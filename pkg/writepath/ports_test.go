package writepath

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// portsDeployment is a valid Deployment at resourceVersion 11 whose
// container c0 has ports.
func portsDeployment(ports ...any) *Stored {
	s := stored()
	labels := map[string]any{"app": "web"}
	s.Object.Object["spec"] = map[string]any{
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec": map[string]any{
				"containers": []any{map[string]any{"name": "c0", "image": "app:1", "ports": ports}},
			},
		},
	}
	return s
}

func c0Ports(t *testing.T, obj *unstructured.Unstructured) []any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("want 1 container, got %v", cs)
	}
	ports, _ := cs[0].(map[string]any)["ports"].([]any)
	return ports
}

// TestStrategicPatchNullsAreDefaulted: a strategic merge patch made by
// kubectl from a port with a protocol to one without says
// "protocol": null, which stays in a port the patch adds. The server
// decodes the result into the Go type (null is no field) and defaults the
// protocol to TCP; so does the write path, so the port's key is
// containerPort=53,protocol=TCP and not a port with a null protocol.
func TestStrategicPatchNullsAreDefaulted(t *testing.T) {
	tp := *deployType()
	tp.Default = func(obj *unstructured.Unstructured) { BuiltinDefaults(tp.GVK, obj) }
	cur := portsDeployment(map[string]any{"containerPort": int64(8080), "protocol": "UDP"})
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"c0","ports":[{"containerPort":53,"name":"dns","protocol":null}]}]}}}}`
	out, err := (&Writer{}).Patch(&tp, cur, "default", "web", types.StrategicMergePatchType, []byte(patch), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"containerPort": int64(53), "name": "dns", "protocol": "TCP"},
		map[string]any{"containerPort": int64(8080), "protocol": "UDP"},
	}
	if diff := cmp.Diff(want, c0Ports(t, out)); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
}

// TestNullsKeptForCustomResources: a custom resource is not decoded into
// a Go type; its nulls stay.
func TestNullsKeptForCustomResources(t *testing.T) {
	custom := CustomType(deployType().GVK, "widgets", true, false)
	obj := map[string]any{"spec": map[string]any{"size": nil}}
	dropNulls(&custom, obj)
	if _, ok := obj["spec"].(map[string]any)["size"]; !ok {
		t.Error("a custom resource lost its null field")
	}
}

// TestBuiltinValidatePortNames: the same number on TCP and UDP is two
// ports, valid with two names or none, and 422 when they share a name.
func TestBuiltinValidatePortNames(t *testing.T) {
	tests := []struct {
		name    string
		ports   []any
		invalid bool
	}{
		{"two names", []any{
			map[string]any{"containerPort": int64(53), "protocol": "UDP", "name": "dns"},
			map[string]any{"containerPort": int64(53), "protocol": "TCP", "name": "dns-tcp"},
		}, false},
		{"no names", []any{
			map[string]any{"containerPort": int64(53), "protocol": "UDP"},
			map[string]any{"containerPort": int64(53), "protocol": "TCP"},
		}, false},
		{"one name twice", []any{
			map[string]any{"containerPort": int64(53), "protocol": "UDP", "name": "dns"},
			map[string]any{"containerPort": int64(53), "protocol": "TCP", "name": "dns"},
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := portsDeployment(tt.ports...).Object
			BuiltinDefaults(deployType().GVK, obj)
			err := BuiltinValidate(deployType().GVK, obj, nil, "")
			if (err != nil) != tt.invalid {
				t.Fatalf("invalid %v, got %v", tt.invalid, err)
			}
			if tt.invalid && !strings.Contains(err.Error(), `spec.template.spec.containers[0].ports[1].name: Duplicate value: "dns"`) {
				t.Errorf("error %q", err.Error())
			}
		})
	}
}
