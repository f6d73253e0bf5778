package ownersprint

import (
	"strconv"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/output/cireport"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
)

// Locate returns where the field p of o (the empty path: the object) is
// written in the file o was read from, and whether that is the field's own
// place rather than an ancestor's or the object's first line
// (docs/positions.md). It returns the zero Location for an object of the
// cluster. The command gives it for objects read with -f; nil means no
// positions.
type Locate func(o owners.Object, p fieldpath.Path) (at cireport.Location, exact bool)

// field is where p of o is written when the file has it there: its line and
// column, or the zero Location (no file, not written, standard input).
func (l Locate) field(o owners.Object, p fieldpath.Path) cireport.Location {
	if l == nil {
		return cireport.Location{}
	}
	at, exact := l(o, p)
	if !exact || at.Column == 0 {
		return cireport.Location{}
	}
	return at
}

// nearest is where a finding about p of o points: the field, its nearest
// written ancestor, the object's first line, or the zero Location.
func (l Locate) nearest(o owners.Object, p fieldpath.Path) cireport.Location {
	if l == nil {
		return cireport.Location{}
	}
	at, _ := l(o, p)
	return at
}

// positionText is a field's place for the -o wide column: "web.yaml:12:5",
// or "-" where the file does not write it.
func positionText(at cireport.Location) string {
	if at.File == "" || at.Line == 0 {
		return "-"
	}
	return at.File + ":" + strconv.Itoa(at.Line) + ":" + strconv.Itoa(at.Column)
}
