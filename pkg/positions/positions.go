package positions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kubectl-rv/kubectl-rv/pkg/input"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"go.yaml.in/yaml/v3"
)

// Position is a place in the file that was read: a line counted from 1,
// and a column counted from 1 in characters (as YAML counts them, and as
// GitHub annotations do). The zero Position means "not known".
type Position struct {
	Line, Column int
}

// Known reports whether p names a line.
func (p Position) Known() bool { return p.Line > 0 }

// File is the objects of one file, in the order pkg/objects decodes them.
type File struct {
	// Name is the file as the caller named it ("-" is standard input).
	Name string
	// Objects holds one entry per object objects.Decode yields.
	Objects []*Object
}

// Object is one object of a file: where it starts and, through Locate,
// where each of its fields is.
type Object struct {
	// Start is the object's first line: its first key, or the item line of
	// an object inside a List ("- apiVersion: v1").
	Start Position
	// Document is the line objects.Source.Line names: the document's first
	// line that is not blank or a comment.
	Document int
	// Item is the object's index in a List, or -1 (objects.Source.Item).
	Item int
	// Template is the template the object was rendered from, or nil.
	Template *Template

	root  *yaml.Node
	lines lineMap
}

// Object returns the object read from the document starting on line
// (objects.Source.Line) at List index item (objects.Source.Item, -1 for
// none), or nil when there is none.
func (f *File) Object(line, item int) *Object {
	for _, o := range f.Objects {
		if o.Document == line && o.Item == item {
			return o
		}
	}
	return nil
}

// Parse places the objects of data, the bytes of the file name (a YAML
// stream or JSON) that the caller has read through pkg/input. Malformed
// YAML is an error naming name:line.
func Parse(name string, data []byte) (*File, error) {
	f := &File{Name: name}
	lines := input.NewLines(name, bytes.NewReader(data), len(data)+1)
	lines.Separator = input.YAMLSeparator
	for {
		doc, line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return f, nil
		}
		if err != nil {
			return nil, err
		}
		objs, err := parseDocument(name, doc, line)
		if err != nil {
			return nil, err
		}
		f.Objects = append(f.Objects, objs...)
	}
}

// parseDocument parses one document of the stream, which starts on line
// of the file. Like sigs.k8s.io/yaml, it reads the first YAML document of
// data and no further.
func parseDocument(name string, data []byte, line int) ([]*Object, error) {
	lead := input.LeadingComments(data)
	if lead > bytes.Count(data, []byte("\n")) {
		// Only blank and comment lines: pkg/objects skips the document
		// unparsed, whatever bytes its comments hold.
		return nil, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(firstDocument(data), &root); err != nil {
		return nil, syntaxError(name, newLineMap(data, line), line+lead, err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || isNull(root.Content[0]) {
		return nil, nil
	}
	d := &document{
		lines:    newLineMap(data, line),
		first:    line + lead,
		template: helmSource(data),
		budget:   len(data) + 1,
	}
	if err := d.expand(root.Content[0], -1, 0); err != nil {
		return nil, fmt.Errorf("%s:%d: invalid YAML: %w", input.Display(name), d.first, err)
	}
	return d.objects, nil
}

// firstDocument cuts data before its second YAML document, which yaml/v2
// never reads, but which yaml/v3 scans a token into (and may fail on)
// while it looks for comments after the first. A document marker ("---"
// or "..." at the start of a line, then a blank or the line's end) ends
// any scalar, so it ends the document wherever it is.
func firstDocument(data []byte) []byte {
	content := false
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data) - off
		}
		line := data[off : off+end]
		switch {
		case content && isMarker(line, "..."):
			return data[:off]
		case isMarker(line, "---"):
			if content {
				return data[:off]
			}
			content = true
		default:
			t := bytes.TrimSpace(line)
			content = content || len(t) > 0 && t[0] != '#' && t[0] != '%'
		}
		off += end + 1
	}
	return data
}

// isMarker reports whether line begins with the document marker m.
func isMarker(line []byte, m string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(m))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r')
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// syntaxError rewrites a YAML parser error, whose line counts from the
// start of the document, into "file:line: invalid YAML: reason", the line
// counted from the start of the file, as pkg/objects reports it.
func syntaxError(name string, lines lineMap, first int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := first
	if m := yamlLine().FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		line = lines.pos(&yaml.Node{Line: n, Column: 1}).Line
		msg = msg[:m[0]] + msg[m[1]:]
	}
	msg = strings.TrimLeft(msg, ": ")
	return fmt.Errorf("%s:%d: invalid YAML: %s", input.Display(name), line, text.Escape(msg))
}
