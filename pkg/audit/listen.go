package audit

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"
)

// ListenConfig configures an audit webhook receiver (Listen). Zero values
// are the documented defaults.
type ListenConfig struct {
	// Addr is host:port to listen on.
	Addr string
	// CertFile and KeyFile are the TLS serving certificate and key
	// (PEM). Without them, the receiver makes a certificate of its own
	// for Addr's IP address (or localhost), which the webhook kubeconfig
	// trusts. It always serves TLS: client-go, which the API server's
	// webhook backend uses, sends credentials over TLS only.
	CertFile, KeyFile string

	// Every request must carry credentials: the bearer token (Token, or
	// read from TokenFile as client-go reads a kubeconfig's tokenFile,
	// white space trimmed), a client certificate signed by a CA of
	// ClientCAFile (PEM; the TLS handshake refuses a connection without
	// one), or both. Listen refuses a configuration
	// with neither, unless WebhookKubeconfig is set: a token is then
	// made (NewToken).
	Token, TokenFile string
	ClientCAFile     string
	// WebhookKubeconfig, when set, is the file Listen writes, once it is
	// listening, for the API server's --audit-webhook-config-file: the
	// receiver's URL, the token and, with TLS, the serving certificate as
	// the CA (WriteWebhookKubeconfig).
	WebhookKubeconfig string

	// QueueBatches bounds the batches received but not yet read: a batch
	// that finds the queue full is dropped and counted (Stats), never
	// waited for, so the API server is never held up. 0 is 1024.
	QueueBatches int
	// MemoryBytes bounds the memory the receiver holds: the bodies being
	// read, the events queued (their log lines, and 16 bytes each), the
	// buffers kept for the next batches and the scanners' memos. A body
	// that does not fit is answered 503 with Retry-After (the API
	// server's webhook sends it again); events that do not fit once
	// their body is read are dropped and counted. 0 is
	// DefaultListenMemory.
	MemoryBytes int64
	// MaxSpool bounds the copy of the received events that the analysis
	// keeps to read them a second time (Spool). Once it is reached, or
	// the disk is full, events older than LateWindow before the newest
	// passed on are dropped and counted (Stats.Late), so that the
	// analysis never needs the copy for them. 0 is DefaultMaxSpool.
	MaxSpool int64
	// LateWindow is how far behind the newest event an event may
	// complete once the copy has stopped; it must not exceed the
	// analysis's skew. 0 is DefaultLateWindow.
	LateWindow time.Duration

	// Limits is how long a sender may take, and how many connections an
	// address may hold.
	Limits ListenLimits

	// RecordPath, when set, is the file that receives every event passed
	// on, one JSON line each: a log that Open reads back. Listen opens it
	// (OpenRecord) once it is listening, so that an address it cannot
	// listen on leaves the file as it was; RecordAppend appends to an
	// existing file instead of refusing it.
	RecordPath   string
	RecordAppend bool
	// Record, when set and RecordPath is not, is a writer that receives
	// what RecordPath would.
	Record io.Writer

	// plainHTTP serves plain HTTP instead of TLS, the credentials in the
	// clear (and client-go sends none): only this package's benchmark
	// sets it, to tell the receiver's own cost from TLS's.
	plainHTTP bool
}

// ListenLimits bound what each sender may take of the receiver. Zero
// values are the defaults.
type ListenLimits struct {
	// HeaderTimeout bounds the reading of a request's header, and of the
	// TLS handshake before it. 0 is 10s.
	HeaderTimeout time.Duration
	// BodyTimeout is the time a body may take at first; MinBodyRate
	// (bytes a second) extends it as the body comes: a body of n bytes
	// may take BodyTimeout + n/MinBodyRate. 0 are 10s and 64 KiB/s.
	BodyTimeout time.Duration
	MinBodyRate int64
	// IdleTimeout bounds the wait for a kept-alive connection's next
	// request. 0 is 90s (client-go's idle connections last 90s).
	IdleTimeout time.Duration
	// ConnsPerAddress bounds the connections one remote address holds at
	// once: one more is closed when it is accepted, and counted
	// (RejectConnections). 0 is 128.
	ConnsPerAddress int
}

// The defaults of ListenConfig and ListenLimits.
const (
	DefaultListenMemory    = 80 << 20
	DefaultLateWindow      = 2 * time.Second
	DefaultQueueBatches    = 1024
	DefaultHeaderTimeout   = 10 * time.Second
	DefaultBodyTimeout     = 10 * time.Second
	DefaultMinBodyRate     = 64 << 10
	DefaultIdleTimeout     = 90 * time.Second
	DefaultConnsPerAddress = 128
)

// ListenMemory is the memory a receiver holds at most with the default
// bound (ListenConfig.MemoryBytes). A memory limit set for the analysis
// behind it goes up by as much: a heap past the limit is collected again
// and again, on the core the analysis needs to catch up.
const ListenMemory = DefaultListenMemory

// MaxBatchBytes bounds one POST's body: a longer one is answered 413.
const MaxBatchBytes = 64 << 20

// withDefaults fills cfg's zero values.
func (cfg ListenConfig) withDefaults() ListenConfig {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MemoryBytes, DefaultListenMemory)
	def(&cfg.MaxSpool, DefaultMaxSpool)
	def(&cfg.Limits.MinBodyRate, DefaultMinBodyRate)
	for _, d := range []struct {
		v *time.Duration
		d time.Duration
	}{{&cfg.LateWindow, DefaultLateWindow}, {&cfg.Limits.HeaderTimeout, DefaultHeaderTimeout},
		{&cfg.Limits.BodyTimeout, DefaultBodyTimeout}, {&cfg.Limits.IdleTimeout, DefaultIdleTimeout}} {
		def((*int64)(d.v), int64(d.d))
	}
	if cfg.QueueBatches <= 0 {
		cfg.QueueBatches = DefaultQueueBatches
	}
	if cfg.Limits.ConnsPerAddress <= 0 {
		cfg.Limits.ConnsPerAddress = DefaultConnsPerAddress
	}
	return cfg
}

// Listener receives the API server's audit webhook batches
// (--audit-webhook-config-file naming its URL): each POST carries an
// audit.k8s.io/v1 EventList, answered at once. Its Source yields the
// events as the JSON lines of a log file, so they go through the same
// decoder and analysis as a file; the source ends when Close is called.
//
// A request is served only with the sender's credentials (401 otherwise),
// as a POST (405) of application/json (415), whose body comes in time;
// each item is read as the decoder will read its line, and one it would
// refuse is skipped and counted, never the batch (a body that is not an
// EventList is answered 400). Only events of stage ResponseComplete or
// Panic are passed on.
type Listener struct {
	cfg   ListenConfig
	srv   *http.Server
	ln    net.Listener
	url   string
	queue chan *batch
	// out hands the queued batches, recorded, to the source (stream);
	// gone is closed when nothing reads it any more.
	out      chan *batch
	gone     chan struct{}
	goneOnce sync.Once
	stream   *liveBatches
	// tokenSum is the SHA-256 of the token (nil for none); clientCAs says
	// the TLS handshake requires a client certificate.
	tokenSum  *[sha256.Size]byte
	clientCAs bool

	mem budget
	// bodies and batches hold memory kept for the next requests (counted
	// in mem while kept); scanners the memos of the batches being read,
	// one a core at most.
	bodies   chan []byte
	batches  chan *batch
	scanners chan *valueMemo

	// rec is the record's writer, recFile the file Listen opened for it;
	// recErr is the error that stopped the record.
	rec     io.Writer
	recFile *os.File
	recErr  error

	stats listenCounts

	// mu guards closed and the order of the queue: a batch is checked
	// against the late window (late) and queued under it, the queue
	// closed under it.
	mu     sync.Mutex
	closed bool
	late   lateWindow

	closeOnce sync.Once
	drained   chan struct{}
	served    chan error
}

// Listen starts a receiver on cfg.Addr. Credentials and files named in
// cfg are read before it listens; the record and the webhook kubeconfig
// are created once it listens, so that a failure to listen creates,
// changes and removes nothing.
func Listen(cfg ListenConfig) (*Listener, error) {
	cfg = cfg.withDefaults()
	creds, err := readCredentials(&cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.Addr, err)
	}
	l := newListener(cfg, creds)
	l.url = "https://" + ln.Addr().String()
	l.ln = &capListener{Listener: ln, max: cfg.Limits.ConnsPerAddress, conns: map[string]int{}, refused: l.refuseConn}
	if cfg.plainHTTP {
		l.url = "http://" + ln.Addr().String()
	} else {
		l.ln = tls.NewListener(l.ln, creds.tls)
	}
	if err := l.createFiles(creds); err != nil {
		_ = ln.Close()
		return nil, err
	}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: cfg.Limits.HeaderTimeout, IdleTimeout: cfg.Limits.IdleTimeout,
		ErrorLog: log.New(serverLog{l}, "", 0)}
	go func() { l.served <- l.srv.Serve(l.ln) }()
	go l.drain()
	return l, nil
}

func newListener(cfg ListenConfig, creds credentials) *Listener {
	l := &Listener{cfg: cfg, queue: make(chan *batch, cfg.QueueBatches), out: make(chan *batch), gone: make(chan struct{}), rec: cfg.Record,
		tokenSum: creds.tokenSum, clientCAs: creds.clientCAs,
		bodies: make(chan []byte, freeBodies), batches: make(chan *batch, freeBatches),
		drained: make(chan struct{}), served: make(chan error, 1)}
	l.stream = &liveBatches{l: l}
	l.mem.max = cfg.MemoryBytes
	l.late.window = cfg.LateWindow.Nanoseconds()
	n := min(runtime.GOMAXPROCS(0), maxScanners)
	l.scanners = make(chan *valueMemo, n)
	// The memos, counted at their most, take at most a quarter of the
	// bound; under a lower bound the scanners read without one.
	memos := 4*int64(n)*memoBytes <= l.mem.max
	for range n {
		var m *valueMemo
		if memos {
			l.mem.take(memoBytes)
			m = newValueMemo()
		}
		l.scanners <- m
	}
	return l
}

// URL is the address the API server's webhook kubeconfig names.
func (l *Listener) URL() string { return l.url }

// Source is the received events as a log: JSON lines, until Close. The
// analysis's copy of it (Spool) is bounded by ListenConfig.MaxSpool.
//
// Decode reads it batch by batch, each with its events as the receiver
// read them (liveBatches): the events are not read a second time.
func (l *Listener) Source() Source {
	return Source{Name: l.url, open: func() (io.ReadCloser, error) { return io.NopCloser(l.stream), nil },
		batches: func() (batchStream, error) { return l.stream, nil },
		live:    &liveStream{maxSpool: l.cfg.MaxSpool, stopped: l.spoolStopped, lost: func(n int64) { l.stats.spoolLost.Add(n) }}}
}

// drain hands the queued batches, once recorded, to the source until the
// queue is closed, or nothing reads the source any more.
func (l *Listener) drain() {
	defer close(l.drained)
	defer close(l.out)
	for b := range l.queue {
		if l.rec != nil && l.recErr == nil {
			if _, err := l.rec.Write(b.lines); err != nil {
				// The capture goes on without it; End reports it.
				l.recErr = fmt.Errorf("%s: %w (the events received after were not recorded)", l.recordName(), err)
			}
		}
		select {
		case l.out <- b:
		case <-l.gone:
			// The reader is gone (the analysis failed): drop the rest.
			l.putBatch(b)
			l.discard()
			return
		}
	}
}

func (l *Listener) discard() {
	for b := range l.queue {
		l.putBatch(b)
	}
}

// recordName names the record in errors.
func (l *Listener) recordName() string {
	if l.cfg.RecordPath == "" {
		return "--record"
	}
	return "--record " + l.cfg.RecordPath
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
// final and the record complete. Its error is Close's, or the record's
// (a write that failed, which stopped the record but not the capture, or
// closing the file Listen opened).
func (l *Listener) End(ctx context.Context) error {
	err := l.Close(ctx)
	l.goneOnce.Do(func() { close(l.gone) })
	<-l.drained
	if l.recFile != nil {
		if cerr := l.recFile.Close(); cerr != nil && l.recErr == nil {
			l.recErr = fmt.Errorf("%s: %w", l.recordName(), cerr)
		}
		l.recFile = nil
	}
	return errors.Join(err, l.recErr)
}
