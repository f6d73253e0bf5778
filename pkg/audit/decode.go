package audit

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
)

// MaxLineBytes is the longest line accepted. A Metadata-level event is about
// 800 bytes; a RequestResponse one carries two objects, at most 1.5 MB each
// in etcd, but lines this long are rare enough to call bad input.
const MaxLineBytes = 1 << 20

// ErrBadInput marks errors about the log's content (as opposed to I/O).
var ErrBadInput = errors.New("bad audit log")

// Options tune Decode.
type Options struct {
	// Strict makes every line that would be skipped (a blank line, a last
	// line cut short) an error.
	Strict bool
	// Workers is how many goroutines decode blocks of one stream at once;
	// 0 is one. Events are still handed on in the log's order.
	Workers int
	// Reuse lets Decode reuse a block's memory once its events are handed
	// on: the strings of an Event are then valid only during the call of
	// fn that got it, and fn must copy what it keeps. It saves allocating
	// (and collecting) the size of the log again.
	Reuse bool
	// KeyHashes has the decoding goroutines set each event's object and
	// client hashes (Event.ObjectHash, Event.ClientHash), for a caller
	// that looks objects and clients up by them (conflicts); without it,
	// they are computed when asked, and a caller that never asks does not
	// pay for them.
	KeyHashes bool
}

// Stats count what Decode read.
type Stats struct {
	Lines int `json:"lines"`
	// Events counts events handed on (stage ResponseComplete or Panic).
	Events int `json:"events"`
	// OtherStages counts events of other stages, which are ignored.
	OtherStages int `json:"otherStages"`
	// Skipped counts blank lines.
	Skipped int `json:"skipped"`
	// Truncated counts last lines cut short (0 or 1 per source).
	Truncated int `json:"truncated"`
	// Duplicates counts the events handed on that an earlier one had the
	// auditID and stage of (see Dedup), and were left out: Decode does not
	// set it, the caller that deduplicates does.
	Duplicates int `json:"duplicates"`
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Lines += o.Lines
	s.Events += o.Events
	s.OtherStages += o.OtherStages
	s.Skipped += o.Skipped
	s.Truncated += o.Truncated
	s.Duplicates += o.Duplicates
}

// Decode reads src and calls fn with each ResponseComplete or Panic event,
// in the log's order, from the caller's goroutine. Options.Workers
// goroutines decode blocks of whole lines at once. The Event is reused and
// its strings share memory with the block it came from: fn must copy what
// it keeps (strings.Clone). Errors about the content wrap ErrBadInput and
// name src:line.
func Decode(ctx context.Context, src Source, opts Options, fn func(*Event) error) (Stats, error) {
	if src.batches != nil {
		bs, err := src.batches()
		if err != nil {
			return Stats{}, err
		}
		d := &decoder{name: src.Name, opts: opts, src: src, batched: true}
		return d.stats, d.run(ctx, func(ctx context.Context, _ int, ordered, jobs chan<- *block, _ <-chan *block) {
			batchBlocks(ctx, bs, opts.Reuse, ordered, jobs)
		}, fn)
	}
	rc, err := src.open()
	if err != nil {
		return Stats{}, err
	}
	defer func() { _ = rc.Close() }()
	d := &decoder{name: src.Name, opts: opts, src: src}
	if f, size := mappable(rc, opts); size > 0 && !isExport(f) {
		onMapped()
		d.mapped = true
		return d.stats, d.run(ctx, func(ctx context.Context, bsize int, ordered, jobs chan<- *block, free <-chan *block) {
			mapBlocks(ctx, f, size, bsize, ordered, jobs, free)
		}, fn)
	}
	r, gz, err := maybeGunzip(rc)
	d.gzip = gz
	if err != nil {
		return Stats{}, fmt.Errorf("%w: %s: %v", ErrBadInput, src.Name, err)
	}
	// A plain stream is already buffered (maybeGunzip); a gzip one is
	// buffered here, to peek at its first bytes.
	br, buffered := r.(*bufio.Reader)
	if !buffered {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	r = br
	if prefix, _ := br.Peek(exportPeek); exportKind(prefix) != "" {
		d.export = newExportReader(br, exportKind(prefix))
		r = d.export
	}
	err = d.run(ctx, func(ctx context.Context, bsize int, ordered, jobs chan<- *block, free <-chan *block) {
		readBlocks(ctx, r, bsize, ordered, jobs, free)
	}, fn)
	return d.stats, err
}

// onMapped is called when a file is mapped; tests watch it.
var onMapped = func() {}

// mappable returns rc as a file to map (mapBlocks) and its size, or a
// size of 0: only a regular, non-empty file that is not gzip is mapped,
// and only with Options.Reuse, since a block is unmapped once its events
// are handed on.
func mappable(rc io.ReadCloser, opts Options) (*os.File, int64) {
	f, ok := rc.(*os.File)
	if !ok || !canMap || !opts.Reuse {
		return nil, 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, 0
	}
	var magic [2]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil || magic[0] == 0x1f && magic[1] == 0x8b {
		return nil, 0
	}
	return f, fi.Size()
}

func maybeGunzip(r io.Reader) (io.Reader, bool, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, false, nil
	}
	z, err := gzip.NewReader(br)
	return z, true, err
}

type decoder struct {
	name  string
	opts  Options
	stats Stats
	// gzip is set when the source is gzip: its read errors are the content's.
	gzip bool
	// mapped is set when the source is a mapped file (mapBlocks), batched
	// when it is read a batch at a time (batchBlocks).
	mapped, batched bool
	// export reads a cloud log service's export into lines, when the
	// source is one; errors name the export's lines.
	export *exportReader
	src    Source
}

// producer cuts a stream into blocks (readBlocks, mapBlocks) of bsize
// bytes at most, and sends each to ordered and to jobs.
type producer func(ctx context.Context, bsize int, ordered, jobs chan<- *block, free <-chan *block)

// run feeds blocks to the workers and hands their events on in order.
// Memory is bounded by about 2 x Workers blocks in flight.
func (d *decoder) run(ctx context.Context, produce producer, fn func(*Event) error) (err error) {
	workers := max(d.opts.Workers, 1)
	ctx, cancel := context.WithCancel(ctx)
	ordered, jobs := make(chan *block, workers), make(chan *block, workers)
	// held is the block being handed on.
	var held *block
	if d.mapped || d.batched {
		// On an early return, the blocks not handed on are released once
		// the workers are done (this runs after wg.Wait): unmapped, or
		// their batches given back to the receiver. mapBlocks ends at
		// once when ctx does; batchBlocks at its next batch, which may
		// be long in coming, and is not waited for.
		defer func() {
			if held != nil {
				held.release()
			}
			release := func() {
				for b := range ordered {
					b.release()
				}
			}
			if d.batched {
				go release()
			} else {
				release()
			}
		}()
	}
	// The reader is not waited for: on an early return it may be blocked
	// in a Read of stdin that never ends; it returns at its next send.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// free stays nil without Reuse: every block is then a new one.
	var free chan *block
	if d.opts.Reuse {
		free = make(chan *block, 2*workers+2)
	}
	go produce(ctx, max(blockBytes, MaxLineBytes+2), ordered, jobs, free)
	for range workers {
		wg.Go(func() { d.work(ctx, jobs) })
	}
	for b := range ordered {
		held = b
		select {
		case <-b.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		err := d.handOn(b, fn)
		b.release()
		held = nil
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.batched {
			select {
			case free <- b:
			default:
			}
		}
	}
	return ctx.Err()
}

// work reads the blocks of jobs, each with the same memo, until jobs is
// closed or ctx ends.
func (d *decoder) work(ctx context.Context, jobs <-chan *block) {
	memo := newValueMemo()
	for {
		select {
		case b, ok := <-jobs:
			if !ok {
				return
			}
			switch {
			case b.mapped != nil:
				b.decodeMapped(d.opts, memo)
			case b.read:
				b.hash(d.opts)
			default:
				b.decode(d.opts, memo)
			}
			close(b.done)
		case <-ctx.Done():
			return
		}
	}
}

// handOn calls fn with b's events and reports b's error, if any. The
// events of a mapped block may fault (see errShrank).
func (d *decoder) handOn(b *block, fn func(*Event) error) (err error) {
	var fault error
	if b.mapped != nil {
		defer func() {
			if fault != nil {
				err = fmt.Errorf("%s: %w", d.name, fault)
			}
		}()
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer faulted(&fault, b.mapped)
	}
	before := d.stats.Lines
	for i := range b.events {
		if err := fn(&b.events[i]); err != nil {
			return err
		}
	}
	d.stats.Add(b.stats)
	switch {
	case b.errMsg != "":
		return d.errorf(before+b.errLine, "%s", b.errMsg)
	case b.readErr != nil && errors.As(b.readErr, new(*exportError)):
		var e *exportError
		errors.As(b.readErr, &e)
		return fmt.Errorf("%w: %s:%d: %s", ErrBadInput, d.name, e.line, e.msg)
	case b.readErr != nil && d.gzip:
		return d.errorf(d.stats.Lines, "the gzip stream is cut short or corrupt (%v): copy the file again", b.readErr)
	case b.readErr != nil:
		return fmt.Errorf("%s: %w", d.name, b.readErr)
	}
	return nil
}

func (d *decoder) errorf(line int, format string, args ...any) error {
	if d.export != nil && line >= 1 && line <= len(d.export.lines) {
		// The line of the event in the export, not in the lines made of it.
		line = d.export.lines[line-1]
	}
	return fmt.Errorf("%w: %s:%d: %s", ErrBadInput, d.name, line, fmt.Sprintf(format, args...))
}
