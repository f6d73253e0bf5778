package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// The exports of cloud log services that --audit-log reads besides the API
// server's own log, recognised by their first bytes (exportKind).
const (
	// exportAWSEvents is what aws logs filter-log-events (and
	// get-log-events) print: {"events": [{"message": "EVENT", ...}, ...],
	// ...}, each message an audit event unchanged (EKS control-plane
	// logging, log streams kube-apiserver-audit-*).
	exportAWSEvents = "aws logs filter-log-events"
	// exportAWSQuery is what aws logs get-query-results prints for a Logs
	// Insights query that returns @message: {"results": [[{"field":
	// "@message", "value": "EVENT"}, ...], ...], ...}.
	exportAWSQuery = "aws logs get-query-results"
)

// exportKind names the export prefix starts (its first bytes, after any
// white space), or "" for a log of JSON lines. An audit event's first key
// is kind; an AWS export's is events or results; a JSON array is
// recognised by its first entry's keys (arrayKind).
func exportKind(prefix []byte) string {
	prefix = bytes.TrimLeft(prefix, " \t\r\n")
	if len(prefix) == 0 || prefix[0] != '{' && prefix[0] != '[' {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(prefix))
	t, err := dec.Token()
	if err == nil && t == json.Delim('[') {
		return arrayKind(dec)
	}
	if err != nil || t != json.Delim('{') {
		return ""
	}
	key, err := dec.Token()
	if err != nil {
		return ""
	}
	switch key {
	case "events":
		return exportAWSEvents
	case "results":
		return exportAWSQuery
	}
	return ""
}

// exportReader reads an export and yields its audit events as JSON lines,
// remembering each event's line in the export (lines) so that errors
// name it.
type exportReader struct {
	kind  string
	dec   *json.Decoder
	count *lineCounter
	buf   bytes.Buffer
	// lines[i] is the export's line of the i-th event yielded.
	lines []int
	// state: 0 before the top object, 1 in it, 2 done.
	state int
	inArr bool
	// line is the line of the last event's text.
	line int
	err  error
}

func newExportReader(r io.Reader, kind string) *exportReader {
	c := &lineCounter{r: r}
	return &exportReader{kind: kind, dec: json.NewDecoder(c), count: c}
}

// exportError is a malformed export, at a line of it.
type exportError struct {
	line int
	msg  string
}

func (e *exportError) Error() string { return e.msg }

func (x *exportReader) fail(format string, args ...any) error {
	x.err = &exportError{line: x.count.lineAt(x.dec.InputOffset()), msg: fmt.Sprintf("%s output: ", x.kind) + fmt.Sprintf(format, args...)}
	return x.err
}

// Read yields the events, one line each.
func (x *exportReader) Read(p []byte) (int, error) {
	for x.buf.Len() == 0 {
		if x.err != nil {
			return 0, x.err
		}
		if err := x.next(); err != nil {
			if err == io.EOF {
				x.err = io.EOF
			}
			return 0, x.err
		}
	}
	return x.buf.Read(p)
}

// next puts the next event's line in buf, or returns io.EOF at the end.
func (x *exportReader) next() error {
	if x.state == 0 {
		if x.array() {
			if t, err := x.dec.Token(); err != nil || t != json.Delim('[') {
				return x.fail("want a JSON array: %v", tokenErr(t, err))
			}
			x.inArr = true
		} else if t, err := x.dec.Token(); err != nil || t != json.Delim('{') {
			return x.fail("want a JSON object: %v", tokenErr(t, err))
		}
		x.state = 1
	}
	for {
		if x.state == 2 {
			return io.EOF
		}
		if x.inArr {
			if !x.dec.More() {
				if _, err := x.dec.Token(); err != nil { // ]
					return x.fail("cut short: %v", err)
				}
				x.inArr = false
				if x.array() {
					x.state = 2
				}
				continue
			}
			msg, err := x.item()
			if err != nil {
				return err
			}
			if msg == "" {
				continue
			}
			x.lines = append(x.lines, x.line)
			x.buf.WriteString(msg)
			x.buf.WriteByte('\n')
			return nil
		}
		if !x.dec.More() {
			if _, err := x.dec.Token(); err != nil {
				return x.fail("cut short: %v", err)
			}
			x.state = 2
			continue
		}
		key, err := x.dec.Token()
		if err != nil {
			return x.fail("cut short: %v", err)
		}
		if key == "events" && x.kind == exportAWSEvents || key == "results" && x.kind == exportAWSQuery {
			if t, err := x.dec.Token(); err != nil || t != json.Delim('[') {
				return x.fail("%q is not a list: %v", key, tokenErr(t, err))
			}
			x.inArr = true
			continue
		}
		var skip json.RawMessage
		if err := x.dec.Decode(&skip); err != nil {
			return x.fail("cut short or not JSON: %v", err)
		}
	}
}

// item reads one element of the list: the event's text ("" for a query
// row without @message), and remembers the line of that text.
func (x *exportReader) item() (string, error) {
	if x.array() {
		return x.entry()
	}
	if x.kind == exportAWSEvents {
		msg, found, err := x.object("message", "")
		switch {
		case err != nil:
			return "", x.fail("an event is cut short or not JSON: %v", err)
		case !found:
			return "", x.fail("an event has no message")
		}
		return msg, nil
	}
	if t, err := x.dec.Token(); err != nil || t != json.Delim('[') {
		return "", x.fail("a result row is not a list of fields: %v", tokenErr(t, err))
	}
	msg, found := "", false
	for x.dec.More() {
		v, ok, err := x.object("value", "@message")
		if err != nil {
			return "", x.fail("a result row is cut short or not a list of fields: %v", err)
		}
		if ok {
			msg, found = v, true
		}
	}
	if _, err := x.dec.Token(); err != nil {
		return "", x.fail("a result row is cut short: %v", err)
	}
	if !found {
		return "", x.fail("a result row has no @message field: give the query | fields @message")
	}
	return msg, nil
}

// array says whether the export is a JSON array of entries.
func (x *exportReader) array() bool {
	return x.kind == exportGcloud || x.kind == exportAz
}

// entry reads one entry of an array export and turns it into an event's
// line ("" for an entry that is not a Kubernetes API request); its line
// is the line the entry starts on.
func (x *exportReader) entry() (string, error) {
	var raw json.RawMessage
	if err := x.dec.Decode(&raw); err != nil {
		return "", x.fail("an entry is cut short or not JSON: %v", err)
	}
	x.line = x.count.lineAt(x.dec.InputOffset()) - bytes.Count(raw, []byte{'\n'})
	convert := gkeLine
	if x.kind == exportAz {
		convert = azLine
	}
	line, err := convert(raw)
	switch {
	case errors.Is(err, errNotKubernetes):
		return "", nil
	case err != nil:
		x.err = &exportError{line: x.line, msg: fmt.Sprintf("%s output: %v", x.kind, err)}
		return "", x.err
	}
	return line, nil
}

// object reads one JSON object and returns its string member key, when
// it has one and, if field is set, its member "field" is field (a Logs
// Insights {"field": F, "value": V}); the line of that member is
// remembered for the event (x.lines).
func (x *exportReader) object(key, field string) (value string, found bool, err error) {
	if t, err := x.dec.Token(); err != nil || t != json.Delim('{') {
		return "", false, fmt.Errorf("want an object: %s", tokenErr(t, err))
	}
	line, name := 0, ""
	for x.dec.More() {
		k, err := x.dec.Token()
		if err != nil {
			return "", false, err
		}
		switch k {
		case key, "field":
			var s string
			if err := x.dec.Decode(&s); err != nil {
				return "", false, err
			}
			if k == "field" {
				name = s
				continue
			}
			value, found, line = oneLine(s), true, x.count.lineAt(x.dec.InputOffset())
		default:
			var skip json.RawMessage
			if err := x.dec.Decode(&skip); err != nil {
				return "", false, err
			}
		}
	}
	if _, err := x.dec.Token(); err != nil {
		return "", false, err
	}
	if field != "" && name != field {
		return "", false, nil
	}
	if found {
		x.line = line
	}
	return value, found, nil
}

// oneLine keeps an event on one line (a message may end in a newline).
func oneLine(s string) string {
	return string(bytes.TrimRight([]byte(s), "\r\n"))
}

func tokenErr(t json.Token, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("found %v", t)
}

// lineCounter counts the newlines of what is read through it, remembering
// where they are until lineAt has looked past them (its offsets only grow).
type lineCounter struct {
	r       io.Reader
	read    int64
	line    int // lines before newlines[0]
	offsets []int64
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			c.offsets = append(c.offsets, c.read+int64(i))
		}
	}
	c.read += int64(n)
	return n, err
}

// lineAt is the 1-based line of offset.
func (c *lineCounter) lineAt(offset int64) int {
	i := 0
	for i < len(c.offsets) && c.offsets[i] < offset {
		i++
	}
	c.line += i
	c.offsets = c.offsets[i:]
	return c.line + 1
}

// exportPeek is how much of a source is looked at to recognise an export.
const exportPeek = 4096

// isExport says whether the file f starts as an export (read, not mapped).
func isExport(f *os.File) bool {
	var prefix [exportPeek]byte
	n, _ := f.ReadAt(prefix[:], 0)
	return exportKind(prefix[:n]) != ""
}
