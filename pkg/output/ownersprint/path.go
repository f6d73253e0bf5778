package ownersprint

import (
	"strconv"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// bracketName reports whether a field name is shown as ["name"]: when it
// holds a dot, a bracket or a backslash (.metadata.annotations.a.b/c would
// read as three fields), or is blank.
func bracketName(name string) bool {
	return strings.TrimSpace(name) == "" || strings.ContainsAny(name, ".[]\\")
}

// appendDisplayElement appends pe as the tree and table views show it: as
// the API server writes paths in conflict messages (.image,
// [name="nginx"]), except that a field name bracketName picks is written
// ["deployment.kubernetes.io/revision"], so that the path is unambiguous
// and reads back (--field, managedfields.ParsePath) as the same field.
func appendDisplayElement(b []byte, pe fieldpath.PathElement) []byte {
	if pe.FieldName != nil && bracketName(*pe.FieldName) {
		b = append(b, '[')
		b = strconv.AppendQuote(b, *pe.FieldName)
		return append(b, ']')
	}
	return managedfields.AppendElementString(b, pe)
}

// eachDisplayField calls fn for every owned node of o, depth first in tree
// order, with its path as appendDisplayElement writes it; the path is
// built as the walk descends, each element written once.
func eachDisplayField(o *managedfields.Ownership, fn func(n *managedfields.Node, path string)) {
	var (
		buf  []byte
		walk func(n *managedfields.Node)
	)
	walk = func(n *managedfields.Node) {
		if n.Owned() {
			fn(n, string(buf))
		}
		for _, c := range n.Children {
			mark := len(buf)
			buf = appendDisplayElement(buf, c.Element)
			walk(c)
			buf = buf[:mark]
		}
	}
	walk(o.Root())
}

// appendDisplayPath appends n's path as eachDisplayField writes it.
func appendDisplayPath(b []byte, n *managedfields.Node) []byte {
	for _, pe := range n.Path() {
		b = appendDisplayElement(b, pe)
	}
	return b
}
