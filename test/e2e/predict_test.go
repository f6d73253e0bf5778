//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/predictprint"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
)

const predictWeb = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: NS
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1"}
      - {name: sidecar, image: "busybox:1"}
`

// predictSetup creates web with kubectl create, scales it with kubectl
// scale (manager "kubectl", subresource scale) and returns the namespace,
// a temp dir and the live object's resourceVersion after creation and now.
func predictSetup(t *testing.T) (ns, dir, createdRV, liveRV string) {
	t.Helper()
	ns = cluster.Namespace(t)
	dir = t.TempDir()
	cluster.KubectlStdin(t, strings.ReplaceAll(predictWeb, "NS", ns), "create", "-f", "-")
	createdRV = strings.Trim(cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"), "'")
	cluster.MustKubectl(t, "scale", "deploy", "web", "-n", ns, "--replicas", "4")
	// The deployment controller writes the status for a moment after the
	// scale: a prediction made meanwhile reads a version the controller
	// then moves on, and its update meets a real 409.
	waitScaled(t, deploymentsGVR, ns, "web")
	liveRV = strings.Trim(cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"), "'")
	return ns, dir, createdRV, liveRV
}

func predictWriteFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func predictReport(t *testing.T, args ...string) (predictprint.Report, int) {
	t.Helper()
	r := cluster.RV(t, append([]string{"predict", "-o", "json"}, args...)...)
	var rep predictprint.Report
	if r.Code != 0 && r.Code != 1 {
		t.Fatalf("kubectl rv predict %s: %s", strings.Join(args, " "), r)
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("predict -o json is not a report: %v\n%s", err, r)
	}
	return rep, r.Code
}

func methodMap(rep predictprint.Report) map[predict.Method]predict.MethodResult {
	m := map[predict.Method]predict.MethodResult{}
	for _, mr := range rep.Objects[0].Methods {
		m[mr.Method] = mr
	}
	return m
}

func verdictMap(rep predictprint.Report) map[predict.Method]predict.Verdict {
	m := map[predict.Method]predict.Verdict{}
	for k, v := range methodMap(rep) {
		m[k] = v.Verdict
	}
	return m
}

// TestPredictEveryMethodAgainstServer predicts a manifest that changes the
// image kubectl-create owns and resets the replicas kubectl scale owns,
// with a fresh and with a stale resourceVersion, and checks every method's
// verdict, the apply conflicts and their owners as the server lists them,
// the clobbered fields, and that nothing was persisted.
func TestPredictEveryMethodAgainstServer(t *testing.T) {
	ns, dir, createdRV, liveRV := predictSetup(t)
	want := strings.ReplaceAll(strings.ReplaceAll(predictWeb, "NS", ns), "nginx:1", "nginx:2")
	fresh := predictWriteFile(t, dir, "fresh.yaml", strings.Replace(want, "name: web\n", "name: web\n  resourceVersion: \""+liveRV+"\"\n", 1))
	stale := predictWriteFile(t, dir, "stale.yaml", strings.Replace(want, "name: web\n", "name: web\n  resourceVersion: \""+createdRV+"\"\n", 1))

	rep, code := predictReport(t, "-f", fresh, "--field-manager", "ci")
	if code != 1 {
		t.Errorf("exit %d without --fail-on, want 1: the non-forced apply conflicts", code)
	}
	if rep.Kind != "PredictReport" || rep.Engine != "server" || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "admission webhooks") {
		t.Errorf("report head: kind %q engine %q notes %q", rep.Kind, rep.Engine, rep.Notes)
	}
	wantFresh := map[predict.Method]predict.Verdict{
		predict.Update: predict.Clobber, predict.UpdateNoRV: predict.Clobber, predict.JSONPatch: predict.Clobber,
		predict.MergePatch: predict.Clobber, predict.MergePatchRV: predict.Clobber, predict.StrategicMergePatch: predict.Clobber,
		predict.Apply: predict.ApplyConflict, predict.ApplyForce: predict.Clobber,
	}
	if diff := cmp.Diff(wantFresh, verdictMap(rep)); diff != "" {
		t.Errorf("fresh verdicts (-want +got):\n%s", diff)
	}
	ms := methodMap(rep)
	wantConflicts := []managedfields.Conflict{
		{Field: ".spec.replicas", Manager: "kubectl", Operation: "Update", APIVersion: "apps/v1", Subresource: "scale"},
		{Field: `.spec.template.spec.containers[name="nginx"].image`, Manager: "kubectl-create", Operation: "Update", APIVersion: "apps/v1"},
	}
	if diff := cmp.Diff(wantConflicts, ms[predict.Apply].Conflicts); diff != "" {
		t.Errorf("apply conflicts (-want +got):\n%s", diff)
	}
	wantClobbered := []predict.Ownership{
		{Manager: "kubectl", Operation: "Update", Subresource: "scale", Fields: []string{".spec.replicas"}},
		{Manager: "kubectl-create", Operation: "Update", Fields: []string{`.spec.template.spec.containers[name="nginx"].image`}},
	}
	if diff := cmp.Diff(wantClobbered, ms[predict.ApplyForce].Clobbered); diff != "" {
		t.Errorf("apply-force clobbered (-want +got):\n%s", diff)
	}
	if !ms[predict.ApplyForce].GenerationBumped || ms[predict.ApplyForce].Code != 200 {
		t.Errorf("apply-force: generation bumped %v, code %d", ms[predict.ApplyForce].GenerationBumped, ms[predict.ApplyForce].Code)
	}

	rep, _ = predictReport(t, "-f", stale, "--field-manager", "ci")
	wantStale := map[predict.Method]predict.Verdict{
		predict.Update: predict.Conflict, predict.UpdateNoRV: predict.Clobber, predict.JSONPatch: predict.Invalid,
		predict.MergePatch: predict.Clobber, predict.MergePatchRV: predict.Conflict, predict.StrategicMergePatch: predict.Clobber,
		// The field manager runs before the resourceVersion precondition.
		predict.Apply: predict.ApplyConflict, predict.ApplyForce: predict.Conflict,
	}
	if diff := cmp.Diff(wantStale, verdictMap(rep)); diff != "" {
		t.Errorf("stale verdicts (-want +got):\n%s", diff)
	}
	if ms := methodMap(rep); ms[predict.Update].Code != 409 || ms[predict.JSONPatch].Code != 422 {
		t.Errorf("codes: update %d (want 409), json-patch %d (want 422)", ms[predict.Update].Code, ms[predict.JSONPatch].Code)
	}

	after := strings.Trim(cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "jsonpath={.metadata.resourceVersion}"), "'")
	if after != liveRV {
		t.Errorf("resourceVersion moved from %s to %s: a dry run persisted", liveRV, after)
	}
}

// TestPredictOfflineMatchesServer saves the live object with its
// managedFields and checks that the offline engine gives the same report as
// the server's dry runs.
func TestPredictOfflineMatchesServer(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "yaml", "--show-managed-fields"))
	want := predictWriteFile(t, dir, "want.yaml", strings.ReplaceAll(strings.ReplaceAll(predictWeb, "NS", ns), "nginx:1", "nginx:2"))
	srv, _ := predictReport(t, "-f", want, "--field-manager", "ci")
	off, _ := predictReport(t, "-f", want, "--field-manager", "ci", "--offline", "--live", live)
	if off.Engine != "offline" {
		t.Errorf("engine %q, want offline", off.Engine)
	}
	for i := range srv.Objects[0].Methods {
		srv.Objects[0].Methods[i].Request = ""
		off.Objects[0].Methods[i].Request = ""
		srv.Objects[0].Methods[i].Reason = ""
		off.Objects[0].Methods[i].Reason = ""
	}
	if !strings.Contains(off.Objects[0].Rules, "Deployment apps/v1") || srv.Objects[0].Rules != "" {
		t.Errorf("rules: offline %q (want the Deployment's), server %q (want none: the server ran them)", off.Objects[0].Rules, srv.Objects[0].Rules)
	}
	srv.Objects[0].Engine, off.Objects[0].Engine = "", ""
	off.Objects[0].Rules = ""
	if diff := cmp.Diff(srv.Objects, off.Objects); diff != "" {
		t.Errorf("offline differs from the server (-server +offline):\n%s", diff)
	}
}

// TestPredictGivenPatches predicts given patches: a JSON patch whose test
// fails (invalid), a merge patch (clobber), a strategic merge patch on a
// custom resource's stand-in (a ConfigMap works; see the CRD test), and an
// apply patch without conflicts (ok).
func TestPredictGivenPatches(t *testing.T) {
	ns, _, _, _ := predictSetup(t)
	tests := []struct {
		name   string
		args   []string
		method predict.Method
		want   predict.Verdict
	}{
		{"json patch with a failing test", []string{"--type", "json", "--patch", `[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3}]`}, predict.JSONPatch, predict.Invalid},
		{"json patch taking replicas", []string{"--type", "json", "--patch", `[{"op":"test","path":"/spec/replicas","value":4},{"op":"replace","path":"/spec/replicas","value":3}]`}, predict.JSONPatch, predict.Clobber},
		{"merge patch adding a label", []string{"--type", "merge", "--patch", `{"metadata":{"labels":{"team":"a"}}}`}, predict.MergePatch, predict.OK},
		{"strategic merge patch on a built-in type", []string{"--type", "strategic", "--patch", `{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:3"}]}}}}`}, predict.StrategicMergePatch, predict.Clobber},
		{"apply without conflicts", []string{"--type", "apply", "--field-manager", "ci", "--patch", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"team":"a"}}}`}, predict.Apply, predict.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := predictReport(t, append([]string{"deployment/web", "-n", ns}, tt.args...)...)
			got := methodMap(rep)[tt.method]
			if got.Verdict != tt.want {
				t.Errorf("%s: verdict %q, want %q (%s)", tt.method, got.Verdict, tt.want, got.Reason)
			}
		})
	}
}

// TestPredictCustomResource checks that strategic merge patch is invalid
// (415) for a custom resource, with the reason, and that the other methods
// work.
func TestPredictCustomResource(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	crd := crdManifest("predict.example.com", "Gizmo", `schema:
  openAPIV3Schema:
    type: object
    properties:
      spec:
        type: object
        properties:
          size: {type: integer}
          color: {type: string}
`)
	_, _ = installCRD(t, crd)
	obj := "apiVersion: predict.example.com/v1\nkind: Gizmo\nmetadata: {name: g, namespace: " + ns + "}\nspec: {size: 1, color: red}\n"
	cluster.KubectlStdin(t, obj, "create", "-f", "-")
	want := predictWriteFile(t, dir, "g.yaml", strings.Replace(obj, "size: 1", "size: 2", 1))
	crdFile := predictWriteFile(t, dir, "crd.yaml", crd)
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "gizmo", "g", "-n", ns, "-o", "yaml", "--show-managed-fields"))
	for _, extra := range [][]string{nil, {"--offline", "--live", live, "--schema", crdFile}} {
		rep, _ := predictReport(t, append([]string{"-f", want, "--field-manager", "ci"}, extra...)...)
		ms := methodMap(rep)
		if got := ms[predict.StrategicMergePatch]; got.Verdict != predict.Invalid || got.Code != 415 || !strings.Contains(got.Reason, "custom resources") {
			t.Errorf("%s: strategic merge patch: %+v", rep.Engine, got)
		}
		if got := ms[predict.Apply]; got.Verdict != predict.ApplyConflict || len(got.Conflicts) != 1 || got.Conflicts[0].Field != ".spec.size" || got.Conflicts[0].Manager != "kubectl-create" {
			t.Errorf("%s: apply: %+v", rep.Engine, got)
		}
		if got := ms[predict.MergePatch]; got.Verdict != predict.Clobber || !got.GenerationBumped {
			t.Errorf("%s: merge patch: %+v", rep.Engine, got)
		}
	}
}

// TestPredictFailOn checks the exit codes, by default (a predicted 409 or
// apply conflict among the selected methods exits 1) and with --fail-on,
// and the table.
func TestPredictFailOn(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	want := predictWriteFile(t, dir, "want.yaml", strings.ReplaceAll(strings.ReplaceAll(predictWeb, "NS", ns), "nginx:1", "nginx:2"))
	harmless := predictWriteFile(t, dir, "label.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: "+ns+", labels: {team: a}}\n")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		stdout   string
	}{
		{"apply conflict, default", []string{"-f", want, "--method", "apply"}, 1, "apply-conflict"},
		{"apply conflict, --fail-on conflict", []string{"-f", want, "--method", "apply", "--fail-on", "conflict"}, 1, "apply-conflict"},
		{"apply conflict among two methods", []string{"-f", want, "--method", "apply", "--method", "json-patch"}, 1, "apply-conflict"},
		{"apply conflict, --fail-on none", []string{"-f", want, "--method", "apply", "--fail-on", "none"}, 0, "apply-conflict"},
		{"every method, --fail-on none", []string{"-f", want, "--fail-on", "none"}, 0, "apply-conflict"},
		{"a clobber is not a conflict", []string{"-f", want, "--method", "update-no-rv"}, 0, "clobber"},
		{"--fail-on clobber", []string{"-f", want, "--method", "update-no-rv", "--fail-on", "clobber"}, 1, "clobber"},
		{"harmless apply, --fail-on any", []string{"-f", harmless, "--method", "apply", "--fail-on", "any"}, 0, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cluster.RV(t, append([]string{"predict", "--field-manager", "ci"}, tt.args...)...)
			if r.Code != tt.wantCode || !strings.Contains(r.Stdout, tt.stdout) || !strings.Contains(r.Stderr, "admission webhooks") {
				t.Errorf("want exit %d, a table with %q and the webhook note: %s", tt.wantCode, tt.stdout, r)
			}
		})
	}
}

// TestPredictUnknownOffline: a kind whose rules the offline engine does not
// run (a Namespace) gets the verdict unknown offline, with the reason,
// where the server's dry run answers; --fail-on unknown and any count it,
// --fail-on conflict does not (#29).
func TestPredictUnknownOffline(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "namespace", ns, "-o", "yaml", "--show-managed-fields"))
	want := predictWriteFile(t, dir, "want.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+", labels: {team: a}}\n")
	methods := []string{"--method", "update-no-rv,merge-patch"}
	// The server's dry run judges them (clobber: the labels the
	// namespace's creator set are replaced).
	srv, _ := predictReport(t, append([]string{"-f", want, "--field-manager", "ci"}, methods...)...)
	if diff := cmp.Diff(map[predict.Method]predict.Verdict{predict.UpdateNoRV: predict.Clobber, predict.MergePatch: predict.Clobber}, verdictMap(srv)); diff != "" {
		t.Fatalf("the server's dry run (-want +got):\n%s", diff)
	}
	offline := append([]string{"-f", want, "--field-manager", "ci", "--offline", "--live", live}, methods...)
	for _, tt := range []struct {
		failOn string
		code   int
	}{{"conflict", 0}, {"unknown", 1}, {"any", 1}} {
		rep, code := predictReport(t, append(offline, "--fail-on", tt.failOn)...)
		for m, mr := range methodMap(rep) {
			if mr.Verdict != predict.Unknown || !strings.Contains(mr.Reason, "does not run the API server's defaulting and validation of Namespace v1") {
				t.Errorf("--fail-on %s: %s: %s %q, want unknown and its reason", tt.failOn, m, mr.Verdict, mr.Reason)
			}
		}
		if code != tt.code {
			t.Errorf("--fail-on %s: exit %d, want %d", tt.failOn, code, tt.code)
		}
	}
}

// TestPredictMethodSelection checks that each method name selects that
// method alone (apply is the non-forced apply, without apply-force) and
// that a family says it is one, against the server and offline.
func TestPredictMethodSelection(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	live := predictWriteFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "yaml", "--show-managed-fields"))
	want := predictWriteFile(t, dir, "want.yaml", strings.ReplaceAll(strings.ReplaceAll(predictWeb, "NS", ns), "nginx:1", "nginx:2"))
	tests := []struct {
		method string
		want   map[predict.Method]predict.Verdict
	}{
		{"apply", map[predict.Method]predict.Verdict{predict.Apply: predict.ApplyConflict}},
		{"apply-force", map[predict.Method]predict.Verdict{predict.ApplyForce: predict.Clobber}},
		{"all-apply", map[predict.Method]predict.Verdict{predict.Apply: predict.ApplyConflict, predict.ApplyForce: predict.Clobber}},
		{"update", map[predict.Method]predict.Verdict{predict.Update: predict.Clobber}},
		{"all-update", map[predict.Method]predict.Verdict{predict.Update: predict.Clobber, predict.UpdateNoRV: predict.Clobber}},
		{"merge-patch", map[predict.Method]predict.Verdict{predict.MergePatch: predict.Clobber}},
	}
	for _, engine := range [][]string{nil, {"--offline", "--live", live}} {
		for _, tt := range tests {
			rep, _ := predictReport(t, append([]string{"-f", want, "--field-manager", "ci", "--method", tt.method}, engine...)...)
			if diff := cmp.Diff(tt.want, verdictMap(rep)); diff != "" {
				t.Errorf("%s --method %s (-want +got):\n%s", rep.Engine, tt.method, diff)
			}
		}
	}
}

// TestPredictBadInput checks that bad input exits 2 with a clear error and
// writes nothing to stdout.
func TestPredictBadInput(t *testing.T) {
	ns, dir, _, _ := predictSetup(t)
	noMF := predictWriteFile(t, dir, "nomf.yaml", cluster.MustKubectl(t, "get", "deploy", "web", "-n", ns, "-o", "yaml"))
	want := predictWriteFile(t, dir, "want.yaml", strings.ReplaceAll(predictWeb, "NS", ns))
	unserved := predictWriteFile(t, dir, "unserved.yaml", "apiVersion: nope.example.com/v1\nkind: Thing\nmetadata: {name: x, namespace: "+ns+"}\n")
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"invalid patch JSON", []string{"deployment/web", "-n", ns, "--type", "json", "--patch", `[{"op":`}, "invalid JSON patch"},
		{"unknown type", []string{"deployment/web", "-n", ns, "--type", "yaml", "--patch", `{}`}, `unknown patch type "yaml"`},
		{"apply without field manager", []string{"deployment/web", "-n", ns, "--type", "apply", "--patch", `{}`}, "--field-manager"},
		{"kind not served", []string{"-f", unserved}, "does not serve"},
		{"live without managedFields", []string{"-f", want, "--offline", "--live", noMF}, "--show-managed-fields"},
		{"unknown method", []string{"-f", want, "--method", "put"}, `unknown method "put"`},
		{"a named object that does not exist", []string{"deploy/nosuch", "-n", ns, "--type", "merge", "--patch", `{}`}, "Deployment " + ns + "/nosuch does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cluster.RV(t, append([]string{"predict"}, tt.args...)...)
			if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, tt.msg) {
				t.Errorf("want exit 2, no output and %q in the error: %s", tt.msg, r)
			}
		})
	}
}
