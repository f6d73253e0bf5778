package managedfields

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// duplicateScaleDeployment is a Deployment whose managedFields hold two
// entries for kubectl's Update through /scale, the earlier one owning
// .spec.replicas and the later (without a time) nothing: what a no-op
// /scale patch on a custom resource leaves (REFERENCE.md §9). Entry 2 is
// the applier of the rest of the spec.
func duplicateScaleDeployment(t *testing.T, entries ...string) *unstructured.Unstructured {
	t.Helper()
	all := map[string]string{
		"scale": `{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "subresource": "scale", "time": "2026-11-20T10:00:00Z",
		           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}`,
		"noop": `{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "subresource": "scale", "fieldsType": "FieldsV1", "fieldsV1": {}}`,
		"ci": `{"manager": "ci", "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-11-20T09:00:00Z",
		        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}}}`,
	}
	var mf []string
	for _, e := range entries {
		mf = append(mf, all[e])
	}
	return mustObj(t, `{"apiVersion": "apps/v1", "kind": "Deployment",
	  "metadata": {"name": "web", "namespace": "default", "uid": "u1", "managedFields": [`+strings.Join(mf, ",")+`]},
	  "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1"}]}}}}`)
}

// TestDuplicateEntryFollowsTheFieldManager: of two entries with one
// identity, the ownership keeps what the API server's field manager keeps,
// the last; the pair is a hazard. The field manager itself (the server's
// code, in process) is the reference: another manager's apply of
// .spec.replicas conflicts with the lone /scale entry and not with the pair.
func TestDuplicateEntryFollowsTheFieldManager(t *testing.T) {
	fm, err := NewFieldManager(BuiltinTypeConverter(), deployGVK)
	if err != nil {
		t.Fatal(err)
	}
	apply := mustObj(t, `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}, "spec": {"replicas": 5}}`)
	replicas := mustParse(t, ".spec.replicas")
	for _, tc := range []struct {
		name          string
		entries       []string
		wantOwners    []string
		wantConflict  bool
		wantDuplicate bool
	}{
		{"one /scale entry owns replicas", []string{"scale", "ci"}, []string{"kubectl/Update/scale"}, true, false},
		{"a later empty entry of the same identity hides it", []string{"scale", "ci", "noop"}, []string{}, false, true},
		{"the earlier empty entry is the one ignored", []string{"noop", "ci", "scale"}, []string{"kubectl/Update/scale"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := duplicateScaleDeployment(t, tc.entries...)
			_, err := fm.Apply(u, apply, "other", false)
			if _, conflict := Conflicts(err); conflict != tc.wantConflict || (err != nil && !conflict) {
				t.Fatalf("the field manager: apply of .spec.replicas gave %v, want conflict %v", err, tc.wantConflict)
			}
			checkBuildMatches(t, u)
			own, err := Build(u)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantOwners, managers(own.Owners(replicas))); diff != "" {
				t.Errorf("owners of .spec.replicas (-want +got):\n%s", diff)
			}
			var dups []Hazard
			for _, h := range own.Hazards() {
				if h.Type == HazardDuplicateEntry {
					dups = append(dups, h)
				}
			}
			if !tc.wantDuplicate {
				if len(dups) != 0 {
					t.Errorf("hazards %v, want no DuplicateEntry", dups)
				}
				return
			}
			if len(dups) != 1 {
				t.Fatalf("DuplicateEntry hazards %v, want one", dups)
			}
			h := dups[0]
			if got := []int{h.Owners[0].Entry, h.Owners[1].Entry}; !cmp.Equal(got, []int{0, 2}) {
				t.Errorf("hazard entries %v, want [0 2]", got)
			}
			if !strings.Contains(h.Message, "keeps only the last (entry 2)") {
				t.Errorf("message %q does not name the entry the field manager keeps", h.Message)
			}
			if lost := len(tc.wantOwners) == 0; lost != strings.Contains(h.Message, ".spec.replicas") {
				t.Errorf("message %q: names .spec.replicas, the field no one owns because of the pair: want %v", h.Message, lost)
			}
		})
	}
}
