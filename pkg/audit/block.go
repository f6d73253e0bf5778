package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
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
	// none (final). A block of a mapped file (mapBlocks) has no buf: data
	// is in mapped, which release unmaps.
	buf     []byte
	mapped  []byte
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
	// read says the events are given with the lines (batchBlocks): they
	// are hashed, not read again. batch, when set, gives the batch's
	// memory back (release).
	read  bool
	batch func()
}

// getBlock returns an empty block of size bytes (none for 0): one from
// free (blocks whose events were handed on, with Options.Reuse) or a new
// one.
func getBlock(free <-chan *block, size int) *block {
	select {
	case b := <-free:
		*b = block{buf: b.buf, events: b.events[:0], done: make(chan struct{})}
		return b
	default:
		b := &block{done: make(chan struct{})}
		if size > 0 {
			b.buf = make([]byte, size)
		}
		return b
	}
}

// release unmaps a mapped block's lines: its events' strings are then
// gone.
func (b *block) release() {
	if b.mapped != nil {
		unmap(b.mapped)
		b.mapped, b.data = nil, ""
	}
	if b.batch != nil {
		b.batch()
		b.batch, b.data, b.events = nil, "", nil
	}
}

// batchBlocks makes a block of each batch of bs, until its end, and sends
// it to ordered and to jobs as readBlocks does. A block whose events come
// with it is read: the workers only hash them (block.hash). reuse is
// Options.Reuse.
func batchBlocks(ctx context.Context, bs batchStream, reuse bool, ordered, jobs chan<- *block) {
	defer close(ordered)
	defer close(jobs)
	for ctx.Err() == nil {
		eb, ok := bs.next()
		if !ok {
			return
		}
		b := &block{data: unsafe.String(unsafe.SliceData(eb.lines), len(eb.lines)), events: eb.events, read: eb.events != nil,
			batch: func() { eb.release(reuse) }, done: make(chan struct{})}
		if !sendBlock(ctx, b, ordered, jobs) {
			return
		}
	}
}

// hash counts a read block's lines and events, and sets the hashes Decode
// sets (see decode).
func (b *block) hash(opts Options) {
	b.stats.Lines, b.stats.Events = len(b.events), len(b.events)
	for i := range b.events {
		e := &b.events[i]
		e.idHash = 0
		if e.AuditID != "" {
			e.idHash = idHash(e)
		}
		if opts.KeyHashes {
			e.objHash, e.clientHash = objectHash(e), clientHash(e)
		}
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
		if !sendBlock(ctx, b, ordered, jobs) || next == nil {
			return
		}
		b, n = next, carry
	}
}

// mapBlocks does what readBlocks does for a regular file of size bytes,
// with each block a map of the file's lines (mapRange) instead of a copy:
// the kernel does not copy the file's bytes, and a block's lines are
// unmapped (release) once its events are handed on. A file that grew
// while it was read is read on to its new end, as readBlocks reads to the
// end of what is written.
func mapBlocks(ctx context.Context, f *os.File, size int64, bsize int, ordered, jobs chan<- *block, free <-chan *block) {
	defer close(ordered)
	defer close(jobs)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	page := int64(os.Getpagesize())
	for off := int64(0); ; {
		end := min(off+int64(bsize), size)
		if end == size {
			if fi, err := f.Stat(); err == nil && fi.Size() > size {
				size = fi.Size()
				continue
			}
		}
		b := getBlock(free, 0)
		base := off &^ (page - 1)
		m, err := mapRange(f, base, int(end-base))
		switch {
		case err != nil:
			b.final, b.readErr = true, err
		case end == size:
			b.mapped, b.final = m, true
			b.data = unsafe.String(unsafe.SliceData(m[off-base:]), end-off)
		default:
			b.mapped = m
			switch i, err := lastNewline(m[off-base:]); {
			case err != nil:
				b.release()
				b.final, b.readErr = true, err
			case i < 0:
				b.tooLong = true
			default:
				b.data = unsafe.String(unsafe.SliceData(m[off-base:]), i+1)
			}
		}
		// Read before the send: once sent, the block is the workers' and
		// then the hand-on's, which releases it.
		last, n := b.final || b.tooLong, int64(len(b.data))
		if !sendBlock(ctx, b, ordered, jobs) || last {
			return
		}
		off += n
	}
}

// errShrank is the error of a mapped file that shrank while it was read:
// reading its lost pages faults (SIGBUS), which SetPanicOnFault turns into
// a panic that faulted recovers.
var errShrank = errors.New("the file shrank while it was read (truncated, or rotated by copying and truncating): read it again, or a copy of it")

// faulted recovers the panic of a fault reading the mapped memory mem
// (see errShrank) into *err; another panic, a fault elsewhere included,
// goes on. It is deferred after debug.SetPanicOnFault(true).
func faulted(err *error, mem []byte) {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(interface{ Addr() uintptr })
	if !ok || len(mem) == 0 {
		panic(r)
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	if a := f.Addr(); a < start || a-start >= uintptr(len(mem)) {
		panic(r)
	}
	*err = errShrank
}

// lastNewline is the index of b's last '\n' (-1 for none), or errShrank
// when reading b faults.
func lastNewline(b []byte) (i int, err error) {
	defer faulted(&err, b)
	return bytes.LastIndexByte(b, '\n'), nil
}

// decodeMapped decodes a mapped block as decode does; a fault ends it
// with errShrank and no events.
func (b *block) decodeMapped(opts Options, memo *valueMemo) {
	var err error
	defer func() {
		if err != nil {
			b.events, b.readErr, b.errMsg = b.events[:0], err, ""
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer faulted(&err, b.mapped)
	b.decode(opts, memo)
}

// sendBlock sends b to ordered (the hand-on order) and to jobs (the
// workers); false says ctx ended first. A mapped block not sent to ordered
// is released here: nothing else will.
func sendBlock(ctx context.Context, b *block, ordered, jobs chan<- *block) bool {
	for _, ch := range []chan<- *block{ordered, jobs} {
		select {
		case ch <- b:
		case <-ctx.Done():
			if ch == ordered {
				b.release()
			}
			return false
		}
	}
	return true
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
			e := &b.events[events]
			if e.AuditID != "" {
				e.idHash = idHash(e)
			}
			if opts.KeyHashes {
				e.objHash, e.clientHash = objectHash(e), clientHash(e)
			}
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
	host := ""
	if line[0] != '{' {
		host, line = cutHost(line)
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
	ev.Host = host
	b.stats.Events++
	return true, ""
}

// cutHost splits a line that oc adm node-logs prints, HOST {json} (the
// API server replica that logged the event, then the event), into the
// host and the event; a line of another shape is returned as it is, for
// the decoder to name what is wrong with it.
func cutHost(line string) (host, rest string) {
	i := strings.IndexByte(line, ' ')
	if i <= 0 || i+1 >= len(line) || line[i+1] != '{' || strings.ContainsAny(line[:i], "{}\"\t") {
		return "", line
	}
	return line[:i], line[i+1:]
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
