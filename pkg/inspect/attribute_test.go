package inspect

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

func entry(t *testing.T, m mf) managedfields.Entry {
	t.Helper()
	tm := metav1.NewTime(t0.Add(time.Duration(m.sec) * time.Second))
	e, err := managedfields.DecodeEntry(0, metav1.ManagedFieldsEntry{Manager: m.manager, Operation: metav1.ManagedFieldsOperationType(m.op), APIVersion: "apps/v1", Subresource: m.sub, Time: &tm, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(m.fields)}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func entries(t *testing.T, ms ...mf) []managedfields.Entry {
	var out []managedfields.Entry
	for _, m := range ms {
		out = append(out, entry(t, m))
	}
	return out
}

func path(elems ...any) fieldpath.Path {
	p, err := fieldpath.MakePath(elems...)
	if err != nil {
		panic(err)
	}
	return p
}

func TestAttribute(t *testing.T) {
	replicas := path("spec", "replicas")
	labelB := path("metadata", "labels", "b")
	args := path("spec", "args", 1)
	containerImage := path("spec", "containers", &value.FieldList{{Name: "name", Value: value.NewValueInterface("web")}}, "image")
	tests := []struct {
		name      string
		prev, cur []mf
		changed   []fieldpath.Path
		want      Writer
	}{
		{name: "new entry", prev: []mf{{"a", "Update", "", 0, fCreate}}, cur: []mf{{"a", "Update", "", 0, `{}`}, {"b", "Update", "", 5, fCreate}}, changed: []fieldpath.Path{replicas},
			want: Writer{Manager: "b", Operation: "Update"}},
		{name: "time moved", prev: []mf{{"a", "Apply", "", 0, fCreate}, {"b", "Update", "status", 0, fReady}}, cur: []mf{{"a", "Apply", "", 0, fCreate}, {"b", "Update", "status", 3, fReady}}, changed: []fieldpath.Path{path("status", "readyReplicas")},
			want: Writer{Manager: "b", Operation: "Update", Subresource: "status"}},
		{name: "set grew without time moving", prev: []mf{{"a", "Update", "", 1, `{}`}, {"b", "Update", "", 1, fCreate}}, cur: []mf{{"a", "Update", "", 1, fCreate}, {"b", "Update", "", 1, `{}`}}, changed: []fieldpath.Path{replicas},
			want: Writer{Manager: "a", Operation: "Update"}},
		{name: "sole owner", prev: []mf{{"a", "Update", "", 1, fCreate}}, cur: []mf{{"a", "Update", "", 1, fCreate}}, changed: []fieldpath.Path{replicas},
			want: Writer{Manager: "a", Operation: "Update", Reason: ReasonSoleOwner}},
		{name: "creating the labels map does not own other labels", prev: []mf{{"a", "Update", "", 1, fLabelsA}, {"b", "Apply", "", 1, `{"f:metadata":{"f:labels":{"f:b":{}}}}`}}, cur: []mf{{"a", "Update", "", 1, fLabelsA}, {"b", "Apply", "", 1, `{"f:metadata":{"f:labels":{"f:b":{}}}}`}}, changed: []fieldpath.Path{labelB},
			want: Writer{Manager: "b", Operation: "Apply", Reason: ReasonSoleOwner}},
		{name: "atomic list owned whole", prev: []mf{{"a", "Update", "", 1, `{"f:spec":{"f:args":{}}}`}}, cur: []mf{{"a", "Update", "", 1, `{"f:spec":{"f:args":{}}}`}}, changed: []fieldpath.Path{args},
			want: Writer{Manager: "a", Operation: "Update", Reason: ReasonSoleOwner}},
		{name: "keyed item", prev: []mf{{"a", "Update", "", 1, `{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}`}}, cur: []mf{{"a", "Update", "", 1, `{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{}}}}}`}}, changed: []fieldpath.Path{containerImage},
			want: Writer{Manager: "a", Operation: "Update", Reason: ReasonSoleOwner}},
		{name: "co-owners and no time moved", prev: []mf{{"a", "Apply", "", 1, fCreate}, {"b", "Apply", "", 1, fCreate}}, cur: []mf{{"a", "Apply", "", 1, fCreate}, {"b", "Apply", "", 1, fCreate}}, changed: []fieldpath.Path{replicas},
			want: Writer{Reason: ReasonTimeNotMoved}},
		{name: "two moved, one owns the change", prev: []mf{{"a", "Update", "", 0, fCreate}, {"b", "Update", "", 0, fReady}}, cur: []mf{{"a", "Update", "", 5, fCreate}, {"b", "Update", "", 5, fReady}}, changed: []fieldpath.Path{replicas},
			want: Writer{Manager: "a", Operation: "Update"}},
		{name: "two moved, both own the changes", prev: []mf{{"a", "Update", "", 0, fCreate}, {"b", "Update", "", 0, fReady}}, cur: []mf{{"a", "Update", "", 5, fCreate}, {"b", "Update", "status", 5, fReady}}, changed: []fieldpath.Path{replicas, path("status", "readyReplicas")},
			want: Writer{Reason: ReasonSeveral, Candidates: []string{"a", "b (status)"}}},
		{name: "a removed field is owned by its owner before the write", prev: []mf{{"a", "Update", "", 1, fCreate}, {"kcm", "Update", "status", 1, fStatusBoth}}, cur: []mf{{"a", "Update", "", 1, fCreate}, {"kcm", "Update", "status", 1, fReady}}, changed: []fieldpath.Path{path("status", "updatedReplicas")},
			want: Writer{Manager: "kcm", Operation: "Update", Subresource: "status", Reason: ReasonSoleOwner}},
		{name: "a removed and a changed field", prev: []mf{{"a", "Update", "", 1, fCreate}, {"kcm", "Update", "status", 1, fStatusBoth}}, cur: []mf{{"a", "Update", "", 1, fCreate}, {"kcm", "Update", "status", 1, fReady}}, changed: []fieldpath.Path{path("status", "readyReplicas"), path("status", "updatedReplicas")},
			want: Writer{Manager: "kcm", Operation: "Update", Subresource: "status", Reason: ReasonSoleOwner}},
		{name: "status fields nobody owns: the only /status writer", prev: []mf{{"a", "Update", "", 1, fCreate}, {"kcm", "Update", "status", 1, fReady}}, cur: []mf{{"a", "Update", "", 1, fCreate}, {"kcm", "Update", "status", 1, fReady}}, changed: []fieldpath.Path{path("status", "observedGeneration")},
			want: Writer{Manager: "kcm", Operation: "Update", Subresource: "status", Reason: ReasonStatusWriter}},
		{name: "status fields nobody owns, two /status writers", prev: []mf{{"kcm", "Update", "status", 1, fReady}, {"op", "Update", "status", 1, `{}`}}, cur: []mf{{"kcm", "Update", "status", 1, fReady}, {"op", "Update", "status", 1, `{}`}}, changed: []fieldpath.Path{path("status", "observedGeneration")},
			want: Writer{Reason: ReasonTimeNotMoved}},
		{name: "no managedFields", prev: nil, cur: nil, changed: []fieldpath.Path{replicas}, want: Writer{Reason: ReasonNoManagedFields}},
		{name: "nothing changed", prev: []mf{{"a", "Update", "", 1, fCreate}}, cur: []mf{{"a", "Update", "", 1, fCreate}}, want: Writer{Reason: ReasonNoFieldChange}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Attribute(entries(t, tt.prev...), entries(t, tt.cur...), tt.changed)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriterString(t *testing.T) {
	got := []string{
		Writer{Manager: "kcm", Subresource: "status"}.String(),
		Writer{Reason: ReasonFirstSight}.String(),
		Writer{}.String(),
	}
	if want := "kcm (status)|? first sight|?"; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}
