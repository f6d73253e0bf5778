package positions

import (
	"bytes"
	"errors"
	"io"

	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

// Index finds the objects of a file as File does, but parses a document
// only when one of its objects is asked for, and keeps only the last
// document it parsed. A caller that asks for the objects in file order
// (a report over every object of -f) parses each document once and holds
// one document's YAML nodes at a time, not the whole file's.
type Index struct {
	name string
	// docs are the documents by the line Object.Document names: their
	// first line that is not blank or a comment.
	docs map[int]indexed
	// parsed is the Document line of the last document parsed (when
	// have), and objs its objects (none when it did not parse).
	have   bool
	parsed int
	objs   []*Object
}

// indexed is one document's bytes and the line they start on.
type indexed struct {
	data []byte
	line int
}

// NewIndex indexes data, the bytes of the file name (a YAML stream or
// JSON), by document; it does not parse them. A document that does not
// parse has no objects.
func NewIndex(name string, data []byte) (*Index, error) {
	x := &Index{name: name, docs: map[int]indexed{}}
	lines := input.NewLines(name, bytes.NewReader(data), len(data)+1)
	lines.Separator = input.YAMLSeparator
	for {
		doc, line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return x, nil
		}
		if err != nil {
			return nil, err
		}
		// Next's document is valid until its next call.
		x.docs[line+input.LeadingComments(doc)] = indexed{data: bytes.Clone(doc), line: line}
	}
}

// Object is File.Object: the object read from the document starting on
// line at List index item (-1 for none), or nil when there is none.
func (x *Index) Object(line, item int) *Object {
	if !x.have || x.parsed != line {
		d, ok := x.docs[line]
		if !ok {
			return nil
		}
		objs, err := parseDocument(x.name, d.data, d.line)
		if err != nil {
			objs = nil
		}
		x.have, x.parsed, x.objs = true, line, objs
	}
	for _, o := range x.objs {
		if o.Item == item {
			return o
		}
	}
	return nil
}
