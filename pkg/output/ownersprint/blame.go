package ownersprint

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

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

// Blame writes each object as YAML (without metadata.managedFields), every
// line followed by a comment naming the owners of that field and their age.
// The output is valid YAML: several objects are separate documents, the
// header and the hazards are comments, and every string is written plain only
// when that is unambiguous, else double-quoted with escapes.
func Blame(w io.Writer, objs []owners.Object, opts Options) error {
	b := bufio.NewWriterSize(w, 64<<10)
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		writeBlame(b, o, opts)
	}
	return b.Flush()
}

func writeBlame(b *bufio.Writer, o owners.Object, opts Options) {
	comment(b, describe(o)+`: each line's owners as "manager (operation[/subresource]`+blameTimeLegend[opts.Time]+`)"`)
	for _, h := range o.Hazards {
		comment(b, "hazard "+string(h.Type)+": "+h.Message)
	}
	content := o.Object.Object
	if isSecret(o) && !opts.ShowSecrets {
		content = redact.Secret(content, redact.Hidden)
		comment(b, "Secret values are shown as "+HiddenValue+"; add --show-secrets to see them")
	}
	bl := &blamer{labels: newLabeler(opts), lines: make([]blameLine, 0, countValues(content))}
	bl.mapEntries(content, o.Ownership.Root(), "", "", "", true)
	width := 0
	for _, l := range bl.lines {
		if n := utf8.RuneCountInString(l.code); l.note != "" && n > width && n <= maxCodeWidth {
			width = n
		}
	}
	for _, l := range bl.lines {
		b.WriteString(l.code)
		if l.note != "" {
			pad := width - utf8.RuneCountInString(l.code)
			if pad < 0 {
				pad = 0
			}
			b.WriteString(strings.Repeat(" ", pad) + "  # " + commentSafe(l.note))
		}
		b.WriteByte('\n')
	}
}

func comment(b *bufio.Writer, s string) {
	b.WriteString("# " + commentSafe(s) + "\n")
}

func isSecret(o owners.Object) bool {
	return redact.IsSecret(o.Object.Object)
}

type blamer struct {
	labels *labeler
	lines  []blameLine
}

func (bl *blamer) add(code, note string) {
	bl.lines = append(bl.lines, blameLine{code: code, note: note})
}

func (bl *blamer) note(n *managedfields.Node) string {
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

// mapEntries writes a non-empty map's entries at indent; the first line
// starts with first (indent, or the "- " of a list item) and carries
// itemNote, the owners of the list item the map is.
func (bl *blamer) mapEntries(m map[string]any, n *managedfields.Node, indent, first, itemNote string, top bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lead := first
	for i, k := range keys {
		v := m[k]
		if top && k == "metadata" {
			if md, ok := v.(map[string]any); ok {
				if _, has := md["managedFields"]; has {
					md2 := make(map[string]any, len(md))
					for mk, mv := range md {
						if mk != "managedFields" {
							md2[mk] = mv
						}
					}
					v = md2
				}
			}
		}
		note := bl.note(fieldChild(n, k))
		if i == 0 && itemNote != "" {
			if note != itemNote {
				// The item's owners get a line of their own: "- # owners".
				bl.add(strings.TrimRight(lead, " "), itemNote)
				lead = indent
			}
		}
		bl.keyValue(lead, indent, k, v, fieldChild(n, k), note)
		lead = indent
	}
}

func (bl *blamer) keyValue(lead, indent, key string, v any, n *managedfields.Node, note string) {
	k := quoteScalar(key)
	switch t := v.(type) {
	case map[string]any:
		if len(t) > 0 {
			bl.add(lead+k+":", note)
			bl.mapEntries(t, n, indent+"  ", indent+"  ", "", false)
			return
		}
	case []any:
		if len(t) > 0 {
			bl.add(lead+k+":", note)
			bl.list(t, n, indent)
			return
		}
	}
	bl.add(lead+k+": "+scalarText(v), note)
}

// list writes a non-empty list's items at indent, kubectl style (the
// dashes under the key).
func (bl *blamer) list(l []any, n *managedfields.Node, indent string) {
	byIndex := map[int][]*managedfields.Node{}
	if n != nil {
		for _, c := range n.Children {
			if c.ItemIndex >= 0 {
				byIndex[c.ItemIndex] = append(byIndex[c.ItemIndex], c)
			}
		}
	}
	for i, it := range l {
		var item *managedfields.Node
		var owners []managedfields.Owner
		for _, c := range byIndex[i] {
			if item == nil {
				item = c
			}
			owners = mergeOwners(owners, c.Owners)
		}
		note := ""
		if len(owners) > 0 {
			note = bl.labels.label(owners)
		}
		switch t := it.(type) {
		case map[string]any:
			if len(t) > 0 {
				bl.mapEntries(t, item, indent+"  ", indent+"- ", note, false)
				continue
			}
		case []any:
			if len(t) > 0 {
				bl.add(indent+"-", note)
				bl.list(t, item, indent+"  ")
				continue
			}
		}
		bl.add(indent+"- "+scalarText(it), note)
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

// scalarText writes a scalar (or an empty map or list) as YAML.
func scalarText(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "{}"
	case []any:
		return "[]"
	case string:
		return quoteScalar(t)
	case bool:
		return strconv.FormatBool(t)
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	case int32:
		return strconv.FormatInt(int64(t), 10)
	case float64:
		return floatText(t)
	case float32:
		return floatText(float64(t))
	}
	return quoteScalar(fmt.Sprint(v))
}

func floatText(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// yaml11Words are plain words YAML 1.1 parsers read as booleans or null.
var yaml11Words = map[string]bool{
	"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true, "~": true,
}

// quoteScalar writes s plain when no YAML parser can read it as anything
// but that string, else double-quoted with escapes.
func quoteScalar(s string) string {
	if plainSafe(s) {
		return s
	}
	return doubleQuote(s)
}

func plainSafe(s string) bool {
	if s == "" || len(s) > 200 || yaml11Words[strings.ToLower(s)] {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '_') {
		return false
	}
	last := s[len(s)-1]
	if last == ' ' || last == ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '/' || c == '@' || c == '+' || c == '=' || c == '~' || c == '(' || c == ')':
		case c == ':':
			if i+1 < len(s) && s[i+1] == ' ' {
				return false
			}
		case c == ' ':
			if i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '#') {
				return false
			}
		default:
			return false
		}
	}
	return true
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

// countValues counts the map entries and list items in v, about one line
// of YAML each.
func countValues(v any) int {
	n := 0
	switch t := v.(type) {
	case map[string]any:
		for _, c := range t {
			n += 1 + countValues(c)
		}
	case []any:
		for _, c := range t {
			n += 1 + countValues(c)
		}
	}
	return n
}
