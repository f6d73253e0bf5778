package positions

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// describe is an object's place and those of the fields at paths, in
// words, so that objects of Parse and of an Index compare.
func describe(t *testing.T, o *Object, paths []string) string {
	t.Helper()
	if o == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "start %d:%d doc %d item %d", o.Start.Line, o.Start.Column, o.Document, o.Item)
	if o.Template != nil {
		fmt.Fprintf(&b, " template %s:%s", o.Template.Tool, o.Template.File)
	}
	for _, s := range paths {
		p := fieldpath.Path{}
		if s != "" {
			var err error
			if p, err = managedfields.ParsePath(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		l := o.Locate(p)
		fmt.Fprintf(&b, "; %s at %d:%d exact %v", s, l.Line, l.Column, l.Exact)
	}
	return b.String()
}

// TestIndexFindsWhatParseFinds: over one stream of every kind of document
// the other tests read (a helm source comment, a List, JSON, flow style,
// anchors and aliases, comments before a document), an Index yields the
// objects Parse does, with the same positions, asked in file order and in
// reverse (each document parsed again when it is no longer the last).
func TestIndexFindsWhatParseFinds(t *testing.T) {
	input := strings.Join([]string{"# Source: shop/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n", listDoc, deployment, multiDoc, jsonDoc, flowDoc, aliasDoc}, "---\n")
	paths := []string{"", ".spec.replicas", ".metadata.name", ".spec.selector.matchLabels.app", `.spec.template.spec.containers[name="web"]`, `.spec.template.spec.containers[name="web"].image`}
	f, err := Parse("all.yaml", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Objects) < 8 {
		t.Fatalf("Parse found %d objects; the stream has more", len(f.Objects))
	}
	x, err := NewIndex("all.yaml", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	forward := slices.Clone(f.Objects)
	reverse := slices.Clone(f.Objects)
	slices.Reverse(reverse)
	for name, order := range map[string][]*Object{"file order": forward, "reverse": reverse} {
		for _, o := range order {
			want := describe(t, o, paths)
			got := describe(t, x.Object(o.Document, o.Item), paths)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: object at line %d item %d (-Parse +Index):\n%s", name, o.Document, o.Item, diff)
			}
		}
	}
	if o := x.Object(2, 5); o != nil {
		t.Errorf("Object(2, 5) = %v, want nil: that document has no List", o)
	}
	if o := x.Object(3, -1); o != nil {
		t.Errorf("Object(3, -1) = %v, want nil: no document starts on line 3", o)
	}
}

// TestIndexLeavesOutOnlyTheBrokenDocument: a document that does not
// parse has no objects, and the others keep theirs (Parse fails the whole
// file).
func TestIndexLeavesOutOnlyTheBrokenDocument(t *testing.T) {
	input := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [unclosed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: v}\n"
	if _, err := Parse("mixed.yaml", []byte(input)); err == nil {
		t.Fatal("Parse accepted a broken document")
	}
	x, err := NewIndex("mixed.yaml", []byte(input))
	if err != nil {
		t.Fatal(err)
	}
	if o := x.Object(5, -1); o != nil {
		t.Errorf("the broken document gave an object: %v", o)
	}
	got := describe(t, x.Object(7, -1), []string{".data.k"})
	if want := "start 7:1 doc 7 item -1; .data.k at 10:8 exact true"; got != want {
		t.Errorf("the document after it: %s, want %s", got, want)
	}
	if got := describe(t, x.Object(1, -1), []string{".metadata.name"}); got != "start 1:1 doc 1 item -1; .metadata.name at 3:12 exact true" {
		t.Errorf("the document before it: %s", got)
	}
}
