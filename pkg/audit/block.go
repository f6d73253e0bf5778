package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"
)

// blockBytes is the size of the blocks a stream is cut into; it must be
// larger than MaxLineBytes so that a block without a newline is a line too
// long. Tests lower it.
var blockBytes = 2 << 20

// block is a run of whole lines of a stream, decoded by one worker.
type block struct {
	// buf is the block's own memory; data is the part of it that holds
	// lines ending in '\n', except the stream's last line, which may have
	// none (final).
	buf     []byte
	data    string
	final   bool
	tooLong bool
	// readErr is the error that ended the stream after data.
	readErr error
	// Filled by the worker; errLine counts from the block's first line.
	events  []Event
	stats   Stats
	errLine int
	errMsg  string
	done    chan struct{}
}

// getBlock returns an empty block of size bytes: one from free (blocks
// whose events were handed on, with Options.Reuse) or a new one.
func getBlock(free <-chan *block, size int) *block {
	select {
	case b := <-free:
		*b = block{buf: b.buf, events: b.events[:0], done: make(chan struct{})}
		return b
	default:
		return &block{buf: make([]byte, size), done: make(chan struct{})}
	}
}

// readBlocks cuts r into blocks at line ends and sends each to ordered
// (the hand-on order) and to jobs (the workers). A block's buffer is not
// written again while the block is in use: the events' strings point into
// it. The end of a line cut by a block's end is copied to the next block
// before the block is sent, so that a block may be reused (free) as soon
// as its events are handed on.
//
// size is read from blockBytes by the caller: this goroutine may outlive
// Decode, and must not read package state a test restores afterwards.
func readBlocks(ctx context.Context, r io.Reader, size int, ordered, jobs chan<- *block, free <-chan *block) {
	defer close(ordered)
	defer close(jobs)
	b, n := getBlock(free, size), 0
	for {
		m, err := fill(r, b.buf[n:])
		n += m
		var next *block
		carry := 0
		switch i := bytes.LastIndexByte(b.buf[:n], '\n'); {
		case err != nil:
			b.data, b.final = unsafe.String(unsafe.SliceData(b.buf), n), true
			if !errors.Is(err, io.EOF) {
				b.readErr = err
			}
		case i < 0:
			b.tooLong = true
		default:
			b.data = unsafe.String(unsafe.SliceData(b.buf), i+1)
			next = getBlock(free, size)
			carry = copy(next.buf, b.buf[i+1:n])
		}
		for _, ch := range []chan<- *block{ordered, jobs} {
			select {
			case ch <- b:
			case <-ctx.Done():
				return
			}
		}
		if next == nil {
			return
		}
		b, n = next, carry
	}
}

// fill reads until buf is full or r fails; io.EOF ends the stream.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// decode decodes every line of b, stopping at the first bad one.
func (b *block) decode(opts Options, memo *valueMemo) {
	if b.tooLong {
		b.stats.Lines = 1
		b.fail(fmt.Sprintf("line longer than %d bytes: this is not an audit log, or its level is too verbose", MaxLineBytes))
		return
	}
	events := 0
	for data := b.data; len(data) > 0; {
		line, complete := data, false
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			line, data, complete = data[:i], data[i+1:], true
		} else {
			data = ""
		}
		b.stats.Lines++
		if len(b.events) == events {
			b.events = append(b.events, Event{})
		}
		kept, msg := b.line(line, complete, opts, memo, &b.events[events])
		if msg != "" {
			b.fail(msg)
			break
		}
		if kept {
			events++
		}
	}
	b.events = b.events[:events]
}

func (b *block) fail(msg string) {
	b.errLine, b.errMsg = b.stats.Lines, msg
}

// line decodes one line into ev; kept says whether ev is to be handed
// on; msg is the error about a bad line, "" for none.
func (b *block) line(line string, complete bool, opts Options, memo *valueMemo, ev *Event) (kept bool, msg string) {
	if len(line) > MaxLineBytes {
		return false, fmt.Sprintf("line longer than %d bytes: this is not an audit log, or its level is too verbose", MaxLineBytes)
	}
	if len(strings.TrimSpace(line)) == 0 {
		if opts.Strict {
			return false, "blank line (--strict)"
		}
		b.stats.Skipped++
		return false, ""
	}
	kind, apiVersion, ok := scanEvent(line, ev, memo)
	if !ok {
		var w wireEvent
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			if complete {
				return false, fmt.Sprintf("not JSON (%v): give the API server's --audit-log-path file, in its json format", err)
			}
			if opts.Strict {
				return false, fmt.Sprintf("the last line is cut short (--strict): %v", err)
			}
			b.stats.Truncated++
			return false, ""
		}
		kind, apiVersion, *ev = w.Kind, w.APIVersion, w.event()
	}
	if err := check(kind, apiVersion); err != nil {
		return false, err.Error()
	}
	if ev.Stage != StageResponseComplete && ev.Stage != StagePanic {
		b.stats.OtherStages++
		return false, ""
	}
	b.stats.Events++
	return true, ""
}

func check(kind, apiVersion string) error {
	switch {
	case kind != "Event":
		return fmt.Errorf("not an audit event (kind %q): give the API server's --audit-log-path file", kind)
	case apiVersion == "audit.k8s.io/v1":
		return nil
	case apiVersion == "audit.k8s.io/v1beta1":
		return fmt.Errorf("audit.k8s.io/v1beta1 is not supported: run the API server with --audit-log-version=audit.k8s.io/v1 (the default)")
	}
	return fmt.Errorf("apiVersion %q is not audit.k8s.io/v1", apiVersion)
}
