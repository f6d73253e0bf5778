package ownersprint

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// maxLabelWidth caps the column the owners are aligned on in the tree.
const maxLabelWidth = 64

type treeLine struct {
	label  string // indented, escaped
	owners string // escaped
	style  output.Style
}

// Tree writes the ownership tree of every object: one line per owned field,
// with chains of unowned single-child fields joined (spec.template.spec) and a
// subtree whose owned fields all have the same owners collapsed onto one line
// ("spec  kubectl (Apply, 2m)  [12 fields]").
func Tree(w io.Writer, objs []Object, opts Options) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for i, o := range objs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(output.Paint(opts.Color, output.Bold, output.Escape(describe(o))) + "\n")
		var lines []treeLine
		root := o.Ownership.Root()
		labels := newLabeler(opts.Now)
		for _, c := range root.Children {
			lines = treeNode(lines, c, "", "  ", labels)
		}
		if len(lines) == 0 {
			b.WriteString("  (no owned fields match)\n")
		}
		width := 0
		for _, l := range lines {
			if n := utf8.RuneCountInString(l.label); n > width && n <= maxLabelWidth {
				width = n
			}
		}
		spaces := strings.Repeat(" ", width+3)
		for _, l := range lines {
			b.WriteString(l.label)
			if l.owners != "" {
				pad := width - utf8.RuneCountInString(l.label)
				if pad < 0 {
					pad = 0
				}
				b.WriteString(spaces[:pad+3])
				b.WriteString(output.Paint(opts.Color, l.style, l.owners))
			}
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
		fmt.Fprintf(b, "    %s %s\n", output.Paint(opts.Color, output.Yellow, string(h.Type)+":"), output.Escape(h.Message))
	}
}

// elementLabel shows a path element the way it is written in a path, minus
// the leading dot of field names.
func elementLabel(pe fieldpath.PathElement) string {
	if pe.FieldName != nil {
		return *pe.FieldName
	}
	return pe.String()
}

func joinLabel(prefix string, pe fieldpath.PathElement) string {
	if prefix == "" {
		return elementLabel(pe)
	}
	if pe.FieldName != nil {
		return prefix + "." + *pe.FieldName
	}
	return prefix + pe.String()
}

func treeNode(lines []treeLine, n *managedfields.Node, prefix, indent string, labels *labeler) []treeLine {
	label := joinLabel(prefix, n.Element)
	if !n.Owned() && len(n.Children) == 1 {
		return treeNode(lines, n.Children[0], label, indent, labels)
	}
	if owners, present, count, ok := uniform(n); ok && count > 1 && !n.Context {
		l := treeLine{label: indent + output.Escape(label), owners: output.Escape(labels.label(owners)) + fmt.Sprintf("  [%d fields]", count)}
		decorate(&l, present, owners)
		return append(lines, l)
	}
	l := treeLine{label: indent + output.Escape(label)}
	if n.Owned() {
		l.owners = output.Escape(labels.label(n.Owners))
		decorate(&l, n.Present, n.Owners)
	}
	lines = append(lines, l)
	for _, c := range n.Children {
		lines = treeNode(lines, c, "", indent+"  ", labels)
	}
	return lines
}

func decorate(l *treeLine, present bool, owners []managedfields.Owner) {
	switch {
	case !present:
		l.owners += "  (not in the object)"
		l.style = output.Red
	case len(owners) > 1:
		l.style = output.Yellow
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
