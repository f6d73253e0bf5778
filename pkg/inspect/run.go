package inspect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Config is what a watch follows, how its rows are computed, when it stops
// and where it is recorded. NewConfig fills the defaults.
type Config struct {
	// Stream says what to list and watch (Run only).
	Stream follow.Config
	// Tracker tunes fights, hot objects and bookmarks.
	Tracker TrackerConfig
	// MaxEvents stops the watch after this many rows, not counting the
	// initial list and bookmarks; 0 means no limit. The rows of the event
	// that reaches the limit are all delivered.
	MaxEvents int
	// Record, when set, receives the recording of the watch (Run only): a
	// header, then every follow.Event before its rows are delivered.
	Record io.Writer
	// AllNamespaces is written to the recording's header, so that a replay
	// shows the same columns.
	AllNamespaces bool
}

// NewConfig returns a Config with the default stream and tracker settings,
// no event limit and no recording.
func NewConfig() Config {
	return Config{Stream: follow.NewConfig(), Tracker: NewTrackerConfig()}
}

// Sink receives what a watch produces, in order. Run and Replay never call
// it from two goroutines at once.
type Sink interface {
	// Event receives one row. An error ends the watch; Run and Replay
	// return it.
	Event(Event) error
	// Warning receives a problem the watch survives: a retry, a lost
	// history before its relist, a target left out.
	Warning(msg string)
	// Empty says that the initial list of resource (resource.group) found
	// no object, so that no row is to be expected yet; the watch goes on
	// from resourceVersion rv.
	Empty(resource, rv string)
}

// Result is what a watch saw, for the summary and the exit code.
type Result struct {
	Summary Summary
	// Fights is how many fights were seen (for --fail-on fight: Findings).
	Fights int
}

// Run follows cfg.Stream's targets (list, then watch; resume after a
// dropped connection; relist and a GAP row after 410 Gone), records every
// received event to cfg.Record, turns events into rows with a Tracker and
// delivers the rows to sink, until ctx is done or cfg.MaxEvents rows were
// delivered. It then returns the summary at cfg.Stream.Now.
//
// Errors: one wrapping follow.ErrInitialContact when a target cannot be started,
// the recording's write error, or the sink's error. A done ctx is not an
// error: it is how a watch normally ends (Ctrl-C, --for).
func Run(ctx context.Context, src follow.Source, cfg Config, sink Sink) (Result, error) {
	ls := &lockedSink{sink: sink}
	r := newRunner(cfg, ls, true)
	if cfg.Record != nil {
		rec, err := NewRecordingWriter(cfg.Record, recordingHeader(cfg))
		if err != nil {
			return Result{}, err
		}
		r.rec = rec
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	events := make(chan follow.Event, follow.QueueLen)
	done := make(chan error, 1)
	go func() { done <- follow.Stream(ctx, src, cfg.Stream, ls.warnf, events) }()
	lists := follow.NewListMemory(len(cfg.Stream.Targets))
	if cfg.Stream.Since != "" {
		lists = follow.NewListMemory(0)
	}
	for {
		select {
		case ev := <-events:
			if !r.handle(ev) {
				stop()
			}
			lists.Observe(ev)
		case err := <-done:
			if err != nil {
				return Result{}, err
			}
			// stream has returned, so nothing more is sent: drain what is
			// buffered.
			follow.Drain(events, func(ev follow.Event) { r.handle(ev) })
			if r.err != nil {
				return Result{}, r.err
			}
			return r.result(cfg.Stream.Now()), nil
		}
	}
}

// Replay re-renders a recording: the rows and the summary are those the
// recorded watch showed, since the Tracker is deterministic. It uses
// cfg.Tracker and cfg.MaxEvents; the summary ends at the last event.
func Replay(rec *Recording, cfg Config, sink Sink) (Result, error) {
	r := newRunner(cfg, sink, false)
	for _, ev := range rec.Events {
		if !r.handle(ev) {
			break
		}
	}
	if r.err != nil {
		return Result{}, r.err
	}
	return r.result(time.Time{}), nil
}

// ReplayFrom is Replay of the recording rr reads, taken event by event: only
// the tracker's state and the event at hand are in memory, not the whole
// recording. An error reading a line ends the replay with that error, after
// the rows of the lines before it: check the recording first
// (CheckRecording) when no row may be shown from a bad one. A last line cut
// short (ErrCutShort) ends the replay as the end of the recording does;
// CheckRecording reports it.
func ReplayFrom(rr *RecordingReader, cfg Config, sink Sink) (Result, error) {
	r := newRunner(cfg, sink, false)
	for {
		ev, err := rr.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, ErrCutShort) {
			break
		}
		if err != nil {
			return Result{}, err
		}
		if !r.handle(ev) {
			break
		}
	}
	if r.err != nil {
		return Result{}, r.err
	}
	return r.result(time.Time{}), nil
}

func recordingHeader(cfg Config) RecordingHeader {
	names := make([]string, len(cfg.Stream.Targets))
	for i, t := range cfg.Stream.Targets {
		names[i] = t.String()
	}
	h := NewRecordingHeader(cfg.Stream.Now(), names, !cfg.Stream.ShowSecrets)
	h.AllNamespaces = cfg.AllNamespaces
	return h
}

// runner is the bookkeeping of one watch or replay: record, track, deliver,
// count. Only the goroutine of Run or Replay touches it.
type runner struct {
	tracker   *Tracker
	sink      Sink
	rec       *RecordingWriter
	maxEvents int
	// live tells the sink about empty initial lists; a replay does not.
	live bool
	// counted is how many delivered rows count towards maxEvents.
	counted int
	// listed counts the LIST events of each resource's pending list.
	listed map[string]int
	// err is the first recording or sink error; it ends the watch.
	err error
}

func newRunner(cfg Config, sink Sink, live bool) *runner {
	return &runner{tracker: NewTracker(cfg.Tracker), sink: sink, maxEvents: cfg.MaxEvents, live: live, listed: map[string]int{}}
}

// done reports whether the runner takes no more events.
func (r *runner) done() bool {
	return r.err != nil || (r.maxEvents > 0 && r.counted >= r.maxEvents)
}

// handle records one event and delivers its rows; it returns false once the
// runner is done.
func (r *runner) handle(ev follow.Event) bool {
	if r.done() {
		return false
	}
	if r.live {
		r.noticeEmpty(ev)
	}
	if r.rec != nil {
		if err := r.rec.Write(ev); err != nil {
			r.err = err
			return false
		}
	}
	for _, e := range r.tracker.Observe(ev) {
		if err := r.sink.Event(e); err != nil {
			r.err = err
			return false
		}
		if counts(e) {
			r.counted++
		}
	}
	return !r.done()
}

func (r *runner) noticeEmpty(ev follow.Event) {
	switch {
	case ev.Type == follow.List:
		r.listed[ev.Resource]++
	case ev.Type == follow.Synced && ev.Reason == follow.SyncInitial:
		if r.listed[ev.Resource] == 0 {
			r.sink.Empty(resourceName(ev.Resource), ev.ResourceVersion)
		}
		r.listed[ev.Resource] = 0
	}
}

func (r *runner) result(ended time.Time) Result {
	return Result{Summary: r.tracker.Summary(ended), Fights: r.tracker.Fights()}
}

// counts says whether a row counts towards MaxEvents.
func counts(e Event) bool {
	return e.Type != EventBookmark && !e.Initial
}

// lockedSink serializes a Sink: rows come from Run's goroutine, warnings
// from the targets' goroutines.
type lockedSink struct {
	// mu guards sink.
	mu   sync.Mutex
	sink Sink
}

var _ Sink = (*lockedSink)(nil)

func (l *lockedSink) Event(e Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sink.Event(e)
}

func (l *lockedSink) Warning(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sink.Warning(msg)
}

func (l *lockedSink) Empty(resource, rv string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sink.Empty(resource, rv)
}

func (l *lockedSink) warnf(format string, args ...any) {
	l.Warning(fmt.Sprintf(format, args...))
}

// Findings are what watch --fail-on fails on: Result.Fights.
var Findings = findings.Vocabulary{
	{Name: "fight", Noun: "fight", Help: "a field changing hands --fight-threshold times within --fight-window"},
}
