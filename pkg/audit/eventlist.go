package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unsafe"
)

// eventList is the part of an audit.k8s.io/v1 EventList the receiver
// reads: the items are passed on as they came.
type eventList struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Items      []json.RawMessage `json:"items"`
}

// splitBatch reads an EventList body into its items (each compact JSON:
// one line), as splitBatchJSON does. Most bodies are read by
// scanEventList, the narrow scanner of log lines (scanner) applied to the
// list, whose items are then slices of body, not copies; a body it is
// not sure of goes to encoding/json (splitBatchJSON), so that what is
// accepted, and the errors, are encoding/json's. FuzzSplitBatch holds the
// two equal.
func splitBatch(body []byte, items [][]byte) ([][]byte, error) {
	if items, ok := scanEventList(body, items[:0]); ok {
		return items, nil
	}
	return splitBatchJSON(body)
}

// listKeys are the EventList's keys scanEventList reads.
var listKeys = []string{"kind", "apiVersion", "items"}

// scanEventList splits an audit.k8s.io/v1 EventList into its items,
// appended to items. ok is false for a body that is not one, or that
// encoding/json must judge: a key given twice or matched only when case
// is folded or escapes are read, a kind or apiVersion that is not a plain
// string, items that are not an array, anything after the list but white
// space, nesting deeper than maxScanDepth. Items are validated, not
// decoded: the line decoder does that.
func scanEventList(body []byte, items [][]byte) (_ [][]byte, ok bool) {
	if len(body) == 0 {
		return items, false
	}
	// body is only read here, and items are slices of body itself.
	s := scanner{s: unsafe.String(unsafe.SliceData(body), len(body))}
	var kind, apiVersion string
	var seen uint32
	s.ws()
	ok = s.object(func(key string) bool {
		i, ok := s.lookup(key, listKeys, &seen)
		switch {
		case !ok:
			return false
		case i == 0:
			kind, ok = s.plainString()
		case i == 1:
			apiVersion, ok = s.plainString()
		case i == 2:
			items, ok = s.items(body, items)
		default:
			ok = s.skip()
		}
		return ok
	})
	s.ws()
	return items, ok && s.i == len(s.s) && kind == "EventList" && apiVersion == "audit.k8s.io/v1"
}

// plainString reads a string without escapes, as it is.
func (s *scanner) plainString() (string, bool) {
	s.ws()
	start := s.i + 1
	esc, _, ok := s.scanString()
	if !ok || esc {
		return "", false
	}
	return s.s[start : s.i-1], true
}

// items reads an array, appending each value to items as a slice of
// body (compacted when it spans lines).
func (s *scanner) items(body []byte, items [][]byte) ([][]byte, bool) {
	s.ws()
	if !s.byte('[') {
		return items, false
	}
	if s.depth++; s.depth > maxScanDepth {
		return items, false
	}
	s.ws()
	if s.byte(']') {
		s.depth--
		return items, true
	}
	for {
		s.ws()
		start := s.i
		if !s.skip() {
			return items, false
		}
		items = append(items, compactItem(body[start:s.i]))
		s.ws()
		if s.byte(']') {
			s.depth--
			return items, true
		}
		if !s.byte(',') {
			return items, false
		}
	}
}

// compactItem is a valid JSON value as one line: compacted if it holds a line
// end (white space between tokens: a string cannot hold one).
func compactItem(it []byte) []byte {
	if bytes.IndexByte(it, '\n') < 0 && bytes.IndexByte(it, '\r') < 0 {
		return it
	}
	var b bytes.Buffer
	// it is valid JSON: Compact does not fail.
	_ = json.Compact(&b, it)
	return b.Bytes()
}

// splitBatchJSON decodes an EventList body with encoding/json into its
// items, each one line of compact JSON.
func splitBatchJSON(body []byte) ([][]byte, error) {
	var list eventList
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&list); err != nil {
		return nil, fmt.Errorf("not an audit EventList: %v", err)
	}
	if list.Kind != "EventList" || list.APIVersion != "audit.k8s.io/v1" {
		return nil, fmt.Errorf("kind %q, apiVersion %q: want an audit.k8s.io/v1 EventList (--audit-webhook-version=audit.k8s.io/v1)", list.Kind, list.APIVersion)
	}
	items := make([][]byte, len(list.Items))
	for i, it := range list.Items {
		items[i] = compactItem(it)
	}
	return items, nil
}

// readBody reads r to its end into buf's memory (grown as needed; size,
// the Content-Length when known, is made room for at once).
func readBody(r io.Reader, buf []byte, size int64) ([]byte, error) {
	buf = buf[:0]
	if size > 0 && size < MaxBatchBytes && int64(cap(buf)) <= size {
		// One byte more, for the read that finds the end.
		buf = make([]byte, 0, size+1)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, fmt.Errorf("not an audit EventList: %v", err)
		}
	}
}

// eventTypeMeta starts a log line's event: a list's items carry no kind
// or apiVersion (the API server leaves them to the list), a log's events
// do.
const eventTypeMeta = `{"kind":"Event","apiVersion":"audit.k8s.io/v1"`

// appendLine appends item (compact JSON) to dst as a log line: with kind
// and apiVersion first, unless it starts with its kind already.
func appendLine(dst, item []byte) []byte {
	switch {
	case bytes.HasPrefix(item, []byte(`{"kind":`)):
		dst = append(dst, item...)
	case len(item) > 0 && item[0] == '{':
		rest := item[1:]
		dst = append(dst, eventTypeMeta...)
		if r := strings.TrimLeft(unsafe.String(unsafe.SliceData(rest), len(rest)), " \t"); r == "" || r[0] != '}' {
			dst = append(dst, ',')
		}
		dst = append(dst, rest...)
	default:
		// Not an object: the decoder says so.
		dst = append(dst, item...)
	}
	return append(dst, '\n')
}
