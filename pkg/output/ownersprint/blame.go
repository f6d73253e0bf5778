package ownersprint

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
	"github.com/kubectl-rv/kubectl-rv/pkg/managedfields"
	"github.com/kubectl-rv/kubectl-rv/pkg/owners"
	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

// maxCodeWidth caps the column the owner comments are aligned on.
const maxCodeWidth = 72

// HiddenValue replaces Secret values in the blame view.
const HiddenValue = redact.HiddenValue

// blameTimeLegend is the time part of the blame header's legend, by format.
var blameTimeLegend = map[TimeFormat]string{"": ", age", TimeRelative: ", age", TimeFull: ", time", TimeNone: ""}

type blameLine struct {
	code string
	note string
}

// Blame writes each object as kubectl get -o yaml does (without
// metadata.managedFields), every line followed by a comment naming the owners
// of that field and their age. The YAML is sigs.k8s.io/yaml's, the
// marshaller kubectl prints with, byte for byte: plain and quoted strings,
// key order, literal blocks and wrapped long lines are kubectl's. The
// owners are comments (at the end of a value's last line, or of a block
// scalar's header), so the output stays valid YAML: several objects are
// separate documents, the header and hazards are comment lines, and a list
// item whose owners differ from its first line's gets a comment line of its
// own ("# - owners") above it.
func Blame(w io.Writer, objs []owners.Object, opts Options) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		if err := writeBlame(b, o, opts); err != nil {
			return err
		}
	}
	return b.Flush()
}

func writeBlame(b *bufio.Writer, o owners.Object, opts Options) error {
	comment(b, describe(o)+`: each line's owners as "manager (operation[/subresource]`+blameTimeLegend[opts.Time]+`)"`)
	for _, h := range o.Hazards {
		comment(b, "hazard "+string(h.Type)+": "+h.Message)
	}
	content := withoutManagedFields(o.Object.Object)
	if isSecret(o) && !opts.ShowSecrets {
		content = redact.Secret(content, redact.Hidden)
		comment(b, "Secret values are shown as "+HiddenValue+"; add --show-secrets to see them")
	}
	text, err := kubectlYAML(content)
	if err != nil {
		return fmt.Errorf("%s: writing YAML: %w", describe(o), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(text, &doc); err != nil || len(doc.Content) != 1 {
		// sigs.k8s.io/yaml wrote it: it reads back.
		return fmt.Errorf("%s: reading back its YAML: %v", describe(o), err)
	}
	bl := &blamer{labels: newLabeler(opts), notes: make([]string, len(lines)), above: map[int][]string{}}
	bl.starts = make([]bool, len(lines)+1)
	bl.lineOf = yamlLines(text)
	bl.markStarts(doc.Content[0])
	bl.mapping(doc.Content[0], o.Ownership.Root())
	bl.write(b, lines)
	return nil
}

// withoutManagedFields returns obj without metadata.managedFields (a
// shallow copy where it differs).
func withoutManagedFields(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	if _, has := md["managedFields"]; !has {
		return obj
	}
	return jsonvalue.WithoutMeta(obj, "managedFields")
}

func comment(b *bufio.Writer, s string) {
	b.WriteString("# " + commentSafe(s) + "\n")
}

func isSecret(o owners.Object) bool {
	return redact.IsSecret(o.Object.Object)
}

// blamer places owner notes on the lines of one object's YAML. Lines are
// 1-based in yaml.v3's nodes and 0-based here.
type blamer struct {
	labels *labeler
	// notes holds each line's note, empty for none.
	notes []string
	// above holds, per line, the notes of list items that start on it and
	// whose owners differ from the line's: comment lines written above it.
	above map[int][]string
	// starts marks the lines a key or list item starts on: a scalar ends on
	// the line before the next start.
	starts []bool
	// lineOf maps yaml.v3's 0-based line numbers to lines.
	lineOf []int
}

// yamlLines maps the 0-based line numbers yaml.v3 gives (it also breaks
// lines on CR, NEL, LS and PS, which kubectl's YAML may hold raw inside a
// quoted string) to the 0-based lines of text split on LF.
func yamlLines(text []byte) []int {
	out := []int{0}
	line := 0
	s := string(text)
	for i, r := range s {
		switch {
		case r == '\n':
			line++
			out = append(out, line)
		case r == '\r' && !strings.HasPrefix(s[i+1:], "\n"), r == 0x85, r == 0x2028, r == 0x2029:
			out = append(out, line)
		}
	}
	return out
}

// line returns the line, 0-based, of a yaml.v3 node.
func (bl *blamer) line(n *yamlv3.Node) int {
	if i := n.Line - 1; i >= 0 && i < len(bl.lineOf) {
		return bl.lineOf[i]
	}
	return 0
}

func (bl *blamer) markStarts(n *yamlv3.Node) {
	switch n.Kind {
	case yamlv3.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			bl.starts[bl.line(n.Content[i])] = true
			bl.markStarts(n.Content[i+1])
		}
	case yamlv3.SequenceNode:
		for _, c := range n.Content {
			bl.starts[bl.line(c)] = true
			bl.markStarts(c)
		}
	}
}

// noteLine is the line a value's note goes on: the key's (or item's) line
// for a collection or a block scalar (after its | header), else the
// scalar's last line, so that a wrapped scalar stays whole.
func (bl *blamer) noteLine(v *yamlv3.Node, keyLine int) int {
	if v.Kind != yamlv3.ScalarNode || v.Style&(yamlv3.LiteralStyle|yamlv3.FoldedStyle) != 0 {
		return keyLine
	}
	end := bl.line(v)
	for end+1 < len(bl.notes) && !bl.starts[end+1] {
		end++
	}
	return end
}

func (bl *blamer) label(n *managedfields.Node) string {
	if n == nil || !n.Owned() {
		return ""
	}
	return bl.labels.label(n.Owners)
}

func fieldChild(n *managedfields.Node, name string) *managedfields.Node {
	if n == nil {
		return nil
	}
	return n.Child(fieldpath.FieldNameElement(name))
}

func (bl *blamer) mapping(m *yamlv3.Node, n *managedfields.Node) {
	if m.Kind != yamlv3.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		c := fieldChild(n, k.Value)
		if note := bl.label(c); note != "" {
			bl.notes[bl.noteLine(v, bl.line(k))] = note
		}
		bl.value(v, c)
	}
}

func (bl *blamer) value(v *yamlv3.Node, n *managedfields.Node) {
	switch v.Kind {
	case yamlv3.MappingNode:
		bl.mapping(v, n)
	case yamlv3.SequenceNode:
		bl.sequence(v, n)
	}
}

// sequence notes a list's items: an item's owners are those of the
// ownership nodes matched to its index (by key, value or index).
func (bl *blamer) sequence(s *yamlv3.Node, n *managedfields.Node) {
	byIndex := map[int][]*managedfields.Node{}
	if n != nil {
		for _, c := range n.Children {
			if c.ItemIndex >= 0 {
				byIndex[c.ItemIndex] = append(byIndex[c.ItemIndex], c)
			}
		}
	}
	for i, it := range s.Content {
		var item *managedfields.Node
		var owners []managedfields.Owner
		for _, c := range byIndex[i] {
			if item == nil {
				item = c
			}
			owners = mergeOwners(owners, c.Owners)
		}
		line := bl.line(it)
		if len(owners) > 0 {
			note := bl.labels.label(owners)
			if it.Kind == yamlv3.ScalarNode {
				bl.notes[bl.noteLine(it, line)] = note
			} else {
				// The item's first line belongs to its first field (or
				// item): its owners go on a comment line above.
				bl.above[line] = append(bl.above[line], note)
			}
		}
		bl.value(it, item)
		if notes := bl.above[line]; len(notes) > 0 && notes[len(notes)-1] == bl.notes[line] {
			// The first field has the item's owners: one note says it.
			bl.above[line] = notes[:len(notes)-1]
		}
	}
}

// write writes the lines with their notes aligned on one column.
func (bl *blamer) write(b *bufio.Writer, lines []string) {
	width := 0
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); bl.notes[i] != "" && n > width && n <= maxCodeWidth {
			width = n
		}
	}
	for i, l := range lines {
		for _, note := range bl.above[i] {
			indent := len(l) - len(strings.TrimLeft(l, " "))
			b.WriteString(l[:indent] + "# - " + commentSafe(note) + "\n")
		}
		b.WriteString(l)
		if note := bl.notes[i]; note != "" {
			pad := max(width-utf8.RuneCountInString(l), 0)
			b.WriteString(strings.Repeat(" ", pad) + "  # " + commentSafe(note))
		}
		b.WriteByte('\n')
	}
}

func mergeOwners(a, b []managedfields.Owner) []managedfields.Owner {
	out := append([]managedfields.Owner(nil), a...)
	for _, o := range b {
		dup := false
		for _, x := range out {
			dup = dup || x.Entry == o.Entry
		}
		if !dup {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Entry < out[j].Entry })
	return out
}

// doubleQuote writes s as a YAML double-quoted scalar, escaping everything
// YAML does not allow raw or reads as a line break, and terminal controls.
func doubleQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case !yamlPrintable(r):
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlPrintable is YAML's printable set minus the line breaks
// (NEL, LS, PS) and the byte-order mark.
func yamlPrintable(r rune) bool {
	switch {
	case r >= 0x20 && r <= 0x7E:
		return true
	case r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF:
		return false
	case r >= 0xA0 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// commentSafe keeps a comment on one line and free of control sequences.
func commentSafe(s string) string {
	ok := true
	for _, r := range s {
		if !yamlPrintable(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	q := doubleQuote(s)
	return q[1 : len(q)-1]
}
