package positions

import (
	"bytes"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// lineMap turns the line and column go.yaml.in/yaml/v3 gives a node of a
// document into a Position in the file. YAML breaks lines at "\n", and
// also at a lone "\r" and at U+0085, U+2028 and U+2029, which editors,
// diffs and CI annotations do not count: a document that holds one of
// those has a table of where each of YAML's lines starts.
type lineMap struct {
	// offset is the file line the document starts on, minus one.
	offset int
	// starts[i] is where YAML's line i+1 starts: its line in the document
	// and the characters before it on that line. nil when YAML's lines are
	// the file's.
	starts []Position
}

func newLineMap(data []byte, line int) lineMap {
	m := lineMap{offset: line - 1}
	if !bytes.ContainsAny(data, "\r\u0085\u2028\u2029") {
		return m
	}
	m.starts = []Position{{Line: 1}}
	cur := Position{Line: 1}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		i += size
		switch {
		case r == '\n':
			cur = Position{Line: cur.Line + 1}
			m.starts = append(m.starts, cur)
		case r == '\r' && i < len(data) && data[i] == '\n':
			// "\r\n" is one break, counted at the "\n".
			cur.Column++
		case r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029':
			cur.Column++
			m.starts = append(m.starts, cur)
		default:
			cur.Column++
		}
	}
	return m
}

// pos is where n is in the file.
func (m lineMap) pos(n *yaml.Node) Position {
	if n.Line <= 0 {
		return Position{}
	}
	if m.starts == nil || n.Line > len(m.starts) {
		return Position{Line: m.offset + n.Line, Column: n.Column}
	}
	s := m.starts[n.Line-1]
	return Position{Line: m.offset + s.Line, Column: s.Column + n.Column}
}
