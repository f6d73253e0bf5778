// Package hostile answers HTTP requests as a broken or hostile log
// service does, for tests of the --source readers' bounds
// (pkg/audit/bounded): an answer that never ends or declares 2 GB, one
// that sends its headers then a byte now and then or nothing more, one
// that never sends its headers, and one that is not JSON. Each streams
// from a small buffer: a test never holds what it sends.
//
// Only tests import it.
package hostile

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Huge answers 200 with Prefix, then Item again and again: until the
// client goes (Declare zero: a chunked body that never ends) or Declare
// bytes in all (the Content-Length it declares).
type Huge struct {
	Prefix, Item string
	Declare      int64
	// sent counts the bytes written.
	sent atomic.Int64
}

// MaxHuge is the most bytes Huge sends to a client that keeps reading.
const MaxHuge = 2 << 30

// Sent is how many bytes Huge wrote.
func (h *Huge) Sent() int64 { return h.sent.Load() }

func (h *Huge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	limit := int64(MaxHuge)
	if h.Declare > 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(h.Declare, 10))
		limit = h.Declare
	}
	w.WriteHeader(http.StatusOK)
	item := []byte(h.Item)
	for len(item) < 32<<10 {
		item = append(item, h.Item...)
	}
	n, err := io.WriteString(w, h.Prefix)
	h.sent.Add(int64(n))
	for total := int64(n); err == nil && total < limit && r.Context().Err() == nil; {
		b := item[:min(int64(len(item)), limit-total)]
		n, err = w.Write(b)
		total += int64(n)
		h.sent.Add(int64(n))
	}
}

// Trickle answers 200 with Prefix, then one blank (JSON's whitespace, so
// the body stays a valid beginning) every Every, until the client goes
// or Max blanks were sent; with Every zero it sends nothing more and
// waits for the client to go (at most a minute). Started, when not nil,
// is closed once Prefix was first sent.
type Trickle struct {
	Prefix  string
	Every   time.Duration
	Max     int
	Started chan struct{}
	// once closes Started, the first time Prefix was sent.
	once sync.Once
}

func (t *Trickle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, t.Prefix)
	w.(http.Flusher).Flush()
	if t.Started != nil {
		t.once.Do(func() { close(t.Started) })
	}
	if t.Every == 0 {
		Stall(r)
		return
	}
	tick := time.NewTicker(t.Every)
	defer tick.Stop()
	for i := 0; i < t.Max; i++ {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		if _, err := io.WriteString(w, " "); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// Stall waits for r's client to go, or a minute.
func Stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

// Silent never answers: it waits for the client to go (at most a
// minute) and sends no header.
func Silent(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	Stall(r)
}

// Garbage answers 200 with a proxy's HTML page where JSON was due.
func Garbage(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>\n")
}

// MuteTCP listens on loopback until the test ends, and with each
// connection calls first (when set), then reads and drops what the
// client sends, answering nothing more, until the client goes. It
// returns the address: a server below HTTP (ClickHouse's native
// protocol, a bare connection) that stops talking.
func MuteTCP(t testing.TB, first func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				if first != nil {
					first(c)
				}
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}
