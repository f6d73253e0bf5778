package audit

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-rv/kubectl-rv/internal/cloudexport"
)

// cloudLines are events of the shapes the cloud exports must keep apart:
// an update's 409 (a conflict), a create's 409 (already exists), an apply
// conflict's message, a success with its resulting version, a
// subresource, a Namespace's own subresource, a cluster-scoped object, a
// group other than core, a pod's service account, a 422 and a get.
func cloudLines() []string {
	const head = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete",`
	return []string{
		head + `"auditID":"a1","requestURI":"/api/v1/namespaces/shop/configmaps/inv?fieldManager=pricing","verb":"update","user":{"username":"system:serviceaccount:shop:pricing","extra":{"authentication.kubernetes.io/pod-name":["pricing-1"]}},"userAgent":"pricing/v1","objectRef":{"resource":"configmaps","namespace":"shop","name":"inv","apiVersion":"v1","resourceVersion":"533"},"responseStatus":{"metadata":{},"code":409,"reason":"Conflict","message":"Operation cannot be fulfilled on configmaps \"inv\": the object has been modified; please apply your changes to the latest version and try again","details":{"kind":"configmaps","name":"inv"}},"requestReceivedTimestamp":"2026-11-27T10:00:00.030000Z","stageTimestamp":"2026-11-27T10:00:00.032000Z"}`,
		head + `"auditID":"a2","requestURI":"/api/v1/namespaces/shop/configmaps","verb":"create","user":{"username":"ops"},"userAgent":"kubectl/v1.36.3","objectRef":{"resource":"configmaps","namespace":"shop","name":"inv","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":409,"reason":"AlreadyExists","message":"configmaps \"inv\" already exists","details":{"kind":"configmaps","name":"inv"}},"requestReceivedTimestamp":"2026-11-27T10:00:01Z","stageTimestamp":"2026-11-27T10:00:01.001Z"}`,
		head + `"auditID":"a3","requestURI":"/api/v1/namespaces/shop/configmaps/inv?fieldManager=gitops&force=false","verb":"patch","user":{"username":"rv-admin"},"impersonatedUser":{"username":"gitops-bot"},"userAgent":"kubectl/v1.36.3","objectRef":{"resource":"configmaps","namespace":"shop","name":"inv","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":409,"reason":"Conflict","message":"Apply failed with 1 conflict: conflict with \"pricing\" using v1: .data.count"},"requestReceivedTimestamp":"2026-11-27T10:00:02Z","stageTimestamp":"2026-11-27T10:00:02.002Z"}`,
		head + `"level":"RequestResponse","auditID":"a4","requestURI":"/api/v1/namespaces/shop/configmaps/inv","verb":"update","user":{"username":"system:serviceaccount:shop:pricing"},"userAgent":"pricing/v1","objectRef":{"resource":"configmaps","namespace":"shop","name":"inv","apiVersion":"v1","resourceVersion":"534"},"responseStatus":{"metadata":{},"code":200},"responseObject":{"kind":"ConfigMap","metadata":{"resourceVersion":"535"},"data":{"secret":"x"}},"requestReceivedTimestamp":"2026-11-27T10:00:03Z","stageTimestamp":"2026-11-27T10:00:03.003Z"}`,
		head + `"auditID":"a5","requestURI":"/apis/apps/v1/namespaces/shop/deployments/web/scale","verb":"update","user":{"username":"hpa"},"userAgent":"kube-controller-manager/v1.36.3","objectRef":{"resource":"deployments","namespace":"shop","name":"web","apiGroup":"apps","apiVersion":"v1","subresource":"scale"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:04Z","stageTimestamp":"2026-11-27T10:00:04.004Z"}`,
		head + `"auditID":"a6","requestURI":"/api/v1/namespaces/old/finalize","verb":"update","user":{"username":"ns-controller"},"userAgent":"kube-controller-manager/v1.36.3","objectRef":{"resource":"namespaces","name":"old","apiVersion":"v1","subresource":"finalize"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:05Z","stageTimestamp":"2026-11-27T10:00:05.005Z"}`,
		head + `"auditID":"a7","requestURI":"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kcm","verb":"update","user":{"username":"system:kube-controller-manager"},"userAgent":"kube-controller-manager/v1.36.3","objectRef":{"resource":"leases","namespace":"kube-system","name":"kcm","apiGroup":"coordination.k8s.io","apiVersion":"v1","resourceVersion":"77"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:06Z","stageTimestamp":"2026-11-27T10:00:06.006Z"}`,
		head + `"auditID":"a8","requestURI":"/api/v1/nodes/n1","verb":"patch","user":{"username":"system:node:n1"},"userAgent":"kubelet/v1.36.3","objectRef":{"resource":"nodes","name":"n1","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":422,"reason":"Invalid","message":"Node \"n1\" is invalid"},"requestReceivedTimestamp":"2026-11-27T10:00:07Z","stageTimestamp":"2026-11-27T10:00:07.007Z"}`,
		head + `"auditID":"a9","requestURI":"/api/v1/namespaces/shop/configmaps/inv","verb":"get","user":{"username":"system:serviceaccount:shop:pricing"},"userAgent":"pricing/v1","objectRef":{"resource":"configmaps","namespace":"shop","name":"inv","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-27T10:00:08Z","stageTimestamp":"2026-11-27T10:00:08.008Z"}`,
	}
}

func decodeLines(t *testing.T, lines []string) []Event {
	t.Helper()
	got, _, err := decodeString(t, strings.Join(lines, "\n")+"\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDecodeCloudExports: each cloud CLI's output gives the events of the
// same log without what that output cannot carry (cloudexport.Lacking),
// 409s kept as 409s.
func TestDecodeCloudExports(t *testing.T) {
	lines := cloudLines()
	gcloud, err := cloudexport.Gcloud(lines, false)
	if err != nil {
		t.Fatal(err)
	}
	az, err := cloudexport.Az(lines)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shape, export, host string
	}{
		{cloudexport.ShapeGcloud, string(gcloud), ""},
		{cloudexport.ShapeAz, string(az), "kube-apiserver-0"},
	} {
		lacking, err := cloudexport.Lacking(lines, tc.shape)
		if err != nil {
			t.Fatal(err)
		}
		want := decodeLines(t, lacking)
		for i := range want {
			want[i].Host = tc.host
		}
		got, _, err := decodeString(t, tc.export, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.shape, err)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" {
			t.Errorf("%s: events (-the log without what it lacks +export):\n%s", tc.shape, diff)
		}
		var codes []int
		for _, e := range got {
			codes = append(codes, e.Code)
		}
		if diff := cmp.Diff([]int{409, 409, 409, 200, 200, 200, 200, 400, 200}, codes); tc.shape == cloudexport.ShapeGcloud && diff != "" {
			t.Errorf("gcloud codes (-want +got):\n%s", diff)
		}
	}
}

// TestDecodeGcloudBodies: an entry that carries the request and the
// response (a RequestResponse-level rule) keeps the precondition, the
// resulting version and the API server's own Status.
func TestDecodeGcloudBodies(t *testing.T) {
	lines := cloudLines()
	export, err := cloudexport.Gcloud(lines, true)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := decodeString(t, string(export), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := decodeLines(t, lines)
	type kept struct {
		Code                         int
		Reason, DetailsKind, Precond string
		ResponseRV                   string
	}
	pick := func(es []Event) []kept {
		var out []kept
		for _, e := range es {
			out = append(out, kept{e.Code, e.Reason, e.DetailsKind, e.ObjectRef.ResourceVersion, e.ResponseRV})
		}
		return out
	}
	if diff := cmp.Diff(pick(want), pick(got)); diff != "" {
		t.Errorf("statuses and versions (-log +export):\n%s", diff)
	}
}

// TestDecodeCloudFixtures: samples written from each provider's documented
// schema (Google's LogEntry and AuditLog; Microsoft's AKSAudit table as
// the az CLI prints it) decode to these events.
func TestDecodeCloudFixtures(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	conflict := `Operation cannot be fulfilled on configmaps "inventory": the object has been modified; please apply your changes to the latest version and try again`
	inv := ObjectRef{Resource: "configmaps", Namespace: "shop", Name: "inventory", APIVersion: "v1"}
	withRV := func(r ObjectRef, rv string) ObjectRef { r.ResourceVersion = rv; return r }
	tests := map[string][]Event{
		"gcloud-logging-read.json": {
			{AuditID: "4f1c0d2e-6b8a-4e57-9d0c-1a2b3c4d5e01", Stage: "ResponseComplete", Verb: "update", Username: "system:serviceaccount:shop:pricing", UserAgent: "pricing/v1.0 (linux/amd64) kubernetes/$Format", ObjectRef: withRV(inv, "533"), Code: 409, Reason: "Conflict", Message: conflict, DetailsKind: "configmaps", RequestReceived: at("2026-11-27T10:00:00.032114Z"), StageTimestamp: at("2026-11-27T10:00:00.032114Z")},
			{AuditID: "4f1c0d2e-6b8a-4e57-9d0c-1a2b3c4d5e02", Stage: "ResponseComplete", Verb: "update", Username: "system:serviceaccount:shop:stock-controller", UserAgent: "stock-controller/v1.0 (linux/amd64) kubernetes/$Format", ObjectRef: inv, Code: 409, Reason: "Conflict", Message: conflict, RequestReceived: at("2026-11-27T10:00:00.334871Z"), StageTimestamp: at("2026-11-27T10:00:00.334871Z")},
			{AuditID: "4f1c0d2e-6b8a-4e57-9d0c-1a2b3c4d5e03", Stage: "ResponseComplete", Verb: "update", Username: "system:serviceaccount:shop:pricing", UserAgent: "pricing/v1.0 (linux/amd64) kubernetes/$Format", ObjectRef: withRV(inv, "534"), Code: 200, ResponseRV: "535", RequestReceived: at("2026-11-27T10:00:00.414202Z"), StageTimestamp: at("2026-11-27T10:00:00.414202Z")},
			{AuditID: "9d2f7e1a-0c3b-4a5e-8f6d-2b3c4d5e6f04", Stage: "ResponseComplete", Verb: "create", Username: "ops@example.com", UserAgent: "kubectl/v1.36.3 (linux/amd64) kubernetes/a1b2c3d", ObjectRef: inv, Code: 409, Reason: "AlreadyExists", Message: `configmaps "inventory" already exists`, RequestReceived: at("2026-11-27T10:00:01.5Z"), StageTimestamp: at("2026-11-27T10:00:01.5Z")},
			{AuditID: "5e6f7a8b-1c2d-4e3f-9a0b-3c4d5e6f7a05", Stage: "ResponseComplete", Verb: "update", Username: "system:serviceaccount:kube-system:horizontal-pod-autoscaler", UserAgent: "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/a1b2c3d/system:serviceaccount:kube-system:horizontal-pod-autoscaler", ObjectRef: ObjectRef{Resource: "deployments", Namespace: "shop", Name: "web", APIGroup: "apps", APIVersion: "v1", Subresource: "scale"}, Code: 200, RequestReceived: at("2026-11-27T10:00:03.25Z"), StageTimestamp: at("2026-11-27T10:00:03.25Z")},
			{AuditID: "6f7a8b9c-2d3e-4f5a-8b1c-4d5e6f7a8b06", Stage: "ResponseComplete", Verb: "update", Username: "system:serviceaccount:kube-system:namespace-controller", UserAgent: "kube-controller-manager/v1.36.3 (linux/amd64) kubernetes/a1b2c3d/system:serviceaccount:kube-system:namespace-controller", ObjectRef: ObjectRef{Resource: "namespaces", Name: "old-shop", APIVersion: "v1", Subresource: "finalize"}, Code: 200, RequestReceived: at("2026-11-27T10:00:04Z"), StageTimestamp: at("2026-11-27T10:00:04Z")},
		},
		"az-aksaudit.json": {
			{AuditID: "0b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a01", Stage: "ResponseComplete", Verb: "update", RequestURI: "/api/v1/namespaces/shop/configmaps/inventory?fieldManager=pricing", Username: "system:serviceaccount:shop:pricing", PodName: "pricing-7b4d-xyz12", UserAgent: "pricing/v1.0 (linux/amd64) kubernetes/$Format", ObjectRef: withRV(inv, "533"), Code: 409, Reason: "Conflict", Message: conflict, DetailsKind: "configmaps", RequestReceived: at("2026-11-27T10:00:00.030114Z"), StageTimestamp: at("2026-11-27T10:00:00.032114Z"), Host: "kube-apiserver-6d7fc956fd-s68ss"},
			{AuditID: "0b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a02", Stage: "ResponseComplete", Verb: "update", RequestURI: "/api/v1/namespaces/shop/configmaps/inventory", Username: "system:serviceaccount:shop:pricing", PodName: "pricing-7b4d-xyz12", UserAgent: "pricing/v1.0 (linux/amd64) kubernetes/$Format", ObjectRef: withRV(inv, "534"), Code: 200, ResponseRV: "535", RequestReceived: at("2026-11-27T10:00:00.411502Z"), StageTimestamp: at("2026-11-27T10:00:00.414202Z"), Host: "kube-apiserver-6d7fc956fd-s68ss"},
			{AuditID: "43af2d39-6ad2-4266-9196-c144db8cf714", Stage: "ResponseComplete", Verb: "list", RequestURI: "/api/v1/namespaces/shop/configmaps?limit=500", Username: "masterclient", UserAgent: "kubectl/v1.36.3 (linux/amd64) kubernetes/a1b2c3d", ObjectRef: ObjectRef{Resource: "configmaps", Namespace: "shop", APIVersion: "v1"}, Code: 200, RequestReceived: at("2026-11-27T10:00:00.525513Z"), StageTimestamp: at("2026-11-27T10:00:00.529672Z"), Host: "kube-apiserver-6d7fc956fd-t42xk"},
		},
	}
	for name, want := range tests {
		raw, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		got, st, err := decodeString(t, string(raw), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreUnexported(Event{})); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", name, diff)
		}
		if name == "az-aksaudit.json" && st.OtherStages != 1 {
			t.Errorf("%s: the watch's ResponseStarted row is not counted as another stage: %+v", name, st)
		}
	}
}

func TestDecodeCloudExportBadInput(t *testing.T) {
	gcloud, _ := os.ReadFile("testdata/gcloud-logging-read.json")
	az, _ := os.ReadFile("testdata/az-aksaudit.json")
	g, a := string(gcloud), string(az)
	tests := []struct{ name, in, want string }{
		{"gcloud cut short", g[:len(g)/2], "audit.log:"},
		{"gcloud cut short names the CLI", g[:len(g)/2], "gcloud logging read output: an entry is cut short"},
		{"gcloud entry without timestamp", strings.Replace(g, `"timestamp": "2026-11-27T10:00:00.334871Z"`, `"time": "x"`, 1), "audit.log:77: gcloud logging read output: an entry has no timestamp"},
		{"gcloud bad timestamp", strings.Replace(g, `"timestamp": "2026-11-27T10:00:00.334871Z"`, `"timestamp": "yesterday"`, 1), "audit.log:77: gcloud logging read output: an entry is not a LogEntry"},
		{"gcloud protoPayload not an object", strings.Replace(g, `"protoPayload": {`, `"protoPayload": 7, "x": {`, 1), "audit.log:2: "},
		{"az row without Verb", strings.Replace(a, `"Verb": "list"`, `"Vrb": "list"`, 1), "audit.log:50: az monitor log-analytics query output: a row has no Verb column"},
		{"az bad time", strings.Replace(a, `"2026-11-27T10:00:00.030114Z"`, `"30 Nov"`, 1), `audit.log:2: az monitor log-analytics query output: column RequestReceivedTime: "30 Nov" is not a time`},
		{"az dynamic column not JSON", strings.Replace(a, `"ObjectRef": "{\"resource\":\"configmaps\",\"namespace\":\"shop\",\"name\":\"inventory\",\"uid\"`, `"ObjectRef": "{resource:\"configmaps\",\"namespace\":\"shop\",\"name\":\"inventory\",\"uid\"`, 1), "audit.log:2: az monitor log-analytics query output: column ObjectRef: "},
		{"az cut short", a[:len(a)-40], "audit.log:"},
	}
	for _, tc := range tests {
		_, _, err := decodeString(t, tc.in, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

func FuzzCloudExport(f *testing.F) {
	for _, name := range []string{"gcloud-logging-read.json", "az-aksaudit.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`[]`)
	f.Add(`[{"insertId":"x","protoPayload":{"serviceName":"k8s.io","methodName":"io.k8s.core.v1.namespaces.update","resourceName":"core/v1/namespaces/a/b/c/d"},"timestamp":"2026-01-01T00:00:00Z"}]`)
	f.Add(`[{"TableName":"PrimaryResult","AuditId":"a","Stage":"ResponseComplete","Verb":"update","RequestReceivedTime":"2026-01-01T00:00:00Z","ObjectRef":"None","User":"{}","ResponseStatus":"{\"code\":409}"}]`)
	f.Add(`[{"protoPayload":{"serviceName":"k8s.io","resourceName":"/"}`)
	f.Fuzz(func(t *testing.T, in string) {
		evs, _, err := decodeString(t, in, Options{})
		if err != nil && !strings.HasPrefix(err.Error(), "bad audit log: audit.log:") {
			t.Fatalf("an error that names no line: %v", err)
		}
		for _, e := range evs {
			if e.Stage != StageResponseComplete && e.Stage != StagePanic {
				t.Fatalf("an event of stage %q was handed on", e.Stage)
			}
		}
	})
}
