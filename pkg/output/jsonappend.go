package output

import (
	"encoding/json"
	"io"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// IndentedJSONAppender is a report that writes its own indented JSON, for
// reports so large that encoding/json's reflection and re-indenting would
// dominate: AppendIndentedJSON must append exactly what
// json.MarshalIndent(r, "", "  ") returns, less what it hands to
// out.Spill (between the elements of its long lists), which goes first.
type IndentedJSONAppender interface {
	AppendIndentedJSON(b []byte, out *JSONOut) ([]byte, error)
}

// JSONOut is where the Printer writes a report that an
// IndentedJSONAppender appends: in pieces of about spillBytes (Spill), so
// that a report of megabytes (the 1 GiB log's conflicts report is 10 MB)
// is not held whole, in a buffer grown, copied and zeroed to its size, at
// the end of a run when one core works. A nil JSONOut keeps everything
// in the buffer.
type JSONOut struct {
	w   io.Writer
	err error
}

// spillBytes is how much Spill lets the buffer hold: a buffer that stays
// in the processor's cache.
const spillBytes = 64 << 10

// Spill writes b, what has been appended so far, once it holds
// spillBytes or more, and returns it emptied for what comes next; else it
// returns b as it is. A write error is kept for the Printer, and ends the
// writing.
func (o *JSONOut) Spill(b []byte) []byte {
	if o == nil || len(b) < spillBytes {
		return b
	}
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
	return b[:0]
}

// AppendJSONString appends s as encoding/json writes it; it is
// jsonvalue.AppendString, the one JSON string encoder.
func AppendJSONString(b []byte, s string) []byte { return jsonvalue.AppendString(b, s) }

// AppendJSONIndent appends a newline and the indentation of depth levels
// of json.MarshalIndent(v, "", "  ").
func AppendJSONIndent(b []byte, depth int) []byte {
	b = append(b, '\n')
	for ; depth > len(indentation)/2; depth -= len(indentation) / 2 {
		b = append(b, indentation...)
	}
	return append(b, indentation[:2*depth]...)
}

const indentation = "                                " // 16 levels

// AppendJSONKey appends the indentation, "key" and ": ".
func AppendJSONKey(b []byte, depth int, key string) []byte {
	b = AppendJSONIndent(b, depth)
	b = AppendJSONString(b, key)
	return append(b, ':', ' ')
}

// AppendMarshalIndent appends json.MarshalIndent of v as it would appear
// depth levels deep in an indented document.
func AppendMarshalIndent(b []byte, depth int, v any) ([]byte, error) {
	prefix := make([]byte, 2*depth)
	for i := range prefix {
		prefix[i] = ' '
	}
	js, err := json.MarshalIndent(v, string(prefix), "  ")
	if err != nil {
		return b, err
	}
	return append(b, js...), nil
}

// AppendJSONDocumentStart opens an indented document and writes its
// apiVersion and kind, the members every versioned schema starts with.
func AppendJSONDocumentStart(b []byte, apiVersion, kind string) []byte {
	b = append(b, '{')
	b = AppendJSONKey(b, 1, "apiVersion")
	b = AppendJSONString(b, apiVersion)
	b = append(b, ',')
	b = AppendJSONKey(b, 1, "kind")
	return AppendJSONString(b, kind)
}

// AppendMarshalField appends a comma, then key at depth and
// json.MarshalIndent of v as AppendMarshalIndent writes it: a member
// after the first of an indented object.
func AppendMarshalField(b []byte, depth int, key string, v any) ([]byte, error) {
	b = append(b, ',')
	b = AppendJSONKey(b, depth, key)
	return AppendMarshalIndent(b, depth, v)
}

// AppendJSONArray appends a JSON array of n elements whose key is at
// depth, as encoding/json indents it: null when isNil, [] when empty; elem
// appends element i, from its indentation on.
func AppendJSONArray(b []byte, depth, n int, isNil bool, elem func(b []byte, i int) ([]byte, error)) ([]byte, error) {
	switch {
	case isNil:
		return append(b, "null"...), nil
	case n == 0:
		return append(b, "[]"...), nil
	}
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = elem(b, i); err != nil {
			return nil, err
		}
	}
	b = AppendJSONIndent(b, depth)
	return append(b, ']'), nil
}
