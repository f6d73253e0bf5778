package serverrules

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// deployType is the Deployment's registry rules with these rules.
func deployType() *writepath.Type {
	for _, t := range writepath.BuiltinTypes(Rules{}) {
		if t.GVK.Kind == "Deployment" {
			return &t
		}
	}
	panic("no Deployment")
}

// portsDeployment is a valid Deployment at resourceVersion 11 whose
// container c0 has ports.
func portsDeployment(ports ...any) *writepath.Stored {
	s := &writepath.Stored{Object: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "uid": "u-1", "generation": int64(2),
			"creationTimestamp": "2026-01-01T00:00:00Z", "resourceVersion": "11"},
	}}, ResourceVersion: "11"}
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
	cur := portsDeployment(map[string]any{"containerPort": int64(8080), "protocol": "UDP"})
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"c0","ports":[{"containerPort":53,"name":"dns","protocol":null}]}]}}}}`
	out, err := (&writepath.Writer{}).Patch(&tp, cur, "default", "web", types.StrategicMergePatchType, []byte(patch), writepath.Options{})
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
