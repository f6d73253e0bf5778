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

// RecordType is the type of one line of a recording.
type RecordType string

// The record types. ADDED, MODIFIED, DELETED and BOOKMARK are watch events as
// the API server sent them. LIST is one object of a list (the initial list,
// or the relist after a 410 Gone); SYNCED ends that list.
const (
	RecordAdded    RecordType = "ADDED"
	RecordModified RecordType = "MODIFIED"
	RecordDeleted  RecordType = "DELETED"
	RecordBookmark RecordType = "BOOKMARK"
	RecordList     RecordType = "LIST"
	RecordSynced   RecordType = "SYNCED"
)

// SyncReason says why a list was made.
type SyncReason string

// The sync reasons.
const (
	// SyncInitial is the list made at start (not made with --since).
	SyncInitial SyncReason = "initial"
	// SyncRelist is the list made after the API server answered 410 Gone:
	// the events between the last resourceVersion seen and the list's
	// resourceVersion are lost.
	SyncRelist SyncReason = "relist"
)

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

// RecordedEvent is one line of a recording after the header, and the unit the
// Tracker consumes.
//
// Example (one line each in the file; objects shortened):
//
//	{"type":"LIST","time":"...","resource":"apps/v1/deployments","reason":"initial","object":{...,"metadata":{"resourceVersion":"812",...}}}
//	{"type":"SYNCED","time":"...","resource":"apps/v1/deployments","reason":"initial","resourceVersion":"815"}
//	{"type":"MODIFIED","time":"...","resource":"apps/v1/deployments","object":{...,"metadata":{"resourceVersion":"830",...}}}
//	{"type":"SYNCED","time":"...","resource":"apps/v1/deployments","reason":"relist","resourceVersion":"990","gapFrom":"830"}
type RecordedEvent struct {
	Type RecordType `json:"type"`
	// Time is when kubectl-rv received the event.
	Time time.Time `json:"time"`
	// Resource is group/version/resource ("apps/v1/deployments", "v1/pods").
	Resource string `json:"resource"`
	// Reason is set on LIST and SYNCED.
	Reason SyncReason `json:"reason,omitempty"`
	// ResourceVersion is the bookmark's RV (BOOKMARK) or the list's RV (SYNCED).
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// GapFrom is, on a SYNCED relist, the last resourceVersion seen before the
	// 410 Gone: the events after it and up to ResourceVersion were lost.
	GapFrom string `json:"gapFrom,omitempty"`
	// GapError is the API server's message for the 410 Gone.
	GapError string `json:"gapError,omitempty"`
	// Object is the full object (ADDED, MODIFIED, DELETED, LIST), with
	// managedFields; Secret values are redacted unless the header says not.
	Object *unstructured.Unstructured `json:"object,omitempty"`
}

// Recording is a whole recording read back.
type Recording struct {
	Header RecordingHeader
	Events []RecordedEvent
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

// maxLine bounds one recorded line (a large object, a long list item).
const maxLine = 64 << 20

// RecordingReader reads a recording line by line, so that a long recording
// need not fit in memory.
type RecordingReader struct {
	sc     *bufio.Scanner
	line   int
	header RecordingHeader
}

// NewRecordingReader reads and checks the header line of r.
func NewRecordingReader(r io.Reader) (*RecordingReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	rr := &RecordingReader{sc: sc}
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

// Next returns the next event; io.EOF at the end.
func (rr *RecordingReader) Next() (RecordedEvent, error) {
	line, ok, err := rr.next()
	if err != nil {
		return RecordedEvent{}, err
	}
	if !ok {
		return RecordedEvent{}, io.EOF
	}
	ev, err := decodeRecordedEvent(line)
	if err != nil {
		return RecordedEvent{}, &RecordingError{Line: rr.line, Err: err}
	}
	return ev, nil
}

// next returns the next non-blank line.
func (rr *RecordingReader) next() ([]byte, bool, error) {
	for rr.sc.Scan() {
		rr.line++
		if b := bytes.TrimSpace(rr.sc.Bytes()); len(b) > 0 {
			return b, true, nil
		}
	}
	if err := rr.sc.Err(); err != nil {
		return nil, false, &RecordingError{Line: rr.line + 1, Err: err}
	}
	return nil, false, nil
}

// ReadRecording reads a whole recording. Errors name the line.
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
		if err != nil {
			return nil, err
		}
		rec.Events = append(rec.Events, ev)
	}
}

// CheckRecording reads a whole recording from r as ReadRecording does,
// keeping none of its events, and returns its header or the error of its
// first bad line: a check before replaying it event by event (ReplayFrom).
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
		if err != nil {
			return RecordingHeader{}, err
		}
	}
}

// wireEvent is RecordedEvent with the object left raw, so that it can be
// decoded with Kubernetes' number handling (int64, not float64).
type wireEvent struct {
	Type            RecordType      `json:"type"`
	Time            time.Time       `json:"time"`
	Resource        string          `json:"resource"`
	Reason          SyncReason      `json:"reason,omitempty"`
	ResourceVersion string          `json:"resourceVersion,omitempty"`
	GapFrom         string          `json:"gapFrom,omitempty"`
	GapError        string          `json:"gapError,omitempty"`
	Object          json.RawMessage `json:"object,omitempty"`
}

func decodeRecordedEvent(line []byte) (RecordedEvent, error) {
	var w wireEvent
	if err := json.Unmarshal(line, &w); err != nil {
		return RecordedEvent{}, fmt.Errorf("invalid JSON: %w", err)
	}
	ev := RecordedEvent{Type: w.Type, Time: w.Time, Resource: w.Resource, Reason: w.Reason, ResourceVersion: w.ResourceVersion, GapFrom: w.GapFrom, GapError: w.GapError}
	if w.Resource == "" {
		return RecordedEvent{}, errors.New("resource is missing")
	}
	if len(w.Object) > 0 && !bytes.Equal(w.Object, []byte("null")) {
		var m map[string]any
		if err := utiljson.Unmarshal(w.Object, &m); err != nil {
			return RecordedEvent{}, fmt.Errorf("object: %w", err)
		}
		if m == nil {
			return RecordedEvent{}, errors.New("object: want a JSON object")
		}
		ev.Object = &unstructured.Unstructured{Object: m}
	}
	switch w.Type {
	case RecordAdded, RecordModified, RecordDeleted, RecordList:
		if ev.Object == nil {
			return RecordedEvent{}, fmt.Errorf("a %s line needs an object", w.Type)
		}
		if ev.Object.GetName() == "" {
			return RecordedEvent{}, fmt.Errorf("%s object has no metadata.name", w.Type)
		}
	case RecordBookmark:
	case RecordSynced:
		if w.Reason != SyncInitial && w.Reason != SyncRelist {
			return RecordedEvent{}, fmt.Errorf("SYNCED reason %q: want initial or relist", w.Reason)
		}
	default:
		return RecordedEvent{}, fmt.Errorf("type %q: want ADDED, MODIFIED, DELETED, BOOKMARK, LIST or SYNCED", w.Type)
	}
	if w.Type == RecordList && w.Reason != SyncInitial && w.Reason != SyncRelist {
		return RecordedEvent{}, fmt.Errorf("LIST reason %q: want initial or relist", w.Reason)
	}
	if err := checkRVs(ev); err != nil {
		return RecordedEvent{}, err
	}
	return ev, nil
}

// checkRVs refuses resourceVersions that no API server sends: replay
// orders versions by them, and a malformed one would be shown or compared
// as if it were real. An absent resourceVersion is left alone.
func checkRVs(ev RecordedEvent) error {
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
func (rw *RecordingWriter) Write(ev RecordedEvent) error {
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
