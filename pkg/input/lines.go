package input

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxDocument is the most one document may hold: one YAML or JSON
// document of a manifest (a List is one), a scenario, one line of a
// recording, a patch. It is far above any one object the API server
// stores (etcd refuses requests over 1.5 MiB by default) and bounds what a
// wrong file costs: /dev/zero, or a FIFO fed without end.
const MaxDocument = 64 << 20

// ErrTooLarge is what a *TooLargeError wraps, for errors.Is.
var ErrTooLarge = errors.New("over the size cap")

// TooLargeError is a document over the cap.
type TooLargeError struct {
	// Name is the file as the user named it ("-" is standard input), or
	// empty when the caller names it.
	Name string
	// Line is the line the document starts on (0 when unknown).
	Line int
	// Document is the document's number in the file, counting from 1
	// (0 when the file is one document).
	Document int
	// Unit is what the cap applies to: "document" (the default), "line".
	Unit string
	// Fix says what to do about it; when empty, split a document, or
	// check the file.
	Fix string
	// Max is the cap in bytes.
	Max int
}

func (e *TooLargeError) Error() string {
	unit := e.Unit
	if unit == "" {
		unit = "document"
	}
	what := "the " + unit
	where := ""
	if e.Name != "" {
		where = Display(e.Name)
		if e.Line > 0 {
			where += ":" + strconv.Itoa(e.Line)
		}
		where += ": "
		if e.Document > 0 {
			what = unit + " " + strconv.Itoa(e.Document)
		}
	}
	fix := e.Fix
	switch {
	case fix != "":
	case unit == "document":
		fix = "split it into smaller documents (--- between YAML documents), or check that this is the file you meant"
	default:
		fix = "check that this is the file you meant"
	}
	return fmt.Sprintf("%s%s is larger than %s, the most one %s may hold: %s", where, what, size(e.Max), unit, fix)
}

// Unwrap returns ErrTooLarge.
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// bufSize is what one read asks for.
const bufSize = 64 << 10

// Lines reads a stream line by line into documents of at most max bytes
// each: the lines between two lines that Separator accepts (which belong
// to no document), or each line when Separator is nil. A document over the
// cap is a *TooLargeError naming it and the line it starts on. Lines holds
// at most the document before the line it reads, that line up to the cap,
// and one read more: /dev/zero costs it the cap. Line endings are "\n" or
// "\r\n"; a document holds each of its lines followed by "\n".
type Lines struct {
	// Separator says which lines end a document; nil makes every line a
	// document.
	Separator func(line []byte) bool
	// Unit and Fix go into a *TooLargeError (see there).
	Unit, Fix string

	name string
	br   *bufio.Reader
	max  int
	doc  []byte
	// line is the lines read, docs the non-empty documents returned.
	line, docs   int
	unterminated bool
	err          error
}

// NewLines reads r, named name in errors ("-" is standard input), with
// documents of at most max bytes.
func NewLines(name string, r io.Reader, max int) *Lines {
	return &Lines{name: name, br: bufio.NewReaderSize(r, bufSize), max: max}
}

// Next returns the next document, valid until the next call, and the line
// it starts on; io.EOF after the last. With a Separator, n separator lines
// make n+1 documents, some maybe empty, and an empty stream one empty
// document. Other errors are the reader's, or a *TooLargeError; an error
// repeats on every later call.
func (l *Lines) Next() (doc []byte, line int, err error) {
	if l.err != nil {
		return nil, 0, l.err
	}
	l.doc = l.doc[:0]
	start := l.line + 1
	for {
		content, err := l.readLine(start)
		if errors.Is(err, io.EOF) {
			l.err = err
			if l.Separator == nil {
				return nil, 0, err
			}
			// The last document; the next call returns io.EOF.
			return l.cut(l.doc, start)
		}
		if err != nil {
			l.err = err
			return nil, 0, err
		}
		if l.Separator == nil {
			return l.cut(l.doc, start)
		}
		if l.Separator(content) {
			return l.cut(l.doc[:len(l.doc)-len(content)-1], start)
		}
		if len(l.doc) > l.max {
			l.err = l.tooLarge(start)
			return nil, 0, l.err
		}
	}
}

// cut returns doc as the document starting on line start.
func (l *Lines) cut(doc []byte, start int) ([]byte, int, error) {
	if len(doc) > 0 {
		l.docs++
	}
	if doc == nil {
		doc = []byte{}
	}
	return doc, start, nil
}

// readLine appends the next line to the document, with "\n" for its line
// ending, and returns it without; io.EOF when there is none. The line may hold max bytes,
// whatever the document before it holds: the caller decides whether it
// belongs to the document.
func (l *Lines) readLine(start int) ([]byte, error) {
	begin := len(l.doc)
	for {
		frag, err := l.br.ReadSlice('\n')
		l.doc = grow(l.doc, len(frag)+1, begin+l.max+bufSize+1)
		l.doc = append(l.doc, frag...)
		if len(l.doc)-begin > l.max {
			return nil, l.tooLarge(start)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(l.doc) == begin {
				return nil, io.EOF
			}
			l.unterminated = true
			l.doc = append(l.doc, '\n')
		} else if err != nil {
			return nil, err
		}
		break
	}
	l.line++
	end := len(l.doc) - 1
	if end > begin && l.doc[end-1] == '\r' {
		l.doc[end-1] = '\n'
		l.doc = l.doc[:end]
		end--
	}
	return l.doc[begin:end], nil
}

func (l *Lines) tooLarge(start int) error {
	return &TooLargeError{Name: l.name, Line: start, Document: l.docs + 1, Unit: l.Unit, Fix: l.Fix, Max: l.max}
}

// grow makes room for n more bytes in b, doubling its capacity, or going
// to limit at once when the next doubling would pass it: the copies of a
// buffer that grows to limit add up to about twice limit.
func grow(b []byte, n, limit int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	c := max(2*cap(b), 4096)
	if 2*c > limit {
		c = limit
	}
	c = max(c, len(b)+n)
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// Line is the number of the last line read, counting from 1.
func (l *Lines) Line() int { return l.line }

// Unterminated reports whether the last line read had no line ending: the
// stream ended in it.
func (l *Lines) Unterminated() bool { return l.unterminated }

// ReadAll reads r, named name in errors, which must hold at most max
// bytes: past them it returns a *TooLargeError (Unit "file" when unit is
// empty), having held at most max bytes and one read more.
func ReadAll(name string, r io.Reader, max int, unit string) ([]byte, error) {
	if unit == "" {
		unit = "file"
	}
	var buf []byte
	for {
		buf = grow(buf, 1, max+1)
		n, err := r.Read(buf[len(buf):min(cap(buf), len(buf)+bufSize)])
		buf = buf[:len(buf)+n]
		if len(buf) > max {
			return nil, &TooLargeError{Name: name, Unit: unit, Max: max}
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ReadFile reads path ("-" is stdin) whole under ctx, as ReadAll does
// with MaxDocument: for input that is one document (a scenario, a patch,
// an OpenAPI document).
func ReadFile(ctx context.Context, path string, stdin io.Reader) ([]byte, error) {
	f, err := Open(ctx, path, stdin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(path, f, MaxDocument, "")
}
