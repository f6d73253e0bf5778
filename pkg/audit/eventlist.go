package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unsafe"
)

// listItem is one item of an EventList, as eachItem hands it on.
type listItem struct {
	// raw is the item as compact JSON (one line): a slice of the body, or
	// of its own memory when it had to be compacted.
	raw []byte
	// scanned says that the scanner read the item where it stands in the
	// body, as scanEvent reads a line: ev, kind and apiVersion are then
	// what it read, and typeMeta which of kind (1) and apiVersion (2) the
	// item names itself.
	scanned          bool
	typeMeta         uint32
	kind, apiVersion string
	ev               Event
}

// eachItem hands each item of an audit.k8s.io/v1 EventList body to fn, in
// order. Most bodies are read by scanEventList, the narrow scanner of log
// lines (scanner) applied to the list, which reads each item as it would
// the event of a line; a body it is not sure of goes to encoding/json
// (eachItemJSON), after reset has been called to forget the items handed
// on so far, so that what is accepted, and the errors, are
// encoding/json's. FuzzSplitBatch holds the two equal.
func eachItem(body []byte, memo *valueMemo, fn func(*listItem), reset func()) error {
	if scanEventList(body, memo, fn) {
		return nil
	}
	reset()
	return eachItemJSON(body, fn)
}

// listKeys are the EventList's keys scanEventList reads.
var listKeys = []string{"kind", "apiVersion", "items"}

// scanEventList hands each item of an audit.k8s.io/v1 EventList to fn,
// and says whether the body is one. It is false for a body that is not,
// or that encoding/json must judge: a key given twice or matched only
// when case is folded or escapes are read, a kind or apiVersion that is
// not a plain string, items that are not an array, anything after the
// list but white space, nesting deeper than maxScanDepth. Items are read
// as events where the scanner can (listItem.scanned), else validated.
func scanEventList(body []byte, memo *valueMemo, fn func(*listItem)) (ok bool) {
	if len(body) == 0 {
		return false
	}
	// body is only read here, and items are slices of body itself.
	s := scanner{s: unsafe.String(unsafe.SliceData(body), len(body)), memo: memo}
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
			ok = s.items(body, fn)
		default:
			ok = s.skip()
		}
		return ok
	})
	s.ws()
	return ok && s.i == len(s.s) && kind == "EventList" && apiVersion == "audit.k8s.io/v1"
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

// items reads an array, handing each value to fn: an object read as an
// event (a scanner of its own, as scanEvent starts one for a line) where
// the scanner can, any value validated and skipped otherwise.
func (s *scanner) items(body []byte, fn func(*listItem)) bool {
	s.ws()
	if !s.byte('[') {
		return false
	}
	if s.depth++; s.depth > maxScanDepth {
		return false
	}
	s.ws()
	if s.byte(']') {
		s.depth--
		return true
	}
	var it listItem
	for {
		s.ws()
		start := s.i
		it.scanned = false
		if s.i < len(s.s) && s.s[s.i] == '{' {
			is := scanner{s: s.s, i: s.i, memo: s.memo, inList: true}
			var top topFields
			if is.object(func(key string) bool { return top.field(&is, key) }) {
				top.finish(&it.ev)
				it.scanned, it.typeMeta, it.kind, it.apiVersion = true, top.seen&3, top.kind, top.apiVersion
				s.i = is.i
			}
		}
		if !it.scanned && !s.skip() {
			return false
		}
		it.raw = compactItem(body[start:s.i])
		fn(&it)
		s.ws()
		if s.byte(']') {
			s.depth--
			return true
		}
		if !s.byte(',') {
			return false
		}
	}
}

// compactItem is a valid JSON value as one line: compacted if it holds a
// line end (white space between tokens: a string cannot hold one). An
// item longer than MaxLineBytes is left as it is, for its length to
// refuse it, rather than copied.
func compactItem(it []byte) []byte {
	if len(it) > MaxLineBytes || bytes.IndexByte(it, '\n') < 0 && bytes.IndexByte(it, '\r') < 0 {
		return it
	}
	var b bytes.Buffer
	// it is valid JSON: Compact does not fail.
	_ = json.Compact(&b, it)
	return b.Bytes()
}

// listString is an EventList's kind or apiVersion, decoded as
// encoding/json decodes a string field (null leaves it as it is, another
// type is an error), except a string too long to be the one wanted,
// which is not copied.
type listString struct {
	s    string
	long bool
}

func (v *listString) UnmarshalJSON(b []byte) error {
	if len(b) > 128 && b[0] == '"' {
		v.s, v.long = "", true
		return nil
	}
	if b[0] != 'n' {
		v.long = false
	}
	return json.Unmarshal(b, &v.s)
}

// listItems is an EventList's items as encoding/json hands them to
// UnmarshalJSON: a slice of the body, not a copy (null is none, as for a
// slice field; another type is an error).
type listItems []byte

func (v *listItems) UnmarshalJSON(b []byte) error {
	switch b[0] {
	case 'n':
		*v = nil
	case '[':
		*v = b
	default:
		return fmt.Errorf("items: %s is not an array", jsonKind(b[0]))
	}
	return nil
}

// jsonKind names the kind of the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// listHead is an EventList as eachItemJSON reads it: encoding/json finds
// the keys (case folded, the last of a key given twice), the items are
// left where they are.
type listHead struct {
	Kind       listString `json:"kind"`
	APIVersion listString `json:"apiVersion"`
	Items      listItems  `json:"items"`
}

// eachItemJSON reads an EventList body with encoding/json and hands each
// of its items to fn, each one line of compact JSON. It accepts what
// decoding into struct{Kind, APIVersion string; Items []json.RawMessage}
// accepts, with the same items, without copying them or decoding a long
// kind.
func eachItemJSON(body []byte, fn func(*listItem)) error {
	var list listHead
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("not an audit EventList: %v", err)
	}
	if kind, apiVersion := list.Kind.s, list.APIVersion.s; list.Kind.long || list.APIVersion.long || kind != "EventList" || apiVersion != "audit.k8s.io/v1" {
		return fmt.Errorf("kind %.40q, apiVersion %.40q: want an audit.k8s.io/v1 EventList (--audit-webhook-version=audit.k8s.io/v1)", kind, apiVersion)
	}
	var it listItem
	eachElement(list.Items, func(v []byte) {
		it.raw = compactItem(v)
		fn(&it)
	})
	return nil
}

// eachElement hands fn each value of arr, a JSON array that encoding/json
// has validated, as a slice of it: the values are found by their depth
// and strings alone, however deep they nest.
func eachElement(arr []byte, fn func([]byte)) {
	if len(arr) == 0 {
		return
	}
	i := 1
	for {
		for i < len(arr) && isSpace(arr[i]) {
			i++
		}
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		start, depth := i, 0
	value:
		for ; i < len(arr); i++ {
			switch arr[i] {
			case '"':
				i = stringEnd(arr, i)
			case '[', '{':
				depth++
			case ']', '}':
				if depth == 0 {
					break value
				}
				depth--
			case ',':
				if depth == 0 {
					break value
				}
			}
		}
		fn(bytes.TrimRight(arr[start:i], " \t\r\n"))
		if i >= len(arr) || arr[i] == ']' {
			return
		}
		i++
	}
}

// stringEnd is the index of the quote that ends the valid JSON string
// starting at arr[i].
func stringEnd(arr []byte, i int) int {
	for i++; i < len(arr); i++ {
		switch arr[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

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
		dst = append(dst, eventTypeMeta...)
		if needsComma(item) {
			dst = append(dst, ',')
		}
		dst = append(dst, item[1:]...)
	default:
		// Not an object: the decoder says so.
		dst = append(dst, item...)
	}
	return append(dst, '\n')
}

// needsComma says whether an object item has a member to put after
// kind and apiVersion.
func needsComma(item []byte) bool {
	i := 1
	for i < len(item) && (item[i] == ' ' || item[i] == '\t') {
		i++
	}
	return i < len(item) && item[i] != '}'
}

// lineLen is the length of appendLine's line for item, its line end
// included.
func lineLen(item []byte) int {
	switch {
	case bytes.HasPrefix(item, []byte(`{"kind":`)) || len(item) == 0 || item[0] != '{':
		return len(item) + 1
	case needsComma(item):
		return len(eventTypeMeta) + len(item) + 1
	}
	return len(eventTypeMeta) + len(item)
}
