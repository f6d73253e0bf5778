package ownersprint

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// maxLabelWidth caps the column the owners are aligned on in the tree.
const maxLabelWidth = 64

type treeLine struct {
	depth  int    // indentation, in levels below the object
	label  string // escaped
	width  int    // of the indented label, in runes
	owners string // escaped; empty for an unowned line
	count  int    // fields of a collapsed subtree (0: not collapsed)
	absent bool   // the object no longer has the field(s)
	style  output.Style
}

// Tree writes the ownership tree of every object: one line per owned field,
// with chains of unowned single-child fields joined (spec.template.spec) and a
// subtree whose owned fields all have the same owners collapsed onto one line
// ("spec  kubectl (Apply, 2m)  [12 fields]").
func Tree(w io.Writer, objs []owners.Object, opts Options) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for i, o := range objs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(output.Paint(opts.Color, output.Bold, text.Escape(describe(o))) + "\n")
		t := &treeWriter{labels: newLabeler(opts)}
		nodes := 0
		o.Ownership.Root().Walk(func(*managedfields.Node) bool { nodes++; return true })
		t.lines = make([]treeLine, 0, nodes) // at most a line a node
		for _, c := range o.Ownership.Root().Children {
			t.node(c, "", 1)
		}
		if len(t.lines) == 0 {
			b.WriteString("  (no owned fields match)\n")
		}
		width := 0
		for _, l := range t.lines {
			if l.width > width && l.width <= maxLabelWidth {
				width = l.width
			}
		}
		spaces := strings.Repeat(" ", max(width+3, 2*t.depth))
		var num []byte
		for _, l := range t.lines {
			b.WriteString(spaces[:2*l.depth])
			b.WriteString(l.label)
			if l.owners == "" {
				b.WriteByte('\n')
				continue
			}
			b.WriteString(spaces[:max(width-l.width, 0)+3])
			start, end := output.Codes(opts.Color, l.style)
			b.WriteString(start)
			b.WriteString(l.owners)
			if l.count > 0 {
				b.WriteString("  [")
				num = strconv.AppendInt(num[:0], int64(l.count), 10)
				b.Write(num)
				b.WriteString(" fields]")
			}
			if l.absent {
				b.WriteString("  (not in the object)")
			}
			b.WriteString(end)
			b.WriteByte('\n')
		}
		writeTreeHazards(b, o.Hazards, opts)
	}
	return b.Flush()
}

func writeTreeHazards(b *bufio.Writer, hs []managedfields.Hazard, opts Options) {
	if len(hs) == 0 {
		return
	}
	fmt.Fprintf(b, "  %s\n", output.Paint(opts.Color, output.Bold, "hazards:"))
	for _, h := range hs {
		fmt.Fprintf(b, "    %s %s\n", output.Paint(opts.Color, output.Yellow, string(h.Type)+":"), text.Escape(h.Message))
	}
}

// elementLabel shows a path element the way it is written in a path, minus
// the leading dot of field names.
func elementLabel(pe fieldpath.PathElement) string {
	if pe.FieldName != nil && !managedfields.BracketedName(*pe.FieldName) {
		return *pe.FieldName
	}
	return string(managedfields.AppendDisplayElement(nil, pe))
}

func joinLabel(prefix string, pe fieldpath.PathElement) string {
	if prefix == "" {
		return elementLabel(pe)
	}
	return string(managedfields.AppendDisplayElement([]byte(prefix), pe))
}

// treeWriter collects the lines of one object's tree.
type treeWriter struct {
	labels *labeler
	lines  []treeLine
	depth  int // the deepest line's
}

// ownersLabel is the escaped owner label; Escape returns printable ASCII,
// the usual manager name, as it is.
func (t *treeWriter) ownersLabel(owners []managedfields.Owner) string {
	return text.Escape(t.labels.label(owners))
}

func (t *treeWriter) add(l treeLine, owners []managedfields.Owner, present bool) {
	l.width = 2*l.depth + utf8.RuneCountInString(l.label)
	t.depth = max(t.depth, l.depth)
	if owners != nil {
		l.owners = t.ownersLabel(owners)
		switch {
		case !present:
			l.absent = true
			l.style = output.Red
		case len(owners) > 1:
			l.style = output.Yellow
		}
	}
	t.lines = append(t.lines, l)
}

func (t *treeWriter) node(n *managedfields.Node, prefix string, depth int) {
	label := joinLabel(prefix, n.Element)
	if !n.Owned() && len(n.Children) == 1 {
		t.node(n.Children[0], label, depth)
		return
	}
	if owners, present, count, ok := uniform(n); ok && count > 1 && !n.Context {
		t.add(treeLine{depth: depth, label: text.Escape(label), count: count}, owners, present)
		return
	}
	var owners []managedfields.Owner
	if n.Owned() {
		owners = n.Owners
	}
	t.add(treeLine{depth: depth, label: text.Escape(label)}, owners, n.Present)
	for _, c := range n.Children {
		t.node(c, "", depth+1)
	}
}

// uniform reports whether every owned node of n's subtree has the same
// owners and presence, and how many owned nodes there are.
func uniform(n *managedfields.Node) (owners []managedfields.Owner, present bool, count int, ok bool) {
	ok = true
	n.Walk(func(c *managedfields.Node) bool {
		if !ok {
			return false
		}
		if !c.Owned() {
			return true
		}
		count++
		if owners == nil {
			owners, present = c.Owners, c.Present
			return true
		}
		if !managedfields.SameOwners(owners, c.Owners) || c.Present != present {
			ok = false
		}
		return ok
	})
	return owners, present, count, ok && count > 0
}
