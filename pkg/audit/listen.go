package audit

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
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
	// QueueBatches is the queue's capacity.
	QueueBatches int
}

// Listener receives the API server's audit webhook batches
// (--audit-webhook-config-file naming its URL): each POST carries an
// audit.k8s.io/v1 EventList, answered 200 at once. Its Source yields the
// events as the JSON lines of a log file, so they go through the same
// decoder and analysis as a file; the source ends when Close is called.
type Listener struct {
	srv   *http.Server
	ln    net.Listener
	queue chan [][]byte
	out   *io.PipeReader
	in    *io.PipeWriter
	rec   io.Writer
	url   string

	batches, events, droppedBatches, droppedEvents, rejected atomic.Int64

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
	pr, pw := io.Pipe()
	l := &Listener{ln: ln, queue: make(chan [][]byte, n), out: pr, in: pw, rec: cfg.Record,
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
		DroppedEvents: l.droppedEvents.Load(), Rejected: l.rejected.Load(), QueueBatches: cap(l.queue)}
}

// eventList is the part of an audit.k8s.io/v1 EventList the receiver
// reads: the items are passed on as they came.
type eventList struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Items      []json.RawMessage `json:"items"`
}

// ServeHTTP takes one batch: 200 once it is queued or dropped, 400 for a
// body that is not an EventList, 405 for another method.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		l.rejected.Add(1)
		http.Error(w, "POST an audit.k8s.io/v1 EventList", http.StatusMethodNotAllowed)
		return
	}
	items, err := readBatch(http.MaxBytesReader(w, r.Body, MaxBatchBytes))
	if err != nil {
		l.rejected.Add(1)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l.batches.Add(1)
	l.mu.RLock()
	queued := false
	if !l.closed {
		select {
		case l.queue <- items:
			queued = true
		default:
		}
	}
	l.mu.RUnlock()
	if queued {
		l.events.Add(int64(len(items)))
	} else {
		l.droppedBatches.Add(1)
		l.droppedEvents.Add(int64(len(items)))
	}
	w.WriteHeader(http.StatusOK)
}

// readBatch decodes an EventList body into its items, each one line of
// compact JSON.
func readBatch(body io.Reader) ([][]byte, error) {
	var list eventList
	if err := json.NewDecoder(body).Decode(&list); err != nil {
		return nil, fmt.Errorf("not an audit EventList: %v", err)
	}
	if list.Kind != "EventList" || list.APIVersion != "audit.k8s.io/v1" {
		return nil, fmt.Errorf("kind %q, apiVersion %q: want an audit.k8s.io/v1 EventList (--audit-webhook-version=audit.k8s.io/v1)", list.Kind, list.APIVersion)
	}
	items := make([][]byte, len(list.Items))
	for i, it := range list.Items {
		if bytes.ContainsAny(it, "\r\n") {
			var b bytes.Buffer
			if err := json.Compact(&b, it); err != nil {
				return nil, err
			}
			it = b.Bytes()
		}
		items[i] = withTypeMeta(it)
	}
	return items, nil
}

// eventTypeMeta starts a log line's event: a list's items carry no kind
// or apiVersion (the API server leaves them to the list), a log's events
// do.
const eventTypeMeta = `{"kind":"Event","apiVersion":"audit.k8s.io/v1"`

// withTypeMeta is item (compact JSON) as a log line: with kind and
// apiVersion first, unless it starts with its kind already.
func withTypeMeta(item []byte) []byte {
	switch {
	case bytes.HasPrefix(item, []byte(`{"kind":`)):
		return item
	case bytes.Equal(item, []byte("{}")):
		return []byte(eventTypeMeta + "}")
	case len(item) > 0 && item[0] == '{':
		return append([]byte(eventTypeMeta+","), item[1:]...)
	}
	// Not an object: the decoder says so.
	return item
}

// drain writes the queued batches to the source's pipe (and the record)
// until the queue is closed.
func (l *Listener) drain() {
	defer close(l.drained)
	var buf []byte
	for items := range l.queue {
		buf = buf[:0]
		for _, it := range items {
			buf = append(append(buf, it...), '\n')
		}
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
	for range l.queue {
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
