package cmdutil

import (
	"path/filepath"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/positions"
	"github.com/kubectl-rv/kubectl-rv/pkg/version"
)

// Locator places findings about the objects of manifest files (predict
// -f, owners -f) on the files' lines, for the CI formats: a field at its
// key's line and column (pkg/positions), the object at its first line.
// It parses a document when a finding about one of its objects is placed
// (positions.Index), so that a report over thousands of objects does not
// hold every document's YAML nodes at once. It is not safe for concurrent
// use.
type Locator struct {
	files map[string]*positions.Index
	dir   string
}

// NewLocator indexes the files objects.ReadFiles read; dir is the working
// directory, against which paths are made relative (as GitHub's runner
// and code scanning resolve them). A document pkg/positions cannot parse
// (objects.Read could, so this is not expected) has no positions: its
// findings fall back to their object's first line.
func NewLocator(files []objects.File, dir string) *Locator {
	l := &Locator{files: map[string]*positions.Index{}, dir: dir}
	for _, f := range files {
		if x, err := positions.NewIndex(f.Name, f.Data); err == nil {
			l.files[f.Name] = x
		}
	}
	return l
}

// Locate returns where a finding about field (a field path as the API
// server prints it; "" for the object) of the object read from src
// points: the field's line and column, or its nearest ancestor's that
// the file has, and at least the object's first line (src.Line, its
// column unknown). An object rendered from a template (helm's "# Source:",
// kustomize's origin annotation) names the template. One from standard
// input has no file, and its object's first line in the stream; one read
// from no file, no location.
func (l *Locator) Locate(src objects.Source, field string) cireport.Location {
	var p fieldpath.Path
	if field != "" {
		if parsed, err := managedfields.ParsePath(field); err == nil {
			p = parsed
		}
	}
	loc, _ := l.LocatePath(src, p)
	return loc
}

// LocatePath is Locate for a parsed field path (the empty path is the
// object). exact reports whether the location is the field's own: not an
// ancestor's, and not the object's first line standing in for a field of
// standard input. owners -o json and -o wide show only exact positions.
func (l *Locator) LocatePath(src objects.Source, p fieldpath.Path) (loc cireport.Location, exact bool) {
	if src.File == "" {
		return cireport.Location{}, false
	}
	loc = cireport.Location{File: l.rel(src.File), Line: src.Line}
	var o *positions.Object
	if f := l.files[src.File]; f != nil {
		o = f.Object(src.Line, src.Item)
	}
	if o == nil {
		return loc, false
	}
	at := o.Start
	// A line of standard input means something once the stream is gone
	// only as the object's first line (docs/positions.md), unless the
	// object names its template.
	if src.File != "-" || o.Template != nil {
		fl := o.Locate(p)
		at, exact = fl.Position, fl.Exact
	}
	if at.Known() {
		loc.Line, loc.Column = at.Line, at.Column
	} else {
		exact = false
	}
	if t := o.Template; t != nil {
		loc.Template, loc.TemplateTool = filepath.ToSlash(t.File), t.Tool
	}
	return loc, exact
}

// rel is name as the CI formats name a file: "" for standard input,
// relative to the working directory where it is inside it (a relative
// path is already), with forward slashes.
func (l *Locator) rel(name string) string {
	if name == "-" {
		return ""
	}
	if l.dir != "" && filepath.IsAbs(name) {
		if r, err := filepath.Rel(l.dir, name); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			name = r
		}
	}
	return filepath.ToSlash(name)
}

// CITool names kubectl-rv in a CI report, its version without the tag's
// "v" (SARIF asks for a version that starts with a number).
func CITool() cireport.Tool {
	return cireport.Tool{Name: "kubectl-rv", Version: strings.TrimPrefix(version.Get().Version, "v"), InformationURI: "https://github.com/kubectl-rv/kubectl-rv"}
}
