package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
)

// Spool keeps a copy of a stream that cannot be read twice (stdin, a
// receiver's stream) while it is read, in a temporary file that no other
// process can open (it is removed as soon as it is made, where the system
// allows; else by Close), so that an analysis that needs the stream a
// second time (a log out of time order) can have it without keeping the
// stream in memory.
//
// Example: conflicts --audit-log - reads stdin through Spool.Source; the
// bounded analysis finds the log out of order and stops; Rest reads what
// is left of stdin into the copy and returns a source that reads the copy
// from its start, as many times as needed.
//
// The copy of a receiver's stream (Listener.Source) is bounded: it stops
// at ListenConfig.MaxSpool bytes, or when the disk is full, and the
// receiver is told (it then drops late events, so that the analysis need
// not read the stream again for them). Rest then returns what it still
// can: the copy followed by the rest of the live stream, read once, with
// the events read once and not kept counted as lost (liveStream.lost).
type Spool struct {
	src Source
	mu  sync.Mutex
	in  io.Reader
	// batches is in, when the stream is read a batch at a time.
	batches batchStream
	file    *os.File
	// w writes the copy: the file (a test puts a full disk there).
	w io.Writer
	// size is what the copy holds, lineEnd how much of it ends in whole
	// lines; err is the first error writing it.
	size, lineEnd int64
	err           error
	// max bounds the copy of a live stream (0: no bound).
	max int64
	// stopped says why a live stream's copy stopped short ("" while it
	// keeps up); lostLines counts the line ends read after it stopped;
	// midLine says the last byte read was not a line end; eof that the
	// stream's end was read.
	stopped   string
	lostLines int64
	midLine   bool
	eof       bool
	// done: Rest has read the stream to its end, or given the rest of
	// it away; reads of Source end.
	done    bool
	removed bool
}

// ErrSpoolFull says that a live stream's copy stopped short (its cap, or
// a full disk), and the stream cannot be read again from its start.
var ErrSpoolFull = errors.New("the copy of the received events stopped short")

// DefaultMaxSpool is ListenConfig.MaxSpool's default.
const DefaultMaxSpool = 1 << 30

// NewSpool returns a spool of src; its copy goes to dir (os.TempDir when
// "").
func NewSpool(src Source, dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "kubectl-rv-audit-*.log")
	if err != nil {
		return nil, fmt.Errorf("%s: keeping a copy of the stream to read it twice: %w", src.Name, err)
	}
	sp := &Spool{src: src, file: f, w: f}
	if src.live != nil {
		sp.max = src.live.maxSpool
	}
	sp.removed = os.Remove(f.Name()) == nil
	return sp, nil
}

// Source reads the stream once, copying what it reads.
func (sp *Spool) Source() Source {
	src := Source{Name: sp.src.Name, spooled: true, open: func() (io.ReadCloser, error) {
		sp.mu.Lock()
		defer sp.mu.Unlock()
		if sp.in != nil {
			return nil, errors.New("audit: a spool's stream is read once")
		}
		in, err := sp.src.open()
		if err != nil {
			return nil, err
		}
		sp.in = in
		return io.NopCloser(spoolReader{sp}), nil
	}}
	if sp.src.batches != nil {
		src.batches = func() (batchStream, error) {
			sp.mu.Lock()
			defer sp.mu.Unlock()
			if sp.in != nil {
				return nil, errors.New("audit: a spool's stream is read once")
			}
			bs, err := sp.src.batches()
			if err != nil {
				return nil, err
			}
			// Rest reads what is left of it as bytes.
			sp.in, sp.batches = bs, bs
			return spoolReader{sp}, nil
		}
	}
	return src
}

// spoolReader reads the stream, as bytes or batches, copying what it
// reads.
type spoolReader struct{ sp *Spool }

func (r spoolReader) Read(p []byte) (int, error) {
	sp := r.sp
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.done {
		return 0, io.EOF
	}
	n, err := sp.in.Read(p)
	sp.took(p[:n])
	sp.eof = errors.Is(err, io.EOF)
	return n, err
}

func (r spoolReader) next() (eventBatch, bool) {
	sp := r.sp
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.done {
		return eventBatch{}, false
	}
	b, ok := sp.batches.next()
	if !ok {
		sp.eof = true
		return b, false
	}
	sp.took(b.lines)
	return b, true
}

// took copies what was read, as much as the copy may hold. sp.mu is
// held.
func (sp *Spool) took(p []byte) {
	kept := sp.keep(p)
	if sp.stopped != "" {
		// Read once, not kept: lost to a second reading.
		sp.lostLines += int64(bytes.Count(p[kept:], newline))
	}
	if len(p) > 0 {
		sp.midLine = p[len(p)-1] != '\n'
	}
}

// keep appends as much of b to the copy as it may hold and returns how
// much. The first error stops the copy: for a live stream, its cap or a
// full disk only stops it (stopped).
func (sp *Spool) keep(b []byte) int {
	if len(b) == 0 || sp.stopped != "" || sp.err != nil {
		return 0
	}
	w := b
	if sp.max > 0 && sp.size+int64(len(b)) > sp.max {
		w = b[:sp.max-sp.size]
	}
	n, err := sp.w.Write(w)
	if i := bytes.LastIndexByte(w[:n], '\n'); i >= 0 {
		sp.lineEnd = sp.size + int64(i) + 1
	}
	sp.size += int64(n)
	switch {
	case err == nil && n < len(b):
		sp.stop(fmt.Sprintf("the copy reached --spool-max (%s)", byteSize(sp.max)))
	case err == nil:
	case sp.src.live != nil && errors.Is(err, syscall.ENOSPC):
		sp.stop(fmt.Sprintf("the disk of %s is full", sp.file.Name()))
	default:
		sp.err = err
	}
	return n
}

// byteSize is n in MiB, or in bytes when less.
func byteSize(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

var newline = []byte{'\n'}

// stop stops a live stream's copy and tells the receiver.
func (sp *Spool) stop(reason string) {
	sp.stopped = reason
	if sp.src.live.stopped != nil {
		sp.src.live.stopped(reason)
	}
}

// Rest reads what is left of the stream into the copy and returns a
// source that reads the whole copy, again each time it is opened.
//
// When a live stream's copy stops short, the source it returns is read
// once: the copy's whole lines, then what is left of the stream (from the
// next line on), the events between them counted as lost. A stream
// already read to its end then has nothing left to give: Rest fails with
// ErrSpoolFull.
func (sp *Spool) Rest() (Source, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.done {
		sp.done = true
		if sp.in == nil {
			in, err := sp.src.open()
			if err != nil {
				return Source{}, err
			}
			sp.in = in
		}
		switch {
		case sp.stopped != "" && sp.eof:
			// Nothing left to give: ErrSpoolFull below.
		case sp.stopped != "":
			return sp.unsafeOnce(sp.lineEnd, nil, sp.midLine), nil
		default:
			if src, ok, err := sp.unsafeCopyRest(); ok || err != nil {
				return src, err
			}
		}
	}
	if sp.err != nil {
		return Source{}, fmt.Errorf("%s: keeping a copy of the stream to read it twice (in %s): %w", sp.src.Name, sp.file.Name(), sp.err)
	}
	if sp.stopped != "" {
		return Source{}, fmt.Errorf("%s: %w (%s), and the stream has been read to its end: give a larger --spool-max, or a TMPDIR with room", sp.src.Name, ErrSpoolFull, sp.stopped)
	}
	f, size := sp.file, sp.size
	return Source{Name: sp.src.Name, copied: true, open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(f, 0, size)), nil
	}}, nil
}

// unsafeCopyRest reads the rest of the stream into the copy; ok says the
// copy stopped on the way, and src is then the copy and the rest, read
// once. sp.mu is held.
func (sp *Spool) unsafeCopyRest() (src Source, ok bool, err error) {
	buf := make([]byte, 1<<20)
	for sp.err == nil {
		n, rerr := sp.in.Read(buf)
		kept := sp.keep(buf[:n])
		if sp.stopped != "" {
			// Nothing is lost: the copy, what this read did not keep,
			// then the stream.
			return sp.unsafeOnce(sp.size, bytes.Clone(buf[kept:n]), false), true, nil
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return Source{}, false, fmt.Errorf("%s: %w", sp.src.Name, rerr)
		}
	}
	return Source{}, false, nil
}

// unsafeOnce returns a source read once: the first n bytes of the copy,
// pending, then what is left of the stream (after the end of the line it
// is in, when skip says the stream stopped in one). The lines read once
// and not in it are counted as lost. sp.mu is held.
func (sp *Spool) unsafeOnce(n int64, pending []byte, skip bool) Source {
	lost := sp.lostLines
	var rest io.Reader = sp.in
	if skip {
		lost++
		rest = &afterLine{r: sp.in}
	}
	if n < sp.size {
		// The disk past the whole lines is not needed again.
		_ = sp.file.Truncate(n)
	}
	if lost > 0 && sp.src.live.lost != nil {
		sp.src.live.lost(lost)
	}
	var opened atomic.Bool
	f, name := sp.file, sp.src.Name
	return Source{Name: name, open: func() (io.ReadCloser, error) {
		if opened.Swap(true) {
			return nil, fmt.Errorf("%s: %w: what is left of it is read once", name, ErrSpoolFull)
		}
		return io.NopCloser(io.MultiReader(io.NewSectionReader(f, 0, n), bytes.NewReader(pending), rest)), nil
	}}
}

// afterLine reads r from after its first line end.
type afterLine struct {
	r    io.Reader
	past bool
}

func (a *afterLine) Read(p []byte) (int, error) {
	for !a.past {
		n, err := a.r.Read(p)
		if i := bytes.IndexByte(p[:n], '\n'); i >= 0 {
			a.past = true
			return copy(p, p[i+1:n]), err
		}
		if err != nil {
			return 0, err
		}
	}
	return a.r.Read(p)
}

// Close removes the copy.
func (sp *Spool) Close() error {
	err := sp.file.Close()
	if !sp.removed {
		if rerr := os.Remove(sp.file.Name()); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}
