package leases

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
)

var candidateGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1beta1", Resource: "leasecandidates"}

func candidate(name, leaseName string, renew float64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1beta1", "kind": "LeaseCandidate",
		"metadata": map[string]any{"name": name, "namespace": "kube-system"},
		"spec": map[string]any{"leaseName": leaseName, "renewTime": at(renew).Format(micro), "binaryVersion": "1.36.3",
			"emulationVersion": "1.36", "strategy": "OldestEmulationVersion"},
	}}
}

func annotated(kind, name, value string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Annotations: map[string]string{AnnotationKey: value}}}
}

func TestNow(t *testing.T) {
	scheme := runtime.NewScheme()
	listKinds := map[schema.GroupVersionResource]string{LeaseResource: "LeaseList", candidateGVR: "LeaseCandidateList"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, listKinds,
		lease("sched", "node-1", 15, 0, 10), lease("free", "", 15, 0, 0), candidate("node-1", "sched", 9), candidate("node-2", "sched", 8))
	mscheme := metadatafake.NewTestScheme()
	_ = metav1.AddMetaToScheme(mscheme)
	md := metadatafake.NewSimpleMetadataClient(mscheme,
		annotated("ConfigMap", "old-lock", `{"holderIdentity":"pod-x","leaseDurationSeconds":30,"acquireTime":"2026-11-27T09:59:00Z","renewTime":"2026-11-27T10:00:00Z","leaderTransitions":3}`),
		&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "kube-system"}})

	for _, tc := range []struct {
		name       string
		candidates *schema.GroupVersionResource
		want       map[string][]string
	}{
		{"with the LeaseCandidate API", &candidateGVR, map[string][]string{"sched": {"node-1", "node-2"}}},
		{"without it", nil, map[string][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			cfg.CandidateResource = tc.candidates
			cfg.Stream.Now = func() time.Time { return at(12) }
			rep, err := Now(context.Background(), Clients{Dynamic: dyn, Metadata: md}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			var names []string
			for _, l := range rep.Locks {
				names = append(names, l.String())
				for _, c := range l.Candidates {
					got[l.Name] = append(got[l.Name], c.Name)
				}
			}
			if diff := cmp.Diff([]string{"kube-system/free", "ConfigMap kube-system/old-lock", "kube-system/sched"}, names); diff != "" {
				t.Errorf("locks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
			sched := rep.Locks[2]
			if diff := cmp.Diff([]any{"node-1", Duration(2 * time.Second), Duration(13 * time.Second), false},
				[]any{sched.Holder, *sched.RenewAge, *sched.Slack, sched.Expired}); diff != "" {
				t.Errorf("sched (-want +got):\n%s", diff)
			}
			old := rep.Locks[1]
			if diff := cmp.Diff([]any{"pod-x", int32(3), Duration(18 * time.Second)}, []any{old.Holder, *old.Transitions, *old.Slack}); diff != "" {
				t.Errorf("annotation lock (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFindCandidateResource(t *testing.T) {
	for _, tc := range []struct {
		name      string
		resources []*metav1.APIResourceList
		want      *schema.GroupVersionResource
	}{
		{"none served", []*metav1.APIResourceList{{GroupVersion: "coordination.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "leases"}}}}, nil},
		{"v1alpha2 only", []*metav1.APIResourceList{{GroupVersion: "coordination.k8s.io/v1alpha2", APIResources: []metav1.APIResource{{Name: "leasecandidates"}}}},
			&schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1alpha2", Resource: "leasecandidates"}},
		{"v1beta1 preferred", []*metav1.APIResourceList{
			{GroupVersion: "coordination.k8s.io/v1alpha2", APIResources: []metav1.APIResource{{Name: "leasecandidates"}}},
			{GroupVersion: "coordination.k8s.io/v1beta1", APIResources: []metav1.APIResource{{Name: "leasecandidates"}}}}, &candidateGVR},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: tc.resources}}
			got, err := FindCandidateResource(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// strictDiscovery answers a request for a group version with a plain
// error, as a cached discovery client does for one the server does not
// serve.
type strictDiscovery struct{ *fakediscovery.FakeDiscovery }

func (strictDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return nil, errors.New("not found")
}

// TestFindCandidateResourceAsksOnlyServedVersions: a cluster without the
// LeaseCandidate API is not an error, whatever discovery answers for the
// versions it does not serve.
func TestFindCandidateResourceAsksOnlyServedVersions(t *testing.T) {
	d := strictDiscovery{&fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "coordination.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "leases"}}}}}}}
	got, err := FindCandidateResource(d)
	if err != nil || got != nil {
		t.Errorf("FindCandidateResource() = %v, %v; want nil, nil", got, err)
	}
}

func TestRecordErrors(t *testing.T) {
	u := lease("x", "a", 15, 0, 0)
	u.Object["spec"].(map[string]any)["renewTime"] = "yesterday"
	if _, err := LeaseRecord(u); err == nil {
		t.Errorf("LeaseRecord accepted renewTime yesterday")
	}
	if _, err := AnnotationRecord("{"); err == nil {
		t.Errorf("AnnotationRecord accepted {")
	}
}
