package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// File is a file, FIFO, pipe or standard input read under a context: once
// the context is done, Read returns an error that wraps the context's
// error and names the file, also when the read was waiting for a writer.
//
// How a read that waits is stopped depends on what is read: a regular file
// never waits, so the context is checked before each read; a FIFO, pipe or
// socket that Go's poller takes gets a read deadline in the past when the
// context is done; anything else (standard input from a terminal or a
// blocking pipe, a device, an io.Reader) is read in a goroutine that Read
// stops waiting for. Such a goroutine stays in its read until the read
// returns; the process is about to exit when that happens.
type File struct {
	name string
	ctx  context.Context
	r    io.Reader
	// f is the file Open opened, closed by Close; nil for standard input.
	f *os.File
	// stop ends the context.AfterFunc that sets the deadline, if any.
	stop  func() bool
	async *asyncReader
}

// Open opens path for reading under ctx; "-" reads stdin. Opening a FIFO
// waits for a writer, as reading it would; that wait stops with ctx too.
// Errors are the os package's (*fs.PathError) or, when ctx is done, one
// that wraps ctx's error.
func Open(ctx context.Context, path string, stdin io.Reader) (*File, error) {
	if path == "-" {
		return NewReader(ctx, path, stdin), nil
	}
	f, err := openFile(ctx, path)
	if err != nil {
		return nil, err
	}
	fl := NewReader(ctx, path, f)
	fl.f = f
	return fl, nil
}

// NewReader reads r under ctx, naming it name in errors ("-" is standard
// input). Close does not close r.
func NewReader(ctx context.Context, name string, r io.Reader) *File {
	fl := &File{name: name, ctx: ctx, r: r}
	f, ok := r.(*os.File)
	if !ok {
		fl.async = &asyncReader{r: r}
		return fl
	}
	st, err := f.Stat()
	switch {
	case err == nil && st.Mode().IsRegular():
	case f.SetReadDeadline(time.Time{}) == nil:
		fl.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	default:
		fl.async = &asyncReader{r: f}
	}
	return fl
}

// openFile opens path; a FIFO is opened in a goroutine, since open(2)
// waits there for a writer and nothing but a writer ends that wait.
func openFile(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				_ = o.f.Close()
			}
		}()
		return nil, stopped(path, ctx)
	}
}

// Name is the name the file was opened or wrapped with.
func (f *File) Name() string { return f.name }

// Read reads as the underlying reader does, until ctx is done.
func (f *File) Read(p []byte) (int, error) {
	if f.ctx.Err() != nil {
		return 0, stopped(f.name, f.ctx)
	}
	var n int
	var err error
	if f.async != nil {
		n, err = f.async.read(f.ctx, p)
	} else {
		n, err = f.r.Read(p)
	}
	if err != nil && !errors.Is(err, io.EOF) && f.ctx.Err() != nil {
		return n, stopped(f.name, f.ctx)
	}
	return n, err
}

// Seek seeks the underlying reader when it can (a regular file), so that
// a reader that reads a file twice (inspect.ReplayRecording) still can.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if s, ok := f.r.(io.Seeker); ok && f.async == nil {
		return s.Seek(offset, whence)
	}
	return 0, fmt.Errorf("%s: %w", Display(f.name), errors.ErrUnsupported)
}

// Close closes the file Open opened; it leaves standard input and a
// reader given to NewReader open.
func (f *File) Close() error {
	if f.stop != nil {
		f.stop()
	}
	if f.f != nil {
		return f.f.Close()
	}
	return nil
}

// stopped is the error of a read that ctx stopped.
func stopped(name string, ctx context.Context) error {
	return fmt.Errorf("%s: reading stopped: %w", Display(name), ctx.Err())
}

// Display is name as messages show it: "-" is <stdin>, and control
// characters are escaped.
func Display(name string) string {
	if name == "-" {
		return "<stdin>"
	}
	return text.Escape(name)
}

// asyncReader reads in a goroutine, so that the caller can stop waiting
// for a read that blocks and cannot be interrupted.
type asyncReader struct {
	r io.Reader
	// buf is what the goroutine reads into; it is dropped when a read is
	// abandoned, since that goroutine may still write to it.
	buf []byte
}

type readResult struct {
	n   int
	err error
}

func (a *asyncReader) read(ctx context.Context, p []byte) (int, error) {
	if cap(a.buf) < len(p) {
		a.buf = make([]byte, len(p))
	}
	buf := a.buf[:len(p)]
	done := make(chan readResult, 1)
	go func() {
		n, err := a.r.Read(buf)
		done <- readResult{n, err}
	}()
	select {
	case res := <-done:
		return copy(p, buf[:res.n]), res.err
	case <-ctx.Done():
		a.buf = nil
		return 0, ctx.Err()
	}
}
