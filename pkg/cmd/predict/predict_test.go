package predict

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/internal/testobj"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/predict"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"
)

func newPredictOptions(in string) (*PredictOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	o := &PredictOptions{
		Output:          cmdutil.NewOutputFlags(output.Table, output.Wide, output.JSON, output.YAML),
		Methods:         []string{"all"},
		FailOn:          "conflict",
		KubectlValidate: "strict",
		Rules:           serverrules.Rules{},
		IOStreams:       genericiooptions.IOStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut},
	}
	return o, &out, &errOut
}

func TestPredictValidate(t *testing.T) {
	tests := []struct {
		name string
		set  func(o *PredictOptions)
		args []string
		msg  string
	}{
		{"nothing to predict", func(o *PredictOptions) {}, nil, "say what to predict"},
		{"both -f and a patch", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.Patch = "{}" }, []string{"deploy/web"}, "not both"},
		{"patch without type", func(o *PredictOptions) { o.Patch = "{}" }, []string{"deploy/web"}, "--type is required"},
		{"unknown type", func(o *PredictOptions) { o.Patch = "{}"; o.PatchType = "yaml" }, []string{"deploy/web"}, `unknown patch type "yaml"`},
		{"invalid json patch", func(o *PredictOptions) { o.Patch = `[{"op":`; o.PatchType = "json" }, []string{"deploy/web"}, "invalid JSON patch"},
		{"invalid merge patch", func(o *PredictOptions) { o.Patch = `[]`; o.PatchType = "merge" }, []string{"deploy/web"}, "invalid merge patch"},
		{"apply without manager", func(o *PredictOptions) { o.Patch = `{}`; o.PatchType = "apply" }, []string{"deploy/web"}, "--field-manager"},
		{"apply method without manager", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.Methods = []string{"apply"} }, nil, "--field-manager"},
		{"unknown method", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.Methods = []string{"put"} }, nil, `unknown method "put"`},
		{"bad fail-on", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.FailOn = "always" }, nil, "--fail-on"},
		{"offline without live", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.Offline = true }, nil, "--offline needs --live"},
		{"live without offline", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.LiveFile = "l" }, nil, "only work with --offline"},
		{"base-rv not a resourceVersion", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.BaseRV = "abc" }, nil, `--base-rv "abc" is not a resourceVersion`},
		{"base-rv with an escape", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.BaseRV = "1\x1b]0;t\a" }, nil, `--base-rv "1\x1b]0;t\a" is not`},
		{"type without patch", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.PatchType = "json" }, nil, "--type only goes with"},
		{"bad validate", func(o *PredictOptions) { o.Filenames = []string{"x"}; o.KubectlValidate = "yes" }, nil, `--validate: "yes" is not one of strict (or true), warn, ignore (or false)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, _ := newPredictOptions("")
			tt.set(o)
			o.args = tt.args
			err := o.Validate()
			if err == nil || exitcode.Classify(err) != exitcode.CodeUsage || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate() = %v (exit %d), want a usage error with %q", err, exitcode.Classify(err), tt.msg)
			}
		})
	}
}

const benchDeploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec:
      containers:
      - {name: app, image: "registry.example/app:1"}
      - {name: sidecar, image: "registry.example/sidecar:1"}
`

// benchDeployDefaulted is benchDeploy as the API server stores it, with
// its defaults.
const benchDeployDefaulted = `apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: default}
spec:
  replicas: 2
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}}
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec:
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
      containers:
      - {name: app, image: "registry.example/app:1", imagePullPolicy: IfNotPresent, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}
      - {name: sidecar, image: "registry.example/sidecar:1", imagePullPolicy: IfNotPresent, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}
`

// writePredictFixtures writes n desired manifests (one file each) and one
// live file with n live objects created by kubectl-create and scaled by
// an HPA-like updater.
func writePredictFixtures(tb testing.TB, n int) (dir, live string) {
	tb.Helper()
	dir = tb.TempDir()
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	fm, err := managedfields.NewFieldManager(managedfields.BuiltinTypeConverter(), gvk)
	if err != nil {
		tb.Fatal(err)
	}
	var lives bytes.Buffer
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("app-%04d", i)
		doc := strings.ReplaceAll(benchDeploy, "NAME", name)
		u := testobj.FromYAML(tb, strings.ReplaceAll(benchDeployDefaulted, "NAME", name))
		created, err := fm.Update(managedfields.NewEmpty(gvk), u, "kubectl-create", "")
		if err != nil {
			tb.Fatal(err)
		}
		created.SetUID("uid")
		created.SetGeneration(1)
		next := created.DeepCopy()
		next.SetManagedFields(nil)
		_ = unstructured.SetNestedField(next.Object, int64(5), "spec", "replicas")
		scaled, err := fm.Update(created, next, "hpa", "")
		if err != nil {
			tb.Fatal(err)
		}
		scaled.SetResourceVersion(fmt.Sprint(100 + i))
		b, _ := yaml.Marshal(scaled.Object)
		lives.WriteString("---\n")
		lives.Write(b)
		desired := strings.Replace(doc, "app:1", "app:2", 1)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(desired), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	live = filepath.Join(tb.TempDir(), "live.yaml")
	if err := os.WriteFile(live, lives.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir, live
}

func TestPredictOfflineDirectory(t *testing.T) {
	dir, live := writePredictFixtures(t, 3)
	o, out, errOut := newPredictOptions("")
	o.Filenames, o.Offline, o.LiveFile, o.FieldManager, o.FailOn = []string{dir}, true, live, "ci", "clobber"
	if err := o.Complete(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	if exitcode.Classify(err) != exitcode.CodeFinding {
		t.Fatalf("Run() = %v, want a finding (exit 1)", err)
	}
	for _, want := range []string{"OBJECT", "Deployment default/app-0002", "apply-conflict", `takes .spec.replicas from "hpa"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "offline predictions") {
		t.Errorf("error stream lacks the offline note: %q", errOut.String())
	}
}

func TestPredictOfflineLiveWithoutManagedFields(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.yaml")
	if err := os.WriteFile(live, []byte(strings.ReplaceAll(benchDeploy, "NAME", "web")), 0o644); err != nil {
		t.Fatal(err)
	}
	o, out, _ := newPredictOptions(strings.ReplaceAll(benchDeploy, "NAME", "web"))
	o.Filenames, o.Offline, o.LiveFile = []string{"-"}, true, live
	_ = o.Complete(nil, nil)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Run(context.Background())
	if exitcode.Classify(err) != exitcode.CodeUsage || !strings.Contains(err.Error(), "--show-managed-fields") || out.Len() != 0 {
		t.Errorf("Run() = %v, output %q: want exit 2 naming --show-managed-fields and no output", err, out.String())
	}
}

// TestPredictExitCodeAndMethods runs kubectl rv predict as a user types
// it (flag defaults included): a predicted 409 among the selected methods
// exits 1 unless --fail-on says otherwise, and each method name selects
// that method alone.
func TestPredictExitCodeAndMethods(t *testing.T) {
	dir, live := writePredictFixtures(t, 1)
	tests := []struct {
		name        string
		args        []string
		wantCode    int
		wantMethods []string
		wantStderr  string
	}{
		{name: "every method: apply conflicts, exit 1 by default", wantCode: 1,
			wantMethods: []string{"update", "update-no-rv", "json-patch", "merge-patch", "merge-patch-rv", "strategic-merge-patch", "apply", "apply-force"}},
		{name: "apply alone conflicts", args: []string{"--method", "apply"}, wantCode: 1, wantMethods: []string{"apply"},
			wantStderr: "1 predicted 409 found (--fail-on conflict)"},
		{name: "apply-force alone clobbers: not a conflict", args: []string{"--method", "apply-force"}, wantCode: 0, wantMethods: []string{"apply-force"}},
		{name: "apply-force alone, --fail-on clobber", args: []string{"--method", "apply-force", "--fail-on", "clobber"}, wantCode: 1, wantMethods: []string{"apply-force"}},
		{name: "all-apply family", args: []string{"--method", "all-apply"}, wantCode: 1, wantMethods: []string{"apply", "apply-force"}},
		{name: "--fail-on none", args: []string{"--method", "all-apply", "--fail-on", "none"}, wantCode: 0, wantMethods: []string{"apply", "apply-force"}},
		{name: "update alone is the PUT with the resourceVersion", args: []string{"--method", "update"}, wantCode: 0, wantMethods: []string{"update"}},
		{name: "kubectl's verbs", args: []string{"--method", "kubectl"}, wantCode: 1, wantMethods: []string{"client-apply", "server-side-apply", "replace", "edit"}},
		{name: "client-apply alone", args: []string{"--method", "client-apply"}, wantCode: 0, wantMethods: []string{"client-apply"}},
		{name: "bad --fail-on", args: []string{"--fail-on", "always"}, wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			root := cmdtest.Root(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, NewCmdPredict)
			root.SetArgs(append([]string{"predict", "-f", dir, "--offline", "--live", live, "--field-manager", "ci", "-o", "json"}, tt.args...))
			code := cmdutil.HandleError(&errOut, root.ExecuteContext(context.Background()))
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, out.String(), errOut.String())
			}
			if tt.wantCode == 2 {
				return
			}
			if tt.wantStderr != "" && !strings.Contains(errOut.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, errOut.String())
			}
			var rep struct {
				Objects []struct {
					Methods []struct{ Method string }
				}
			}
			if err := yaml.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Objects) != 1 {
				t.Fatalf("not a report of one object (%v):\n%s", err, out.String())
			}
			var got []string
			for _, m := range rep.Objects[0].Methods {
				got = append(got, m.Method)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantMethods, ",") {
				t.Errorf("methods %v, want %v", got, tt.wantMethods)
			}
		})
	}
}

func predictCPUTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPredictOfflineDirectory1000 runs kubectl rv predict --offline
// over a directory of 1,000 Deployment manifests, every method (target:
// under 10 s per run).
func BenchmarkPredictOfflineDirectory1000(b *testing.B) {
	dir, live := writePredictFixtures(b, 1000)
	start := predictCPUTime()
	for b.Loop() {
		o, _, _ := newPredictOptions("")
		o.Filenames, o.Offline, o.LiveFile, o.FieldManager, o.Output.Output, o.FailOn = []string{dir}, true, live, "ci", "json", "none"
		_ = o.Complete(nil, nil)
		if err := o.Validate(); err != nil {
			b.Fatal(err)
		}
		if err := o.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(predictCPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// TestPredictMatchErrors pins the messages and exit codes of the objects
// predict cannot match to a live object.
func TestPredictMatchErrors(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.yaml")
	_, fixtures := writePredictFixtures(t, 1)
	data, err := os.ReadFile(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(live, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	cluster := func(o *PredictOptions) {
		o.mapper = func() (meta.RESTMapper, error) { return mapper, nil }
		o.dynamic = func() (dynamic.Interface, error) {
			return dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), nil
		}
	}
	deploy := strings.ReplaceAll(benchDeploy, "NAME", "app-0000")
	tests := []struct {
		name string
		in   string
		set  func(o *PredictOptions)
		msg  string
	}{
		{"offline patch to a missing object", "", func(o *PredictOptions) {
			o.args, o.Patch, o.PatchType, o.Offline, o.LiveFile = []string{"deploy/web"}, "{}", "merge", true, live
		}, "--live " + live + " holds no deploy/web"},
		{"offline patch naming a namespace -n contradicts", "", func(o *PredictOptions) {
			o.args, o.Patch, o.PatchType, o.Offline, o.LiveFile = []string{"deployments/shop/app-0000"}, "{}", "merge", true, live
			o.namespace, o.explicitNS = "team", true
		}, `deployments shop/app-0000: the object's namespace "shop" does not match -n "team"`},
		{"offline patch by short name, in a namespace the live object is not in", "", func(o *PredictOptions) {
			o.args, o.Patch, o.PatchType, o.Offline, o.LiveFile = []string{"deploy/shop/app-0000"}, "{}", "merge", true, live
		}, "--live " + live + " holds no deploy/app-0000"},
		{"offline patch in a namespace the live object is not in", "", func(o *PredictOptions) {
			o.args, o.Patch, o.PatchType, o.Offline, o.LiveFile = []string{"deployments/shop/app-0000"}, "{}", "merge", true, live
		}, "--live " + live + " holds no deployments/app-0000"},
		{"patch to a missing object", "", func(o *PredictOptions) {
			o.args, o.Patch, o.PatchType = []string{"deployments/nosuch"}, "{}", "merge"
			cluster(o)
		}, "deployments/nosuch: Deployment default/nosuch does not exist: a merge patch has nothing to patch (--type apply would create it)"},
		{"offline version mismatch", strings.Replace(deploy, "apps/v1", "apps/v1beta1", 1), func(o *PredictOptions) {
			o.Filenames, o.Offline, o.LiveFile = []string{"-"}, true, live
		}, "<stdin>:1: the manifest is apps/v1beta1 Deployment, its live object (--live " + live + ":2) apps/v1 Deployment: offline prediction cannot convert between versions"},
		{"namespace other than -n", deploy, func(o *PredictOptions) {
			o.Filenames, o.namespace, o.explicitNS = []string{"-"}, "team", true
			cluster(o)
		}, `<stdin>:1: the object's namespace "default" does not match -n "team"`},
		{"kind the cluster does not serve", strings.Replace(deploy, "kind: Deployment", "kind: Widget", 1), func(o *PredictOptions) {
			o.Filenames = []string{"-"}
			cluster(o)
		}, "<stdin>:1: the cluster does not serve apps/v1, Kind=Widget: "},
	}
	badRV := strings.Replace(deploy, "namespace: default}", "namespace: default, resourceVersion: abc}", 1)
	badRVMsg := `<stdin>:1: metadata.resourceVersion "abc" is not a resourceVersion`
	tests = append(tests, []struct {
		name string
		in   string
		set  func(o *PredictOptions)
		msg  string
	}{
		{"manifest resourceVersion not one, offline", badRV, func(o *PredictOptions) {
			o.Filenames, o.Offline, o.LiveFile = []string{"-"}, true, live
		}, badRVMsg},
		{"manifest resourceVersion not one, cluster", badRV, func(o *PredictOptions) {
			o.Filenames = []string{"-"}
			cluster(o)
		}, badRVMsg},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, out, _ := newPredictOptions(tt.in)
			tt.set(o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if o.namespace == "" {
				o.namespace = "default"
			}
			err := o.Run(context.Background())
			if exitcode.Classify(err) != exitcode.CodeUsage || !strings.HasPrefix(err.Error(), tt.msg) || out.Len() != 0 {
				t.Errorf("Run() = %v (exit %d), output %q: want exit 2, no output and %q", err, exitcode.Classify(err), out.String(), tt.msg)
			}
		})
	}
}

// secretLive is a live Secret with the old password, as kubectl get -o yaml
// --show-managed-fields prints it.
const secretLive = `apiVersion: v1
kind: Secret
metadata:
  name: NAME
  namespace: sec
  resourceVersion: "10"
  uid: uid-NAME
  managedFields:
  - manager: kubectl-create
    operation: Update
    apiVersion: v1
    time: "2026-11-24T10:00:00Z"
    fieldsType: FieldsV1
    fieldsV1: {"f:data": {".": {}, "f:password": {}}, "f:type": {}}
data: {password: aHVudGVyMi1vbGQtdmFsdWU=}
type: Opaque
`

// TestPredictSecretsInListsAndDocuments checks --show-secrets end to end in
// process: Secrets in a List and in a multi-document file, every -o.
func TestPredictSecretsInListsAndDocuments(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.yaml")
	lives := strings.ReplaceAll(secretLive, "NAME", "s1") + "---\n" + strings.ReplaceAll(secretLive, "NAME", "s2")
	if err := os.WriteFile(live, []byte(lives), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "apiVersion: v1\nkind: Secret\nmetadata: {name: NAME, namespace: sec}\nstringData: {password: hunter2-new-value}\ndata: {token: dG9rZW4tbmV3LXZhbHVl}\n"
	list := `{"apiVersion":"v1","kind":"List","items":[` +
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1","namespace":"sec"},"stringData":{"password":"hunter2-new-value"}},` +
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s2","namespace":"sec"},"data":{"token":"dG9rZW4tbmV3LXZhbHVl"}}]}`
	inputs := map[string]string{"multi-document": strings.ReplaceAll(doc, "NAME", "s1") + "---\n" + strings.ReplaceAll(doc, "NAME", "s2"), "List": list}
	values := []string{"hunter2-new-value", "aHVudGVyMi1uZXctdmFsdWU=", "token-new-value", "dG9rZW4tbmV3LXZhbHVl", "hunter2-old-value", "aHVudGVyMi1vbGQtdmFsdWU="}
	for name, in := range inputs {
		for _, f := range []string{"table", "wide", "json", "yaml"} {
			for _, show := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/show=%v", name, f, show), func(t *testing.T) {
					o, out, errOut := newPredictOptions(in)
					o.Filenames, o.Offline, o.LiveFile, o.FieldManager, o.ShowSecrets = []string{"-"}, true, live, "ci", show
					o.Output.Output = f
					if err := o.Complete(nil, nil); err != nil {
						t.Fatal(err)
					}
					if err := o.Validate(); err != nil {
						t.Fatal(err)
					}
					if err := o.Run(context.Background()); err != nil {
						t.Fatal(err)
					}
					all := out.String() + errOut.String()
					if !strings.Contains(all, "Secret sec/s2") && !strings.Contains(all, "name: s2") && !strings.Contains(all, `"name": "s2"`) {
						t.Fatalf("s2 is missing:\n%s", all)
					}
					var found []string
					for _, v := range values {
						if strings.Contains(all, v) {
							found = append(found, v)
						}
					}
					structured := f == "json" || f == "yaml"
					switch {
					case !show && len(found) > 0:
						t.Errorf("the output shows %q:\n%s", found, all)
					case show && structured && len(found) == 0:
						t.Errorf("--show-secrets: the requests show no value:\n%s", all)
					}
				})
			}
		}
	}
}

// TestPredictMissingNamed: a TYPE/NAME that does not exist is bad input
// (exit 2) when no method finds it; an apply, which creates it, is a
// prediction (docs/exit-codes.md).
func TestPredictMissingNamed(t *testing.T) {
	ref := predict.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nosuch"}
	tests := []struct {
		name     string
		args     []string
		live     string
		verdicts []predict.Verdict
		want     int
	}{
		{"patch, no object", []string{"deploy/nosuch"}, "", []predict.Verdict{predict.NotFound, predict.NotFound}, exitcode.CodeUsage},
		{"apply creates it", []string{"deploy/nosuch"}, "", []predict.Verdict{predict.OK, predict.OK}, exitcode.CodeOK},
		{"the object exists", []string{"deploy/web"}, "12", []predict.Verdict{predict.NotFound}, exitcode.CodeOK},
		{"a manifest, not a name", nil, "", []predict.Verdict{predict.NotFound}, exitcode.CodeOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := predict.Result{Object: ref, LiveResourceVersion: tt.live}
			for _, v := range tt.verdicts {
				r.Methods = append(r.Methods, predict.MethodResult{Verdict: v})
			}
			o := &PredictOptions{args: tt.args, PatchType: "merge"}
			if got := exitcode.Classify(o.missingNamed([]predict.Result{r})); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}

// TestLiveKinds: predict --offline resolves a patch's TYPE by the one
// resolver, over the kinds the --live objects have, as against a cluster.
func TestLiveKinds(t *testing.T) {
	obj := func(gvk schema.GroupVersionKind) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName("web")
		return u
	}
	deployGVK := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	resolve := liveKinds([]*unstructured.Unstructured{obj(cmGVK), obj(deployGVK)})
	tests := []struct {
		typ  string
		want schema.GroupKind // zero: unknown
	}{
		{"deployment", deployGVK.GroupKind()},
		{"Deployment", deployGVK.GroupKind()},
		{"deployments.apps", deployGVK.GroupKind()},
		{"configmaps", cmGVK.GroupKind()},
		{"deployments.extensions", schema.GroupKind{}},
		// kubectl's short names, from the offline table (#46: short names
		// everywhere); a built-in type without a live object stays unknown.
		{"deploy", deployGVK.GroupKind()},
		{"cm", cmGVK.GroupKind()},
		{"sts", schema.GroupKind{}},
	}
	for _, tt := range tests {
		got, err := resolve(tt.typ)
		if (err != nil) != tt.want.Empty() || got != tt.want {
			t.Errorf("liveKinds(%q) = %v, %v; want %v", tt.typ, got, err, tt.want)
		}
	}
}
