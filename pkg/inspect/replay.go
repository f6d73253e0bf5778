package inspect

import (
	"errors"
	"fmt"
	"io"
)

// OpenSink is how ReplayRecording gets its sink once the recording is
// checked and before any row: from the header (which says, for one, whether
// the recording spans namespaces) and, when the last line is cut short
// (ErrCutShort), that line's error, for a warning; nil otherwise.
type OpenSink func(h RecordingHeader, cutShort *RecordingError) (Sink, error)

// ReplayRecording is watch --replay's one entry: it replays the recording r
// reads to the sink open returns, as Replay does. A recording that can be
// read twice (a file) is checked whole first, so that a bad line shows no
// row, then replayed event by event (ReplayFrom), so that it is never in
// memory whole; any other (a pipe) is read whole (ReadRecording). A last
// line cut short is not an error: the lines before it are replayed. Errors
// about the recording are *RecordingErrors naming the line.
func ReplayRecording(r io.Reader, cfg Config, open OpenSink) (Result, error) {
	if s, ok := r.(io.ReadSeeker); ok {
		if _, err := s.Seek(0, io.SeekCurrent); err == nil {
			return replayTwice(s, cfg, open)
		}
	}
	rec, err := ReadRecording(r)
	cut, err := cutShort(err)
	if err != nil {
		return Result{}, err
	}
	sink, err := open(rec.Header, cut)
	if err != nil {
		return Result{}, err
	}
	return Replay(rec, cfg, sink)
}

// replayTwice checks the recording whole, then replays it from the start
// event by event.
func replayTwice(s io.ReadSeeker, cfg Config, open OpenSink) (Result, error) {
	h, err := CheckRecording(s)
	cut, err := cutShort(err)
	if err != nil {
		return Result{}, err
	}
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return Result{}, fmt.Errorf("reading the recording again: %w", err)
	}
	rr, err := NewRecordingReader(s)
	if err != nil {
		return Result{}, err
	}
	sink, err := open(h, cut)
	if err != nil {
		return Result{}, err
	}
	return ReplayFrom(rr, cfg, sink)
}

// cutShort takes a last line cut short out of err: the line's error, and
// no error.
func cutShort(err error) (*RecordingError, error) {
	var bad *RecordingError
	if errors.Is(err, ErrCutShort) && errors.As(err, &bad) {
		return bad, nil
	}
	return nil, err
}

// Travel is a question to a recording, watch --replay's views: the
// recorded objects (Object empty), one object as it was at a
// resourceVersion (At; its last recorded state when empty), or the fields
// that changed between two (From and To).
type Travel struct {
	// Object is TYPE/NAME or TYPE/NAMESPACE/NAME (Timeline.Find);
	// Namespace fills in a missing namespace.
	Object, Namespace string
	At, From, To      string
}

// TravelResult is the answer: one of its fields is set.
type TravelResult struct {
	List *HistoryList
	At   *VersionAt
	Diff *VersionDiff
}

// ObjectError is Travel's error when its Object is not one object of the
// recording (absent, ambiguous or malformed).
type ObjectError struct{ Err error }

func (e *ObjectError) Error() string { return e.Err.Error() }

func (e *ObjectError) Unwrap() error { return e.Err }

// In answers the question from the recording rec.
func (q Travel) In(rec *Recording) (TravelResult, error) {
	tl := NewTimeline(rec)
	if q.Object == "" {
		l := tl.List()
		return TravelResult{List: &l}, nil
	}
	h, err := tl.Find(q.Object, q.Namespace)
	if err != nil {
		return TravelResult{}, &ObjectError{Err: err}
	}
	if q.From != "" {
		d, err := h.Diff(q.From, q.To)
		return TravelResult{Diff: &d}, err
	}
	v, err := h.At(q.At)
	return TravelResult{At: &v}, err
}
