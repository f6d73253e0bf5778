package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	s.Lines += o.Lines
	s.Events += o.Events
	s.OtherStages += o.OtherStages
	s.Skipped += o.Skipped
	s.Truncated += o.Truncated
}

// Decode reads src line by line and calls fn with each ResponseComplete or
// Panic event, in the log's order. The Event is reused: fn must copy what it
// keeps. Errors about the content wrap ErrBadInput and name src:line.
func Decode(ctx context.Context, src Source, opts Options, fn func(*Event) error) (Stats, error) {
	rc, err := src.open()
	if err != nil {
		return Stats{}, err
	}
	defer func() { _ = rc.Close() }()
	d := &decoder{name: src.Name, opts: opts, fn: fn, src: src}
	r, gz, err := maybeGunzip(rc)
	d.gzip = gz
	if err != nil {
		return Stats{}, fmt.Errorf("%w: %s: %v", ErrBadInput, src.Name, err)
	}
	err = d.run(ctx, bufio.NewReaderSize(r, 256<<10))
	return d.stats, err
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
	fn    func(*Event) error
	stats Stats
	wire  wireEvent
	ev    Event
	long  []byte
	// gzip is set when the source is gzip: its read errors are the content's.
	gzip bool
	src  Source
}

func (d *decoder) run(ctx context.Context, r *bufio.Reader) error {
	for {
		if d.stats.Lines%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, complete, err := d.readLine(r)
		if len(line) > 0 || complete {
			d.stats.Lines++
			if lerr := d.line(line, complete); lerr != nil {
				return lerr
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, ErrBadInput):
			return err
		case d.gzip && err != nil:
			return d.errorf(d.stats.Lines, "the gzip stream is cut short or corrupt (%v): copy the file again", err)
		case err != nil:
			return fmt.Errorf("%s: %w", d.name, err)
		}
	}
}

// readLine returns the next line without its newline; complete is false for
// a last line that has no newline.
func (d *decoder) readLine(r *bufio.Reader) (line []byte, complete bool, err error) {
	d.long = d.long[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			d.long = append(d.long, chunk...)
			if len(d.long) > MaxLineBytes {
				return nil, false, d.errorf(d.stats.Lines+1, "line longer than %d bytes: this is not an audit log, or its level is too verbose", MaxLineBytes)
			}
			continue
		}
		if len(d.long) > 0 {
			chunk = append(d.long, chunk...)
		}
		line := bytes.TrimSuffix(chunk, []byte{'\n'})
		if len(line) > MaxLineBytes {
			return nil, false, d.errorf(d.stats.Lines+1, "line longer than %d bytes: this is not an audit log, or its level is too verbose", MaxLineBytes)
		}
		if err != nil {
			return line, false, err
		}
		return line, true, nil
	}
}

func (d *decoder) line(line []byte, complete bool) error {
	n := d.stats.Lines
	if len(bytes.TrimSpace(line)) == 0 {
		if d.opts.Strict {
			return d.errorf(n, "blank line (--strict)")
		}
		d.stats.Skipped++
		return nil
	}
	d.wire = wireEvent{}
	if err := json.Unmarshal(line, &d.wire); err != nil {
		if !complete {
			if d.opts.Strict {
				return d.errorf(n, "the last line is cut short (--strict): %v", err)
			}
			d.stats.Truncated++
			return nil
		}
		return d.errorf(n, "not JSON (%v): give the API server's --audit-log-path file, in its json format", err)
	}
	if err := d.check(); err != nil {
		return d.errorf(n, "%v", err)
	}
	if d.wire.Stage != StageResponseComplete && d.wire.Stage != StagePanic {
		d.stats.OtherStages++
		return nil
	}
	d.stats.Events++
	d.ev = d.wire.event()
	return d.fn(&d.ev)
}

func (d *decoder) check() error {
	w := &d.wire
	switch {
	case w.Kind != "Event":
		return fmt.Errorf("not an audit event (kind %q): give the API server's --audit-log-path file", w.Kind)
	case w.APIVersion == "audit.k8s.io/v1":
		return nil
	case w.APIVersion == "audit.k8s.io/v1beta1":
		return fmt.Errorf("audit.k8s.io/v1beta1 is not supported: run the API server with --audit-log-version=audit.k8s.io/v1 (the default)")
	}
	return fmt.Errorf("apiVersion %q is not audit.k8s.io/v1", w.APIVersion)
}

func (d *decoder) errorf(line int, format string, args ...any) error {
	if d.src.from > 0 {
		line += linesBefore(d.src.path, d.src.from)
	}
	return fmt.Errorf("%w: %s:%d: %s", ErrBadInput, d.name, line, fmt.Sprintf(format, args...))
}
