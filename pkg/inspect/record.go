package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

// APIVersion is the group/version of the watch reports and of recordings.
// It equals output.APIVersion; the engine does not import the printing layer.
const APIVersion = "rv.kubectl-rv.dev/v1alpha1"

// RecordingKind is the kind of a recording's header line.
const RecordingKind = "WatchRecording"

// RecordingFormat is the version of the recording format this package
// writes. Readers accept this version only; a new version will be a new
// number, never a silent change.
const RecordingFormat = 1

// RecordingHeader is the first line of a recording.
type RecordingHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Format is RecordingFormat.
	Format int `json:"format"`
	// Started is when the watch started.
	Started time.Time `json:"started"`
	// Targets are the watched resources and selectors, for people.
	Targets []string `json:"targets,omitempty"`
	// SecretsRedacted is true unless the watch ran with --show-secrets.
	SecretsRedacted bool `json:"secretsRedacted"`
	// AllNamespaces is true when the watch spanned namespaces (-A), so that
	// a replay shows the same columns.
	AllNamespaces bool `json:"allNamespaces,omitempty"`
}

// NewRecordingHeader returns a header for a recording started at started.
func NewRecordingHeader(started time.Time, targets []string, secretsRedacted bool) RecordingHeader {
	return RecordingHeader{APIVersion: APIVersion, Kind: RecordingKind, Format: RecordingFormat, Started: started, Targets: targets, SecretsRedacted: secretsRedacted}
}

// Recording is a whole recording read back.
type Recording struct {
	Header RecordingHeader
	Events []follow.Event
}

// ErrNotRecording is returned when the first line is not a recording header.
var ErrNotRecording = errors.New("not a kubectl rv watch recording: the first line must be a WatchRecording header")

// RecordingError locates a bad line in a recording.
type RecordingError struct {
	Line int
	Err  error
}

func (e *RecordingError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *RecordingError) Unwrap() error { return e.Err }

// RecordingReader reads a recording line by line, so that a long recording
// need not fit in memory. One line (one event: a large object, a long list
// item) may hold input.MaxDocument bytes; a longer one is a
// *RecordingError wrapping a *input.TooLargeError.
type RecordingReader struct {
	lines  *input.Lines
	line   int
	header RecordingHeader
}

// ErrCutShort says that the last line of a recording is cut short: the
// recorder was stopped while writing it (a kill, a full disk). The lines
// before it are whole, and can be replayed.
var ErrCutShort = errors.New("the last line is cut short (the recorder was stopped while writing it)")

// NewRecordingReader reads and checks the header line of r. Give it an
// *input.File for a file or standard input, so that Ctrl-C stops a read
// that waits (a FIFO).
func NewRecordingReader(r io.Reader) (*RecordingReader, error) {
	lines := input.NewLines("", r, input.MaxDocument)
	lines.Unit = "line"
	lines.Fix = "a recording holds one event per line: check that this is a recording that kubectl rv watch --record wrote"
	rr := &RecordingReader{lines: lines}
	line, ok, err := rr.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &RecordingError{Line: 1, Err: ErrNotRecording}
	}
	var h RecordingHeader
	if err := json.Unmarshal(line, &h); err != nil || h.Kind != RecordingKind {
		return nil, &RecordingError{Line: rr.line, Err: ErrNotRecording}
	}
	if h.APIVersion != APIVersion || h.Format != RecordingFormat {
		return nil, &RecordingError{Line: rr.line, Err: fmt.Errorf("recording format %s %d is not supported: this kubectl-rv reads %s %d", h.APIVersion, h.Format, APIVersion, RecordingFormat)}
	}
	rr.header = h
	return rr, nil
}

// Header returns the recording's header.
func (rr *RecordingReader) Header() RecordingHeader { return rr.header }

// Next returns the next event; io.EOF at the end. A last line cut short
// is a *RecordingError wrapping ErrCutShort.
func (rr *RecordingReader) Next() (follow.Event, error) {
	line, ok, err := rr.next()
	if err != nil {
		return follow.Event{}, err
	}
	if !ok {
		return follow.Event{}, io.EOF
	}
	ev, err := decodeRecordedEvent(line)
	if err != nil {
		if rr.lines.Unterminated() {
			err = fmt.Errorf("%w: %w", ErrCutShort, err)
		}
		return follow.Event{}, &RecordingError{Line: rr.line, Err: err}
	}
	return ev, nil
}

// next returns the next non-blank line.
func (rr *RecordingReader) next() ([]byte, bool, error) {
	for {
		line, at, err := rr.lines.Next()
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, &RecordingError{Line: rr.lines.Line() + 1, Err: err}
		}
		rr.line = at
		if b := bytes.TrimSpace(line); len(b) > 0 {
			return b, true, nil
		}
	}
}

// ReadRecording reads a whole recording. Errors name the line. When only
// the last line is cut short (ErrCutShort), it returns the recording up to
// that line and the error, which the caller may take as a warning.
func ReadRecording(r io.Reader) (*Recording, error) {
	rr, err := NewRecordingReader(r)
	if err != nil {
		return nil, err
	}
	rec := &Recording{Header: rr.Header()}
	for {
		ev, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rec, nil
		}
		if errors.Is(err, ErrCutShort) {
			return rec, err
		}
		if err != nil {
			return nil, err
		}
		rec.Events = append(rec.Events, ev)
	}
}

// CheckRecording reads a whole recording from r as ReadRecording does,
// keeping none of its events, and returns its header or the error of its
// first bad line: a check before replaying it event by event (ReplayFrom).
// A last line cut short returns the header and the error (ErrCutShort).
func CheckRecording(r io.Reader) (RecordingHeader, error) {
	rr, err := NewRecordingReader(r)
	if err != nil {
		return RecordingHeader{}, err
	}
	for {
		_, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rr.Header(), nil
		}
		if errors.Is(err, ErrCutShort) {
			return rr.Header(), err
		}
		if err != nil {
			return RecordingHeader{}, err
		}
	}
}

// wireEvent is follow.Event with the object left raw, so that it can be
// decoded with Kubernetes' number handling (int64, not float64).
type wireEvent struct {
	Type            follow.EventType  `json:"type"`
	Time            time.Time         `json:"time"`
	Resource        string            `json:"resource"`
	Reason          follow.SyncReason `json:"reason,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	GapFrom         string            `json:"gapFrom,omitempty"`
	GapError        string            `json:"gapError,omitempty"`
	Object          json.RawMessage   `json:"object,omitempty"`
}

func decodeRecordedEvent(line []byte) (follow.Event, error) {
	var w wireEvent
	if err := json.Unmarshal(line, &w); err != nil {
		return follow.Event{}, fmt.Errorf("invalid JSON: %w", err)
	}
	ev := follow.Event{Type: w.Type, Time: w.Time, Resource: w.Resource, Reason: w.Reason, ResourceVersion: w.ResourceVersion, GapFrom: w.GapFrom, GapError: w.GapError}
	if w.Resource == "" {
		return follow.Event{}, errors.New("resource is missing")
	}
	if len(w.Object) > 0 && !bytes.Equal(w.Object, []byte("null")) {
		var m map[string]any
		if err := utiljson.Unmarshal(w.Object, &m); err != nil {
			return follow.Event{}, fmt.Errorf("object: %w", err)
		}
		if m == nil {
			return follow.Event{}, errors.New("object: want a JSON object")
		}
		ev.Object = &unstructured.Unstructured{Object: m}
	}
	switch w.Type {
	case follow.Added, follow.Modified, follow.Deleted, follow.List:
		if ev.Object == nil {
			return follow.Event{}, fmt.Errorf("a %s line needs an object", w.Type)
		}
		if ev.Object.GetName() == "" {
			return follow.Event{}, fmt.Errorf("%s object has no metadata.name", w.Type)
		}
	case follow.Bookmark:
	case follow.Synced:
		if w.Reason != follow.SyncInitial && w.Reason != follow.SyncRelist {
			return follow.Event{}, fmt.Errorf("SYNCED reason %q: want initial or relist", w.Reason)
		}
	default:
		return follow.Event{}, fmt.Errorf("type %q: want ADDED, MODIFIED, DELETED, BOOKMARK, LIST or SYNCED", w.Type)
	}
	if w.Type == follow.List && w.Reason != follow.SyncInitial && w.Reason != follow.SyncRelist {
		return follow.Event{}, fmt.Errorf("LIST reason %q: want initial or relist", w.Reason)
	}
	if err := checkRVs(ev); err != nil {
		return follow.Event{}, err
	}
	return ev, nil
}

// checkRVs refuses resourceVersions that no API server sends: replay
// orders versions by them, and a malformed one would be shown or compared
// as if it were real. An absent resourceVersion is left alone.
func checkRVs(ev follow.Event) error {
	for _, f := range []struct{ name, rv string }{
		{"resourceVersion", ev.ResourceVersion},
		{"gapFrom", ev.GapFrom},
	} {
		if err := checkRV(f.name, f.rv); err != nil {
			return err
		}
	}
	if ev.Object == nil {
		return nil
	}
	v, found, _ := unstructured.NestedFieldNoCopy(ev.Object.Object, "metadata", "resourceVersion")
	if !found {
		return nil
	}
	rv, ok := v.(string)
	if !ok {
		return fmt.Errorf("object metadata.resourceVersion %v is not a resourceVersion: want a string such as \"812\"", v)
	}
	return checkRV("object metadata.resourceVersion", rv)
}

// checkRV accepts what resourceversion.CompareResourceVersion accepts (a
// positive integer without leading zeros) that also fits etcd's int64
// revision.
func checkRV(field, rv string) error {
	if rv == "" {
		return nil
	}
	_, err := resourceversion.CompareResourceVersion(rv, rv)
	if err == nil {
		_, err = strconv.ParseInt(rv, 10, 64)
	}
	if err != nil {
		return fmt.Errorf("%s %q is not a resourceVersion: want a positive integer without leading zeros, at most %d (an etcd revision)", field, rv, int64(math.MaxInt64))
	}
	return nil
}

// RecordingWriter writes a recording, one JSON line per event.
type RecordingWriter struct {
	w *bufio.Writer
}

// NewRecordingWriter writes the header to w and returns a writer for events.
func NewRecordingWriter(w io.Writer, h RecordingHeader) (*RecordingWriter, error) {
	rw := &RecordingWriter{w: bufio.NewWriter(w)}
	if err := rw.line(h); err != nil {
		return nil, err
	}
	return rw, rw.w.Flush()
}

// Write appends one event and flushes it, so that a recording cut short by a
// kill is complete up to its last line.
func (rw *RecordingWriter) Write(ev follow.Event) error {
	if err := rw.line(ev); err != nil {
		return err
	}
	return rw.w.Flush()
}

func (rw *RecordingWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding recording line: %w", err)
	}
	if _, err := rw.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing recording: %w", err)
	}
	return nil
}
