package audit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Spool keeps a copy of a stream that cannot be read twice (stdin) while
// it is read, in a temporary file that no other process can open (it is
// removed as soon as it is made, where the system allows; else by Close),
// so that an analysis that needs the stream a second time (a log out of
// time order) can have it without keeping the stream in memory.
//
// Example: conflicts --audit-log - reads stdin through Spool.Source; the
// bounded analysis finds the log out of order and stops; Rest reads what
// is left of stdin into the copy and returns a source that reads the copy
// from its start, as many times as needed.
type Spool struct {
	src  Source
	mu   sync.Mutex
	in   io.ReadCloser
	file *os.File
	// size is what the copy holds; err is the first error writing it.
	size int64
	err  error
	// done: Rest has read the stream to its end; reads of Source end.
	done    bool
	removed bool
}

// NewSpool returns a spool of src; its copy goes to dir (os.TempDir when
// "").
func NewSpool(src Source, dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "kubectl-rv-audit-*.log")
	if err != nil {
		return nil, fmt.Errorf("%s: keeping a copy of the stream to read it twice: %w", src.Name, err)
	}
	sp := &Spool{src: src, file: f}
	sp.removed = os.Remove(f.Name()) == nil
	return sp, nil
}

// Source reads the stream once, copying what it reads.
func (sp *Spool) Source() Source {
	return Source{Name: sp.src.Name, spooled: true, open: func() (io.ReadCloser, error) {
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
}

type spoolReader struct{ sp *Spool }

func (r spoolReader) Read(p []byte) (int, error) {
	sp := r.sp
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.done {
		return 0, io.EOF
	}
	n, err := sp.in.Read(p)
	sp.keep(p[:n])
	return n, err
}

// keep appends b to the copy; the first error stops the copy.
func (sp *Spool) keep(b []byte) {
	if sp.err != nil || len(b) == 0 {
		return
	}
	n, err := sp.file.Write(b)
	sp.size += int64(n)
	sp.err = err
}

// Rest reads what is left of the stream into the copy and returns a
// source that reads the whole copy, again each time it is opened.
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
		buf := make([]byte, 1<<20)
		for sp.err == nil {
			n, err := sp.in.Read(buf)
			sp.keep(buf[:n])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return Source{}, fmt.Errorf("%s: %w", sp.src.Name, err)
			}
		}
	}
	if sp.err != nil {
		return Source{}, fmt.Errorf("%s: keeping a copy of the stream to read it twice (in %s): %w", sp.src.Name, sp.file.Name(), sp.err)
	}
	f, size := sp.file, sp.size
	return Source{Name: sp.src.Name, copied: true, open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.NewSectionReader(f, 0, size)), nil
	}}, nil
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
