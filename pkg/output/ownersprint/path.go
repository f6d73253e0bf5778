package ownersprint

import (
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
)

// eachDisplayField calls fn for every owned node of o, depth first in tree
// order, with its path as managedfields.AppendDisplayElement writes it; the path is
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
			buf = managedfields.AppendDisplayElement(buf, c.Element)
			walk(c)
			buf = buf[:mark]
		}
	}
	walk(o.Root())
}
