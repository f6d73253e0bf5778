package audit

import (
	"io"
	"sync"
)

// batchStream is a live stream that hands on its lines a batch at a time,
// each with its events already read (Decode then reads none of its
// lines), and is the same stream as bytes (Read) for a reader of lines.
type batchStream interface {
	io.Reader
	// next returns the next batch; false at the stream's end.
	next() (eventBatch, bool)
}

// eventBatch is whole lines of a log and their events, in order; events
// is nil when the lines are to be read (what was left of a batch that
// Read had begun). release(reuse) gives the batch's memory back once its
// events are handed on: for reuse when the reader copies what it keeps
// (Options.Reuse), else to the collector only.
type eventBatch struct {
	lines   []byte
	events  []Event
	release func(reuse bool)
}

// liveBatches is a receiver's stream (Listener.Source): the batches
// drain hands on.
type liveBatches struct {
	l  *Listener
	mu sync.Mutex
	// cur is the batch Read is in, rest the part of its lines not read.
	cur  *batch
	rest []byte
}

func (s *liveBatches) next() (eventBatch, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.cur; b != nil {
		s.cur = nil
		if len(s.rest) > 0 {
			// Read began it: the rest of its lines, to be read.
			rest := s.rest
			s.rest = nil
			return eventBatch{lines: rest, release: s.releaser(b)}, true
		}
		s.l.putBatch(b)
	}
	b, ok := <-s.l.out
	if !ok {
		return eventBatch{}, false
	}
	return eventBatch{lines: b.lines, events: b.events, release: s.releaser(b)}, true
}

// releaser returns b's release: back to the receiver for another batch,
// or, when its events may still be in use, its memory uncounted.
func (s *liveBatches) releaser(b *batch) func(bool) {
	return func(reuse bool) {
		if reuse {
			s.l.putBatch(b)
		} else {
			s.l.mem.give(b.held)
		}
	}
}

func (s *liveBatches) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.rest) == 0 {
		if s.cur != nil {
			s.l.putBatch(s.cur)
			s.cur = nil
		}
		b, ok := <-s.l.out
		if !ok {
			return 0, io.EOF
		}
		s.cur, s.rest = b, b.lines
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}
