package positions_test

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/positions"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var fuzzSeeds = []string{
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
	"# Source: c/templates/x.yaml\napiVersion: v1\nkind: A\n---\n---\nkind: B\napiVersion: v1\nspec: {replicas: 2, l: [1, 2]}\n",
	`{"apiVersion": "v1", "kind": "A", "spec": {"containers": [{"name": "web"}]}}`,
	"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: A}\n- apiVersion: v1\n  kind: B\n  x: [a, {b: c}]\n",
	"apiVersion: v1\nkind: A\nm: &m {a: 1, b: 2}\nn:\n  <<: *m\n  b: 3\nl: [*m, *m]\n",
	"apiVersion: v1\nkind: A\ndata: {a: \"x\"}\r  \nb: 1\n",
	"apiVersion: v1\nkind: A\ndata:\n  yes: 1\n  0x10: 2\n  ~x: 3\n  1.5: 4\n",
	"kind: A\napiVersion: v1\nx: 1\n<<: [{x: 2}, {x: 3, y: 4}]\n",
	"\ufeffapiVersion: v1\r\nkind: A\r\nx: |\r\n  a\r\n",
}

// FuzzPositions holds Parse to what pkg/objects (sigs.k8s.io/yaml)
// decodes from the same bytes: the same objects in the same order, each
// starting inside the input, and every field the decoder gives an object
// found, at a position inside the input. An Index finds each object where
// Parse does.
func FuzzPositions(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<14 {
			return
		}
		objs, err := objects.Decode("f.yaml", data)
		file, perr := positions.Parse("f.yaml", data)
		if err != nil {
			return
		}
		if perr != nil {
			t.Fatalf("objects decoded %d objects; Parse: %v", len(objs), perr)
		}
		if len(file.Objects) != len(objs) {
			t.Fatalf("Parse found %d objects, objects.Decode %d", len(file.Objects), len(objs))
		}
		index, err := positions.NewIndex("f.yaml", data)
		if err != nil {
			t.Fatalf("NewIndex: %v", err)
		}
		lines := bytes.Split(data, []byte("\n"))
		for i, o := range objs {
			p := file.Objects[i]
			if p.Document != o.Source.Line || p.Item != o.Source.Item {
				t.Fatalf("object %d: Parse says line %d item %d, objects %s", i, p.Document, p.Item, o.Source)
			}
			if x := index.Object(o.Source.Line, o.Source.Item); x == nil || x.Start != p.Start {
				t.Fatalf("object %d: the Index finds %v at %s, Parse %v", i, x, o.Source, p.Start)
			}
			inside(t, lines, p.Start, "Start")
			budget := 256
			walk(o.Object.Object, fieldpath.Path{}, &budget, func(path fieldpath.Path) {
				loc := p.Locate(path)
				if !loc.Exact {
					t.Fatalf("object %d: %s not found (only %s)", i, path, loc.Path)
				}
				inside(t, lines, loc.Position, path.String())
			})
		}
	})
}

// inside fails t unless pos is a character of lines, or the end of one.
func inside(t *testing.T, lines [][]byte, pos positions.Position, what string) {
	t.Helper()
	if pos.Line < 1 || pos.Line > len(lines) || pos.Column < 1 ||
		pos.Column > utf8.RuneCount(lines[pos.Line-1])+1 {
		t.Fatalf("%s: position %d:%d is outside the input (%d lines)", what, pos.Line, pos.Column, len(lines))
	}
}

// walk calls fn with the path of every field and list item of v, at most
// budget of them.
func walk(v any, path fieldpath.Path, budget *int, fn func(fieldpath.Path)) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if *budget <= 0 {
				return
			}
			*budget--
			p := append(path.Copy(), fieldpath.FieldNameElement(k))
			fn(p)
			walk(c, p, budget, fn)
		}
	case []any:
		for i, c := range v {
			if *budget <= 0 {
				return
			}
			*budget--
			p := append(path.Copy(), fieldpath.PathElement{Index: &i})
			fn(p)
			walk(c, p, budget, fn)
		}
	}
}
