package audit

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ListenConfig configures an audit webhook receiver (Listen).
type ListenConfig struct {
	// Addr is host:port to listen on.
	Addr string
	// CertFile and KeyFile serve TLS; without them the address must be a
	// loopback one (the API server's webhook sends audit events, which
	// name users and objects, in the clear otherwise).
	CertFile, KeyFile string
	// QueueBatches bounds the batches received but not yet read: a batch
	// that finds the queue full is dropped and counted (Stats), never
	// waited for, so the API server is never held up. 0 is 1024.
	QueueBatches int
	// QueueBytes bounds the bytes of those batches (their bodies) too:
	// the queue is full at QueueBatches or QueueBytes, whichever comes
	// first. 0 is 64 MiB (1024 batches of 400 Metadata-level events are
	// some 500 MiB); see ListenMemory.
	QueueBytes int64
	// Record, when set, receives every event kept, one JSON line each:
	// a log that Open reads back.
	Record io.Writer
}

// ListenStats are what a receiver took in and what it dropped.
type ListenStats struct {
	Batches, Events               int64
	DroppedBatches, DroppedEvents int64
	// Rejected counts requests that were not an audit.k8s.io/v1 EventList.
	Rejected int64
	// QueueBatches and QueueBytes are the queue's capacity, PeakQueued
	// the most batches that waited in it at once.
	QueueBatches int
	QueueBytes   int64
	PeakQueued   int64
}

// Listener receives the API server's audit webhook batches
// (--audit-webhook-config-file naming its URL): each POST carries an
// audit.k8s.io/v1 EventList, answered 200 at once. Its Source yields the
// events as the JSON lines of a log file, so they go through the same
// decoder and analysis as a file; the source ends when Close is called.
type Listener struct {
	srv   *http.Server
	ln    net.Listener
	queue chan *listBatch
	// free holds batches whose memory can be read into again.
	free chan *listBatch
	// reading holds a token for each request whose body is being read.
	reading chan struct{}
	out     *io.PipeReader
	in      *io.PipeWriter
	rec     io.Writer
	url     string

	batches, events, droppedBatches, droppedEvents, rejected, peakQueued atomic.Int64
	// queuedBytes is the size of the bodies in the queue, at most
	// maxQueued.
	queuedBytes atomic.Int64
	maxQueued   int64

	// mu guards closed: a batch is queued under the read lock, the queue
	// closed under the write lock.
	mu        sync.RWMutex
	closed    bool
	closeOnce sync.Once
	drained   chan struct{}
	served    chan error
}

// MaxBatchBytes bounds one POST's body.
const MaxBatchBytes = 64 << 20

// DefaultQueueBytes is ListenConfig.QueueBytes's default.
const DefaultQueueBytes = 64 << 20

// ListenMemory is the memory a receiver holds with the default queue
// full, for batches of up to 4 MiB: the queue's bytes and the bodies
// being read. A memory limit set for the analysis behind it goes up by as
// much: a heap past the limit is collected again and again, on the core
// the analysis needs to catch up.
const ListenMemory = DefaultQueueBytes + readingBatches*maxFreeBody

// readingBatches is how many requests' bodies are read at once.
const readingBatches = 4

// freeBatches is how many batches' memory is kept for the next ones.
const freeBatches = 16

// Listen starts a receiver on cfg.Addr.
func Listen(cfg ListenConfig) (*Listener, error) {
	tlsOn := cfg.CertFile != "" || cfg.KeyFile != ""
	if tlsOn && (cfg.CertFile == "" || cfg.KeyFile == "") {
		return nil, fmt.Errorf("--listen-cert and --listen-key go together")
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: %w (give HOST:PORT, e.g. 127.0.0.1:8443)", cfg.Addr, err)
	}
	if ip := net.ParseIP(host); !tlsOn && (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf("--listen %s: plain HTTP only on a loopback address; give --listen-cert and --listen-key to serve TLS on %s", cfg.Addr, host)
	}
	var tlsCfg *tls.Config
	if tlsOn {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--listen-cert/--listen-key: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.Addr, err)
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	n := cfg.QueueBatches
	if n <= 0 {
		n = 1024
	}
	maxQueued := cfg.QueueBytes
	if maxQueued <= 0 {
		maxQueued = DefaultQueueBytes
	}
	pr, pw := io.Pipe()
	l := &Listener{ln: ln, queue: make(chan *listBatch, n), free: make(chan *listBatch, freeBatches), reading: make(chan struct{}, readingBatches), out: pr, in: pw, rec: cfg.Record, maxQueued: maxQueued,
		drained: make(chan struct{}), served: make(chan error, 1)}
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	l.url = scheme + "://" + ln.Addr().String()
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
	go func() { l.served <- l.srv.Serve(ln) }()
	go l.drain()
	return l, nil
}

// URL is the address the API server's webhook kubeconfig names.
func (l *Listener) URL() string { return l.url }

// Source is the received events as a log: JSON lines, until Close.
func (l *Listener) Source() Source { return NewSource(l.url, l.out) }

// Stats returns the counts so far.
func (l *Listener) Stats() ListenStats {
	return ListenStats{Batches: l.batches.Load(), Events: l.events.Load(), DroppedBatches: l.droppedBatches.Load(),
		DroppedEvents: l.droppedEvents.Load(), Rejected: l.rejected.Load(), QueueBatches: cap(l.queue),
		QueueBytes: l.maxQueued, PeakQueued: l.peakQueued.Load()}
}

// ServeHTTP takes one batch: 200 once it is queued or dropped, 400 for a
// body that is not an EventList, 405 for another method.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		l.rejected.Add(1)
		http.Error(w, "POST an audit.k8s.io/v1 EventList", http.StatusMethodNotAllowed)
		return
	}
	// The bodies in memory are those queued (QueueBytes) and those being
	// read: at most readingBatches at once, the other requests waiting
	// for their turn (a read takes as long as the body takes to read and
	// scan, however far behind the analysis is).
	l.reading <- struct{}{}
	b := l.getBatch()
	err := b.read(http.MaxBytesReader(w, r.Body, MaxBatchBytes), r.ContentLength)
	<-l.reading
	if err != nil {
		l.putBatch(b)
		l.rejected.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := int64(len(b.items))
	l.batches.Add(1)
	size := int64(len(b.body))
	l.mu.RLock()
	queued := false
	if !l.closed && l.queuedBytes.Add(size) <= l.maxQueued {
		select {
		case l.queue <- b:
			queued = true
		default:
		}
	}
	if !queued {
		l.queuedBytes.Add(-size)
	}
	waiting := int64(len(l.queue))
	l.mu.RUnlock()
	for peak := l.peakQueued.Load(); waiting > peak && !l.peakQueued.CompareAndSwap(peak, waiting); {
		peak = l.peakQueued.Load()
	}
	if queued {
		l.events.Add(n)
	} else {
		l.putBatch(b)
		l.droppedBatches.Add(1)
		l.droppedEvents.Add(n)
	}
	w.WriteHeader(http.StatusOK)
}

// listBatch is one POST's events: items are slices of body (or, for a body
// encoding/json read, of their own memory).
type listBatch struct {
	body  []byte
	items [][]byte
}

// read reads an EventList body of size bytes (-1 if not known).
func (b *listBatch) read(r io.Reader, size int64) error {
	var err error
	if b.body, err = readBody(r, b.body, size); err != nil {
		return err
	}
	b.items, err = splitBatch(b.body, b.items)
	return err
}

// maxFreeBody is the largest body whose memory is kept for the next batch.
const maxFreeBody = 4 << 20

// getBatch returns a batch whose memory the drain is done with, or a new
// one.
func (l *Listener) getBatch() *listBatch {
	select {
	case b := <-l.free:
		return b
	default:
		return &listBatch{}
	}
}

// putBatch keeps b's memory for another batch, unless enough are kept.
func (l *Listener) putBatch(b *listBatch) {
	if cap(b.body) > maxFreeBody {
		return
	}
	clear(b.items)
	b.items = b.items[:0]
	select {
	case l.free <- b:
	default:
	}
}

// drain writes the queued batches to the source's pipe (and the record)
// until the queue is closed.
func (l *Listener) drain() {
	defer close(l.drained)
	var buf []byte
	for b := range l.queue {
		buf = buf[:0]
		for _, it := range b.items {
			buf = appendLine(buf, it)
		}
		l.queuedBytes.Add(-int64(len(b.body)))
		l.putBatch(b)
		if l.rec != nil {
			if _, err := l.rec.Write(buf); err != nil {
				_ = l.in.CloseWithError(fmt.Errorf("--record: %w", err))
				l.discard()
				return
			}
		}
		if _, err := l.in.Write(buf); err != nil {
			// The reader is gone (the analysis failed): drop the rest.
			l.discard()
			return
		}
	}
	_ = l.in.Close()
}

func (l *Listener) discard() {
	for b := range l.queue {
		l.queuedBytes.Add(-int64(len(b.body)))
	}
}

// Close stops taking batches, lets the queued ones through to the
// source, then ends it (io.EOF). It waits at most until ctx is done for
// requests in flight.
func (l *Listener) Close(ctx context.Context) error {
	var err error
	l.closeOnce.Do(func() {
		err = l.srv.Shutdown(ctx)
		if err != nil {
			_ = l.srv.Close()
		}
		if serr := <-l.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
		l.mu.Lock()
		l.closed = true
		close(l.queue)
		l.mu.Unlock()
	})
	return err
}

// End closes the receiver if it is not closed yet and ends its source
// for its reader too (an analysis that stopped early, on bad input, no
// longer reads it), then waits until nothing more is written: Stats are
// final and the record complete.
func (l *Listener) End(ctx context.Context) error {
	err := l.Close(ctx)
	_ = l.out.Close()
	<-l.drained
	return err
}
