package serverrules

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var (
	serviceGVK    = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
)

func fromYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const validDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "app:1"}]
`

// TestServerValidationOfDeployments: the API server's own validation
// refuses what the corpus found offline engines accepting.
func TestServerValidationOfDeployments(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"valid", "", "", ""},
		{"no containers", "containers: [{name: app, image: \"app:1\"}]", "containers: []", "spec.template.spec.containers: Required value"},
		{"selector does not match", "metadata: {labels: {app: web}}", "metadata: {labels: {app: api}}", "`selector` does not match template `labels`"},
		{"volume mount of no volume", "image: \"app:1\"}", "image: \"app:1\", volumeMounts: [{name: data, mountPath: /data}]}", "volumeMounts[0].name: Not found: \"data\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := fromYAML(t, strings.Replace(validDeployment, tt.from, tt.to, 1))
			BuiltinDefaults(deploymentGVK, obj)
			got := BuiltinValidate(deploymentGVK, obj, nil, "")
			if (got == nil) != (tt.want == "") || (got != nil && !strings.Contains(got.Error(), tt.want)) {
				t.Errorf("errors %v, want %q", got, tt.want)
			}
		})
	}
}

// TestServerDefaultsOfDeployments: the defaults come from the server's
// defaulting functions, down to the pod template's containers.
func TestServerDefaultsOfDeployments(t *testing.T) {
	obj := fromYAML(t, validDeployment)
	BuiltinDefaults(deploymentGVK, obj)
	for path, want := range map[string]any{
		"spec.replicas":                    int64(1),
		"spec.progressDeadlineSeconds":     int64(600),
		"spec.strategy.type":               "RollingUpdate",
		"spec.template.spec.dnsPolicy":     "ClusterFirst",
		"spec.template.spec.restartPolicy": "Always",
	} {
		got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "creationTimestamp"); found {
		t.Error("a null creationTimestamp was left in the object")
	}
}

const clientIPService = `
apiVersion: v1
kind: Service
metadata: {name: dns, namespace: ns, resourceVersion: "5"}
spec:
  selector: {app: dns}
  clusterIP: 10.0.0.53
  clusterIPs: [10.0.0.53]
  sessionAffinity: ClientIP
  ports: [{name: a, port: 53, protocol: UDP}]
`

// TestServerServiceRules: the Service's defaults (affinity, target port)
// and validation, with the storage's allocated values taken from the
// stored Service on update.
func TestServerServiceRules(t *testing.T) {
	old := fromYAML(t, clientIPService)
	BuiltinDefaults(serviceGVK, old)
	if v, _, _ := unstructured.NestedInt64(old.Object, "spec", "sessionAffinityConfig", "clientIP", "timeoutSeconds"); v != 10800 {
		t.Errorf("ClientIP affinity timeout %d, want the default 10800", v)
	}
	if v, _, _ := unstructured.NestedSlice(old.Object, "spec", "ports"); v[0].(map[string]any)["targetPort"] != int64(53) {
		t.Errorf("targetPort not defaulted to the port: %v", v)
	}
	if errs := BuiltinValidate(serviceGVK, old, nil, ""); errs != nil {
		t.Fatalf("a valid Service: %v", errs)
	}

	// An update from a manifest: no clusterIP, affinity None.
	upd := fromYAML(t, strings.Replace(strings.Replace(clientIPService, "sessionAffinity: ClientIP", "sessionAffinity: None", 1),
		"  clusterIP: 10.0.0.53\n  clusterIPs: [10.0.0.53]\n", "", 1))
	BuiltinDefaults(serviceGVK, upd)
	if _, found, _ := unstructured.NestedFieldNoCopy(upd.Object, "spec", "sessionAffinityConfig"); found {
		t.Error("affinity None kept sessionAffinityConfig")
	}
	if errs := BuiltinValidate(serviceGVK, upd, old, ""); errs != nil {
		t.Errorf("an update without the allocated clusterIP: %v", errs)
	}

	// Two ports need names.
	two := fromYAML(t, strings.Replace(clientIPService, "ports: [{name: a, port: 53, protocol: UDP}]", "ports: [{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]", 1))
	BuiltinDefaults(serviceGVK, two)
	if errs := BuiltinValidate(serviceGVK, two, old, ""); errs == nil || !strings.Contains(errs.Error(), "spec.ports[0].name: Required value") {
		t.Errorf("unnamed ports: %v", errs)
	}
}

// TestServerServiceTypeChange: NodePort to ClusterIP with the allocated
// node port unchanged is valid (the strategy wipes it); a create needs no
// address (the allocator's).
func TestServerServiceTypeChange(t *testing.T) {
	old := fromYAML(t, strings.Replace(clientIPService, "ports: [{name: a, port: 53, protocol: UDP}]",
		"type: NodePort\n  ports: [{name: a, port: 53, protocol: UDP, nodePort: 30053}]", 1))
	BuiltinDefaults(serviceGVK, old)
	if errs := BuiltinValidate(serviceGVK, old, nil, ""); errs != nil {
		t.Fatalf("a NodePort Service: %v", errs)
	}
	upd := old.DeepCopy()
	_ = unstructured.SetNestedField(upd.Object, "ClusterIP", "spec", "type")
	BuiltinDefaults(serviceGVK, upd)
	if errs := BuiltinValidate(serviceGVK, upd, old, ""); errs != nil {
		t.Errorf("NodePort to ClusterIP: %v", errs)
	}
	fresh := fromYAML(t, strings.Replace(clientIPService, "  clusterIP: 10.0.0.53\n  clusterIPs: [10.0.0.53]\n", "", 1))
	BuiltinDefaults(serviceGVK, fresh)
	if errs := BuiltinValidate(serviceGVK, fresh, nil, ""); errs != nil {
		t.Errorf("a create: %v", errs)
	}
}

// TestServerServiceDuplicateNodePort: two ports asking for one node port
// on one protocol are the allocator's 500, before validation.
func TestServerServiceDuplicateNodePort(t *testing.T) {
	svc := fromYAML(t, strings.Replace(clientIPService, "ports: [{name: a, port: 53, protocol: UDP}]",
		"type: NodePort\n  ports: [{name: a, port: 53, protocol: UDP, nodePort: 30053}, {name: b, port: 54, protocol: UDP, nodePort: 30053}]", 1))
	BuiltinDefaults(serviceGVK, svc)
	err := BuiltinValidate(serviceGVK, svc, svc, "")
	if code := apierrors.ReasonForError(err); err == nil || !strings.Contains(err.Error(), "duplicate nodePort: {UDP 30053}") || code != metav1.StatusReasonUnknown {
		t.Errorf("got %v (%s), want the allocator's 500", err, code)
	}
}

// TestBuiltinDefaultsConverts: a request goes through the internal type
// and back, as on the server, so the conversions' rewrites are in the
// stored object: a Secret's stringData merged into data (and gone), a pod
// template's serviceAccount reconciled with serviceAccountName (which
// wins), and a DaemonSet keeping its template generation annotation as
// the request had it (its strategy writes it).
func TestBuiltinDefaultsConverts(t *testing.T) {
	secret := fromYAML(t, `
apiVersion: v1
kind: Secret
metadata: {name: s, namespace: ns}
data: {a: YQ==, b: Yg==}
stringData: {b: two, c: three}
`)
	BuiltinDefaults(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, secret)
	data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
	if _, has := secret.Object["stringData"]; has || data["a"] != "YQ==" || data["b"] != "dHdv" || data["c"] != "dGhyZWU=" {
		t.Errorf("the Secret is %v, want stringData merged into data", secret.Object)
	}
	if secret.GetAPIVersion() != "v1" || secret.GetKind() != "Secret" {
		t.Errorf("the Secret lost its type: %q %q", secret.GetAPIVersion(), secret.GetKind())
	}
	for _, tc := range []struct{ sa, san, want string }{
		{"old", "", "old"},
		{"old", "new", "new"},
		{"", "new", "new"},
	} {
		d := fromYAML(t, validDeployment)
		spec := map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}
		if tc.sa != "" {
			spec["serviceAccount"] = tc.sa
		}
		if tc.san != "" {
			spec["serviceAccountName"] = tc.san
		}
		_ = unstructured.SetNestedMap(d.Object, spec, "spec", "template", "spec")
		BuiltinDefaults(deploymentGVK, d)
		sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccount")
		san, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
		if sa != tc.want || san != tc.want {
			t.Errorf("serviceAccount %q, serviceAccountName %q: stored %q and %q, want both %q", tc.sa, tc.san, sa, san, tc.want)
		}
	}
	dsGVK := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}
	for _, ann := range []string{"", "3"} {
		ds := fromYAML(t, strings.Replace(validDeployment, "kind: Deployment", "kind: DaemonSet", 1))
		if ann != "" {
			ds.SetAnnotations(map[string]string{"deprecated.daemonset.template.generation": ann})
		}
		BuiltinDefaults(dsGVK, ds)
		if got := ds.GetAnnotations()["deprecated.daemonset.template.generation"]; got != ann {
			t.Errorf("a DaemonSet with template generation %q stored %q", ann, got)
		}
	}
}
