package cmdutil

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
)

const locateDeploy = `# leading comment
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: nginx
`

const locateHelm = `---
# Source: chart/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm
data:
  k: v
`

// TestLocatorLocate: a field at its key, a list item's field below its
// "- name:" line, the object at its first line for no field, an
// unparsable or absent field at the nearest place the file has, an object
// the file does not have at its Source line; paths relative to the
// working directory; standard input without a file; a helm template.
func TestLocatorLocate(t *testing.T) {
	l := NewLocator([]objects.File{
		{Name: "/work/repo/deploy/web.yaml", Data: []byte(locateDeploy)},
		{Name: "-", Data: []byte(locateHelm)},
		{Name: "broken.yaml", Data: []byte("a: [")},
	}, "/work/repo")
	web := objects.Source{File: "/work/repo/deploy/web.yaml", Line: 2, Item: -1}
	at := func(line, col int) cireport.Location {
		return cireport.Location{File: "deploy/web.yaml", Line: line, Column: col}
	}
	tests := []struct {
		name  string
		src   objects.Source
		field string
		want  cireport.Location
	}{
		{"field", web, ".spec.replicas", at(6, 3)},
		{"keyed list item's field", web, `.spec.template.spec.containers[name="web"].image`, at(11, 9)},
		{"the object", web, "", at(2, 1)},
		{"absent field: nearest ancestor", web, ".spec.paused", at(5, 1)},
		{"unparsable field: the object", web, ".spec[", at(2, 1)},
		{"object not in the file: its Source line", objects.Source{File: web.File, Line: 40, Item: -1}, ".spec", at(40, 0)},
		{"file positions cannot parse", objects.Source{File: "broken.yaml", Line: 1, Item: -1}, ".a", cireport.Location{File: "broken.yaml", Line: 1}},
		{"outside the working directory", objects.Source{File: "/elsewhere/x.yaml", Line: 3, Item: -1}, "", cireport.Location{File: "/elsewhere/x.yaml", Line: 3}},
		{"helm template on stdin", objects.Source{File: "-", Line: 3, Item: -1}, ".data.k",
			cireport.Location{Line: 8, Column: 3, Template: "chart/templates/cm.yaml", TemplateTool: "helm"}},
		{"no file", objects.Source{Item: -1}, ".spec", cireport.Location{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, l.Locate(tt.src, tt.field)); diff != "" {
				t.Errorf("Locate(%v, %q) (-want +got):\n%s", tt.src, tt.field, diff)
			}
		})
	}
	// Without the "# Source:" comment, standard input's finding is at
	// its object's first line whatever the field.
	piped := NewLocator([]objects.File{{Name: "-", Data: []byte(strings.Replace(locateHelm, "# Source", "# Not a source", 1))}}, "/work/repo")
	want := cireport.Location{Line: 3, Column: 1}
	if got := piped.Locate(objects.Source{File: "-", Line: 3, Item: -1}, ".data.k"); got != want {
		t.Errorf("standard input: %+v, want %+v", got, want)
	}
}

// TestLocatorLocatePathExact: a field the file writes is exact, at its
// key or its list item's first line; an absent field is placed at an
// ancestor but not exact; standard input without a template and an object
// the file does not have are never exact.
func TestLocatorLocatePathExact(t *testing.T) {
	l := NewLocator([]objects.File{
		{Name: "web.yaml", Data: []byte(locateDeploy)},
		{Name: "-", Data: []byte(locateDeploy)},
	}, "")
	web := objects.Source{File: "web.yaml", Line: 2, Item: -1}
	tests := []struct {
		name      string
		src       objects.Source
		field     string
		wantLine  int
		wantCol   int
		wantExact bool
	}{
		{"field", web, ".spec.replicas", 6, 3, true},
		{"keyed list item", web, `.spec.template.spec.containers[name="web"]`, 10, 9, true},
		{"the object", web, "", 2, 1, true},
		{"absent field", web, ".spec.paused", 5, 1, false},
		{"object not in the file", objects.Source{File: "web.yaml", Line: 40, Item: -1}, ".spec", 40, 0, false},
		{"standard input", objects.Source{File: "-", Line: 2, Item: -1}, ".spec.replicas", 2, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p fieldpath.Path
			if tt.field != "" {
				var err error
				if p, err = managedfields.ParsePath(tt.field); err != nil {
					t.Fatal(err)
				}
			}
			got, exact := l.LocatePath(tt.src, p)
			if got.Line != tt.wantLine || got.Column != tt.wantCol || exact != tt.wantExact {
				t.Errorf("LocatePath(%v, %s) = %d:%d exact %v, want %d:%d exact %v", tt.src, tt.field, got.Line, got.Column, exact, tt.wantLine, tt.wantCol, tt.wantExact)
			}
		})
	}
}
