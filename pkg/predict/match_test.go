package predict

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// manifest is a desired web Deployment in ns ("" for none), read from src.
func manifest(t *testing.T, ns, src string) Target {
	t.Helper()
	u := obj(t, webYAML)
	u.SetNamespace(ns)
	ref := ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: ns, Name: u.GetName(), Source: src}
	return Target{GVK: deployGVK, Input: Input{Ref: ref, Desired: u}}
}

func patchTarget(typ, name string) Target {
	return Target{Input: Input{Ref: ObjectRef{Kind: typ, Name: name}, Patch: []byte(`{}`), PatchType: PatchMerge}}
}

// recordExecutors is an ExecutorFunc that remembers the live object each
// item got.
type recordExecutors struct{ lives []*unstructured.Unstructured }

func (r *recordExecutors) executor(gvk schema.GroupVersionKind, name string, live *unstructured.Unstructured) (Executor, error) {
	r.lives = append(r.lives, live)
	return newOffline(nil).Executor(gvk, name, live)
}

func TestMatchOffline(t *testing.T) {
	live := liveWeb(t)
	other := live.DeepCopy()
	other.SetNamespace("other")
	v1beta1 := live.DeepCopy()
	v1beta1.SetAPIVersion("apps/v1beta1")
	defaultNS := DefaultNamespace{Name: "default"}
	for _, tc := range []struct {
		name     string
		targets  []Target
		lives    []*unstructured.Unstructured
		ns       DefaultNamespace
		wantLive []*unstructured.Unstructured
		wantRefs []ObjectRef
		wantErr  string
	}{
		{
			name: "manifest by kind, namespace and name", targets: []Target{manifest(t, "default", "web.yaml:1")},
			lives: []*unstructured.Unstructured{other, live}, ns: defaultNS, wantLive: []*unstructured.Unstructured{live},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", Source: "web.yaml:1"}},
		},
		{
			name: "manifest without namespace goes to the default one", targets: []Target{manifest(t, "", "web.yaml:1")},
			lives: []*unstructured.Unstructured{other, live}, ns: defaultNS, wantLive: []*unstructured.Unstructured{live},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", Source: "web.yaml:1"}},
		},
		{
			name: "manifest without live object is a create", targets: []Target{manifest(t, "elsewhere", "web.yaml:1")},
			lives: []*unstructured.Unstructured{live}, ns: defaultNS, wantLive: []*unstructured.Unstructured{nil},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "elsewhere", Name: "web", Source: "web.yaml:1"}},
		},
		{
			name: "patch takes the live object's kind and name", targets: []Target{patchTarget("deployments.apps", "web")},
			lives: []*unstructured.Unstructured{live}, ns: defaultNS, wantLive: []*unstructured.Unstructured{live},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}},
		},
		{
			name: "patch with an explicit namespace skips other namespaces", targets: []Target{patchTarget("Deployment", "web")},
			lives: []*unstructured.Unstructured{live, other}, ns: DefaultNamespace{Name: "other", Explicit: true}, wantLive: []*unstructured.Unstructured{other},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "other", Name: "web"}},
		},
		{
			name: "patch to an object that is not there", targets: []Target{patchTarget("deploy", "web")},
			lives: []*unstructured.Unstructured{live}, ns: defaultNS, wantErr: "no live object deploy/web",
		},
		{
			name: "versions differ", targets: []Target{manifest(t, "default", "web.yaml:1")},
			lives: []*unstructured.Unstructured{v1beta1}, ns: defaultNS,
			wantErr: "web.yaml:1: the live object is apps/v1beta1, Kind=Deployment, the manifest apps/v1, Kind=Deployment: offline prediction cannot convert between versions",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordExecutors{}
			items, err := MatchOffline(tc.targets, NewLiveSet(tc.lives, deploymentKinds), tc.ns, newOffline(nil).Namespaced, rec.executor)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("MatchOffline error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var refs []ObjectRef
			for _, it := range items {
				refs = append(refs, it.Input.Ref)
			}
			if diff := cmp.Diff(tc.wantRefs, refs); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if len(rec.lives) != len(tc.wantLive) {
				t.Fatalf("%d executors, want %d", len(rec.lives), len(tc.wantLive))
			}
			for i := range rec.lives {
				if rec.lives[i] != tc.wantLive[i] {
					t.Errorf("item %d got live object %v, want %v", i, rec.lives[i], tc.wantLive[i])
				}
			}
		})
	}
}

// TestMatchOfflineCreateTakesTheDefaultNamespace checks that a create
// whose manifest names no namespace goes to the default one when its kind
// is namespaced (a built-in kind by this build's table, a custom resource
// by its CRD or by its live objects), as kubectl sends it, and stays
// without one when the kind is cluster-scoped or its scope is unknown.
func TestMatchOfflineCreateTakesTheDefaultNamespace(t *testing.T) {
	crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  names: {kind: Gadget, plural: gadgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
`
	tc, err := managedfields.ParseSchema([]byte(crd))
	if err != nil {
		t.Fatal(err)
	}
	withCRD, bare := newOffline(tc), newOffline(nil)
	gadget := func() Target {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}}}
		return Target{GVK: u.GroupVersionKind(), Input: Input{Ref: ObjectRef{APIVersion: "example.com/v1", Kind: "Gadget", Name: "g"}, Desired: u}}
	}
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team"}}}
	nsTarget := Target{GVK: nsObj.GroupVersionKind(), Input: Input{Ref: ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "team"}, Desired: nsObj}}
	otherGadget := gadget().Input.Desired
	otherGadget.SetName("other")
	otherGadget.SetNamespace("elsewhere")
	for _, tc := range []struct {
		name   string
		target Target
		lives  []*unstructured.Unstructured
		scope  ScopeFunc
		want   string
	}{
		{"a built-in namespaced kind", manifest(t, "", "web.yaml:1"), nil, bare.Namespaced, "team-a"},
		{"a built-in cluster-scoped kind", nsTarget, nil, bare.Namespaced, ""},
		{"a custom resource of the CRD given", gadget(), nil, withCRD.Namespaced, "team-a"},
		{"a custom resource whose kind has live objects", gadget(), []*unstructured.Unstructured{otherGadget}, bare.Namespaced, "team-a"},
		{"a custom resource of unknown scope", gadget(), nil, bare.Namespaced, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired := tc.target.Input.Desired
			items, err := MatchOffline([]Target{tc.target}, NewLiveSet(tc.lives, deploymentKinds), DefaultNamespace{Name: "team-a"}, tc.scope, (&recordExecutors{}).executor)
			if err != nil {
				t.Fatal(err)
			}
			in := items[0].Input
			if in.Ref.Namespace != tc.want || in.Desired.GetNamespace() != tc.want {
				t.Errorf("namespace: ref %q, desired %q; want %q", in.Ref.Namespace, in.Desired.GetNamespace(), tc.want)
			}
			if desired.GetNamespace() != "" {
				t.Errorf("the target's own manifest was changed: namespace %q", desired.GetNamespace())
			}
		})
	}
}

func TestMatchOfflineNamesTheTargetOfAnExecutorError(t *testing.T) {
	failing := func(schema.GroupVersionKind, string, *unstructured.Unstructured) (Executor, error) {
		return nil, errors.New("no schema")
	}
	_, err := MatchOffline([]Target{manifest(t, "default", "web.yaml:7")}, NewLiveSet(nil, deploymentKinds), DefaultNamespace{Name: "default"}, nil, failing)
	if err == nil || err.Error() != "web.yaml:7: no schema" {
		t.Fatalf("MatchOffline error = %v", err)
	}
}

// fakeCluster serves Deployments (namespaced) and Namespaces (cluster
// scoped).
type fakeCluster struct {
	mapper meta.RESTMapper
	dyn    dynamic.Interface
}

func newFakeCluster() fakeCluster {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(deployGVK, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	return fakeCluster{mapper: m, dyn: dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())}
}

func (c fakeCluster) KindFor(typ string) (schema.GroupVersionKind, error) {
	return c.mapper.KindFor(schema.GroupVersionResource{Resource: typ})
}

func (c fakeCluster) RESTMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	return c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

func (c fakeCluster) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return c.dyn.Resource(gvr)
}

func TestMatchCluster(t *testing.T) {
	ns := obj(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n")
	nsTarget := Target{GVK: ns.GroupVersionKind(), Input: Input{Ref: ObjectRef{APIVersion: "v1", Kind: "Namespace", Name: "team", Source: "ns.yaml:1"}, Desired: ns}}
	unserved := manifest(t, "default", "cj.yaml:1")
	unserved.GVK = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}
	for _, tc := range []struct {
		name     string
		targets  []Target
		ns       DefaultNamespace
		wantRefs []ObjectRef
		wantNS   []string // the desired objects' namespaces
		wantErr  string
	}{
		{
			name: "namespaced manifest without namespace goes to the default one", targets: []Target{manifest(t, "", "web.yaml:1")},
			ns:       DefaultNamespace{Name: "team"},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team", Name: "web", Source: "web.yaml:1"}}, wantNS: []string{"team"},
		},
		{
			name: "cluster-scoped manifest keeps no namespace", targets: []Target{nsTarget},
			ns:       DefaultNamespace{Name: "team", Explicit: true},
			wantRefs: []ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: "team", Source: "ns.yaml:1"}}, wantNS: []string{""},
		},
		{
			name: "patch resolves its type", targets: []Target{patchTarget("deployments", "web")},
			ns:       DefaultNamespace{Name: "default"},
			wantRefs: []ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web"}},
		},
		{
			name: "namespace other than an explicit -n", targets: []Target{manifest(t, "prod", "web.yaml:1")},
			ns: DefaultNamespace{Name: "team", Explicit: true}, wantErr: `web.yaml:1: the object's namespace "prod" does not match -n "team"`,
		},
		{
			name: "kind the cluster does not serve", targets: []Target{unserved},
			ns: DefaultNamespace{Name: "default"}, wantErr: "cj.yaml:1: the cluster does not serve batch/v1, Kind=CronJob: ",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.targets[0].Input.Desired.DeepCopy()
			items, err := MatchCluster(tc.targets, tc.ns, newFakeCluster())
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("MatchCluster error = %v, want %q...", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var refs []ObjectRef
			var nss []string
			for _, it := range items {
				refs = append(refs, it.Input.Ref)
				if it.Input.Desired != nil {
					nss = append(nss, it.Input.Desired.GetNamespace())
				}
			}
			if diff := cmp.Diff(tc.wantRefs, refs); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNS, nss); diff != "" {
				t.Errorf("desired namespaces (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.targets[0].Input.Desired); diff != "" {
				t.Errorf("MatchCluster changed the caller's desired object (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMatchClusterErrorTypes(t *testing.T) {
	_, err := MatchCluster([]Target{manifest(t, "prod", "web.yaml:1")}, DefaultNamespace{Name: "team", Explicit: true}, newFakeCluster())
	var nsErr *NamespaceError
	if !errors.As(err, &nsErr) || *nsErr != (NamespaceError{Where: "web.yaml:1", Namespace: "prod", Want: "team"}) {
		t.Errorf("MatchCluster error = %#v, want a *NamespaceError", err)
	}
	unserved := manifest(t, "default", "cj.yaml:1")
	unserved.GVK = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "CronJob"}
	if _, err := MatchCluster([]Target{unserved}, DefaultNamespace{Name: "default"}, newFakeCluster()); !meta.IsNoMatchError(err) {
		t.Errorf("MatchCluster error = %v, want it to wrap the mapper's no-match error", err)
	}
}

func TestPredictEachStopsAtTheFirstFailure(t *testing.T) {
	live := liveWeb(t)
	good, err := newOffline(nil).Executor(deployGVK, "web", live)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	bad := failingExecutor{calls: &calls}
	items := []Item{
		{Input: Input{Ref: ObjectRef{Name: "web"}, Desired: obj(t, webYAML)}, Executor: good},
		{Input: Input{Ref: ObjectRef{Name: "web"}, Desired: obj(t, webYAML)}, Executor: bad},
		{Input: Input{Ref: ObjectRef{Name: "web"}, Desired: obj(t, webYAML)}, Executor: bad},
	}
	_, err = PredictEach(context.Background(), Config{FieldManager: "ci"}, items)
	var ie *ItemError
	if !errors.As(err, &ie) || ie.Index != 1 || calls != 1 {
		t.Fatalf("PredictEach error = %v after %d calls to the failing executor, want item 1's after 1", err, calls)
	}
	res, err := PredictEach(context.Background(), Config{FieldManager: "ci"}, items[:1])
	if err != nil || len(res) != 1 {
		t.Fatalf("PredictEach = %d results, %v", len(res), err)
	}
}

// failingExecutor cannot read the live object.
type failingExecutor struct {
	Executor
	calls *int
}

func (f failingExecutor) Engine() string { return "server" }

func (f failingExecutor) Live(context.Context) (*unstructured.Unstructured, error) {
	*f.calls++
	return nil, errors.New("connection refused")
}

func TestFailOn(t *testing.T) {
	results := []Result{
		{Methods: []MethodResult{{Verdict: OK}, {Verdict: Conflict}, {Verdict: ApplyConflict}}},
		{Methods: []MethodResult{{Verdict: Clobber}, {Verdict: Invalid}, {Verdict: NotFound}, {Verdict: Unknown}, {Verdict: ServerError}}},
	}
	for _, tc := range []struct {
		flag string
		want string // the finding, "" for none
	}{
		{"none", ""},
		{"conflict", "2 predicted 409s found (--fail-on conflict)"},
		{"clobber", "1 clobber found (--fail-on clobber)"},
		{"unknown", "1 unjudged write found (--fail-on unknown)"},
		{"invalid", "2 refused writes found (--fail-on invalid)"},
		{"any", "2 predicted 409s, 1 clobber, 2 refused writes and 1 unjudged write found (--fail-on any)"},
	} {
		p, err := Findings.Parse("--fail-on", tc.flag)
		if err != nil {
			t.Fatalf("--fail-on %q: %v", tc.flag, err)
		}
		got := ""
		if err := p.Exit(Findings, Counts(results)); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("--fail-on %q: %q, want %q", tc.flag, got, tc.want)
		}
	}
	if _, err := Findings.Parse("--fail-on", "always"); err == nil {
		t.Error("--fail-on always accepted")
	}
}

// deploymentKinds stands in for pkg/cmd's resolver over live Deployments:
// the kind and its resource names, not the short name deploy.
func deploymentKinds(typ string) (schema.GroupKind, error) {
	switch typ {
	case "Deployment", "deployment", "deployments", "deployments.apps":
		return schema.GroupKind{Group: "apps", Kind: "Deployment"}, nil
	}
	return schema.GroupKind{}, fmt.Errorf("unknown resource type %q", typ)
}
