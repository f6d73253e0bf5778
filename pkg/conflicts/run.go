package conflicts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Analyze decodes the sources in order (each with cfg.Parallel goroutines,
// see audit.Decode) and analyses the write attempts they hold. Errors are
// the decoder's (bad input names file:line and wraps audit.ErrBadInput) or
// ctx's.
//
// Sources are analysed as a stream with bounded memory (see stream): a log
// out of time order beyond the stream's skew (several API servers' logs
// one after the other, say) is read again keeping every record. A stream
// that cannot be read twice (stdin) is copied to a temporary file as it is
// read (audit.Spool), and read again from the copy. The hottest object's
// timeline (Config.HottestTimeline) is a second reading too, of that
// object only.
func Analyze(ctx context.Context, sources []audit.Source, cfg Config) (*Report, error) {
	defer LimitMemory(cfg.MemoryLimit)()
	sources, spools := spool(sources)
	defer func() {
		for _, sp := range spools {
			_ = sp.Close()
		}
	}()
	again := func() ([]audit.Source, error) { return copies(sources, spools) }
	if !rereadable(sources) {
		// No copy could be made: every record is kept from the start.
		return analyze(ctx, sources, cfg, -1, nil)
	}
	rep, err := analyze(ctx, sources, cfg, analyzeSkew, nil)
	if !errors.Is(err, errNeedsAllRecords) {
		if err != nil || !cfg.HottestTimeline || cfg.Object != nil || len(rep.Objects) == 0 {
			return rep, err
		}
		if sources, err = again(); err != nil {
			if errors.Is(err, audit.ErrSpoolFull) {
				// A receiver's copy stopped short (the receiver says so):
				// the report stands without the timeline.
				return rep, nil
			}
			return nil, err
		}
		k := rep.Objects[0].Object
		one, err := analyze(ctx, sources, cfg, analyzeSkew, &k)
		if err == nil {
			rep.Timeline, rep.TimelineObject = one.Timeline, &k
			return rep, nil
		}
		if !errors.Is(err, errNeedsAllRecords) {
			return nil, err
		}
	} else if sources, err = again(); err != nil {
		return nil, err
	}
	onFallback()
	return analyze(ctx, sources, cfg, -1, nil)
}

// spool returns sources with each stream that cannot be read twice
// replaced by its spool's source; one whose copy cannot be made stays as
// it is.
func spool(sources []audit.Source) ([]audit.Source, map[int]*audit.Spool) {
	out := slices.Clone(sources)
	spools := map[int]*audit.Spool{}
	for i, src := range sources {
		if src.Rereadable() {
			continue
		}
		if sp, err := audit.NewSpool(src, ""); err == nil {
			spools[i], out[i] = sp, sp.Source()
		}
	}
	return out, spools
}

// copies returns sources with each spooled stream replaced by its whole
// copy, read to the stream's end.
func copies(sources []audit.Source, spools map[int]*audit.Spool) ([]audit.Source, error) {
	out := slices.Clone(sources)
	for i, sp := range spools {
		src, err := sp.Rest()
		if err != nil {
			return nil, fmt.Errorf("%w: set TMPDIR to a directory with room, or give the log as a file", err)
		}
		out[i] = src
	}
	return out, nil
}

// rereadable says whether every source can be read again (a spool's
// source can, through its copy).
func rereadable(sources []audit.Source) bool {
	for _, src := range sources {
		if !src.Rereadable() && !src.Spooled() {
			return false
		}
	}
	return true
}

// LimitMemory sets the runtime's soft memory limit to limit (see
// Config.MemoryLimit) unless it is 0, GOMEMLIMIT is set, or the limit is
// already as low; it returns what puts the old limit back. Analyze calls
// it; a command calls it too to keep the limit while it prints.
//
// While the limit is set, the GC percent is off (unless GOGC is set): the
// collector runs when the heap nears the limit, not each time it doubles
// on the way there. The limit bounds memory either way; a 1 GiB log is so
// collected 7 times instead of 11, each time marking some 60 MB.
func LimitMemory(limit int64) (restore func()) {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" || debug.SetMemoryLimit(-1) <= limit {
		return func() {}
	}
	old := debug.SetMemoryLimit(limit)
	if _, set := os.LookupEnv("GOGC"); set {
		return func() { debug.SetMemoryLimit(old) }
	}
	percent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(old)
	}
}

// onFallback is called when files are read again keeping every record;
// tests watch it.
var onFallback = func() {}

// analyze reads the sources once into a collector of the given skew (-1
// keeps every record), limited to one object when only is set. Records
// are made from the events (the collector's tables) on the decoder's
// goroutine and analysed (the stream) on another, in the same order.
func analyze(ctx context.Context, sources []audit.Source, cfg Config, skew time.Duration, only *ObjectKey) (*Report, error) {
	c := newCollector(cfg, skew)
	c.stream.only = only
	var stats audit.Stats
	// Reuse: the collector copies what it keeps of an event.
	opts := audit.Options{Strict: cfg.Strict, Workers: cfg.Parallel, Reuse: true, KeyHashes: true}
	p := startPipe(c.stream)
	defer p.close()
	for _, src := range sources {
		st, err := audit.Decode(ctx, src, opts, func(e *audit.Event) error {
			if it, ok := c.record(e); ok {
				return p.add(it)
			}
			return nil
		})
		stats.Add(st)
		if err != nil {
			return nil, err
		}
	}
	if p.close() {
		return nil, errNeedsAllRecords
	}
	rep := c.Report()
	if c.stream.inexact {
		// Found while the last records were walked.
		return nil, errNeedsAllRecords
	}
	stats.Duplicates = rep.Input.Duplicates
	rep.Input = stats
	return rep, nil
}

// pipeBatch is how many records go to the stream's goroutine at once.
const pipeBatch = 512

// pipe hands records to a goroutine that adds them to a stream, in order.
// The batches go back to the decoding side once added (free): a 1 GiB log
// would otherwise allocate some 50 MB of them, a fifth of what Analyze
// allocates, and each new one is memory the processor's cache has not
// seen.
type pipe struct {
	batch []item
	out   chan []item
	free  chan []item
	done  chan struct{}
	// inexact is set, from the stream's goroutine, once the stream is.
	inexact atomic.Bool
	closed  bool
}

func startPipe(s *stream) *pipe {
	p := &pipe{batch: make([]item, 0, pipeBatch), out: make(chan []item, 4), free: make(chan []item, 6), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for b := range p.out {
			if !p.inexact.Load() {
				s.addBatch(b)
				if s.inexact {
					p.inexact.Store(true)
				}
			}
			// Cleared: a batch kept for reuse must not keep records alive.
			clear(b)
			select {
			case p.free <- b[:0]:
			default:
			}
		}
	}()
	return p
}

// add queues it; it fails once the stream is inexact, to end the reading.
func (p *pipe) add(it item) error {
	p.batch = append(p.batch, it)
	if len(p.batch) < pipeBatch {
		return nil
	}
	if p.inexact.Load() {
		return errNeedsAllRecords
	}
	p.out <- p.batch
	select {
	case p.batch = <-p.free:
	default:
		p.batch = make([]item, 0, pipeBatch)
	}
	return nil
}

// close hands on the last records, waits for the stream's goroutine and
// says whether the stream is inexact. It may be called again.
func (p *pipe) close() (inexact bool) {
	if !p.closed {
		p.closed = true
		if len(p.batch) > 0 {
			p.out <- p.batch
		}
		close(p.out)
	}
	<-p.done
	return p.inexact.Load()
}
