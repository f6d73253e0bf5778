package audit

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// Why a request (or a connection) was refused: the keys of
// ListenStats.RejectedBy.
const (
	RejectNoCredentials = "no credentials"
	RejectWrongToken    = "wrong token"
	RejectTLS           = "TLS handshake failed (no client certificate, or one not signed by the client CA)"
	RejectMethod        = "not a POST"
	RejectContentType   = "not application/json"
	RejectTooLarge      = "body over 64 MiB"
	RejectSlow          = "body cut short or too slow"
	RejectMemory        = "over the memory bound (answered 503: sent again)"
	RejectNotEventList  = "not an audit.k8s.io/v1 EventList"
	RejectConnections   = "too many connections from one address"
)

// MaxRejects is how many refusals ListenStats.Rejects keeps.
const MaxRejects = 16

// Reject is one refusal: of a request, a connection or an item (its
// reason then starts with "item N:"). Both strings are escaped.
type Reject struct {
	Remote, Reason string
}

// ListenStats are what a receiver took in, passed on, dropped and
// refused.
type ListenStats struct {
	// Batches counts the EventLists read, Events the events passed on.
	Batches, Events int64
	// DroppedBatches counts batches that found the queue full, and
	// DroppedEvents their events and those that did not fit in memory
	// once their body was read.
	DroppedBatches, DroppedEvents int64
	// Rejected counts the requests and connections refused, RejectedBy
	// by reason (the Reject constants).
	Rejected   int64
	RejectedBy map[string]int64
	// RejectedEvents counts the items skipped because the decoder would
	// refuse their line (each costs itself only).
	RejectedEvents int64
	// Rejects are the first MaxRejects refusals.
	Rejects []Reject
	// OtherStages counts the events of another stage than
	// ResponseComplete or Panic, which are not passed on.
	OtherStages int64
	// SpoolStopped says why the analysis's copy of the events stopped
	// short ("" when it did not): MaxSpool reached, or the disk full.
	// From then on, the events that completed more than LateWindow
	// before the newest passed on are dropped: Late counts them.
	// SpoolLost counts the events the analysis read once and could not
	// read a second time (see Spool.Rest).
	SpoolStopped string
	Late         int64
	LateWindow   time.Duration
	SpoolLost    int64
	// QueueBatches is the queue's capacity, QueueBytes the memory bound
	// (ListenConfig.MemoryBytes); PeakQueued is the most batches that
	// waited at once, PeakMemory the most memory held at once.
	QueueBatches int
	QueueBytes   int64
	PeakQueued   int64
	PeakMemory   int64
}

// listenCounts are the figures of ListenStats as they grow.
type listenCounts struct {
	batches, events, droppedBatches, droppedEvents, rejectedEvents atomic.Int64
	otherStages, late, spoolLost, peakQueued                       atomic.Int64
	// mu guards the fields below it.
	mu           sync.Mutex
	rejectedBy   map[string]int64
	rejects      []Reject
	spoolStopped string
}

// Stats returns the counts so far.
func (l *Listener) Stats() ListenStats {
	c := &l.stats
	st := ListenStats{Batches: c.batches.Load(), Events: c.events.Load(), DroppedBatches: c.droppedBatches.Load(),
		DroppedEvents: c.droppedEvents.Load(), RejectedEvents: c.rejectedEvents.Load(), OtherStages: c.otherStages.Load(),
		Late: c.late.Load(), LateWindow: l.cfg.LateWindow, SpoolLost: c.spoolLost.Load(),
		QueueBatches: cap(l.queue), QueueBytes: l.mem.max, PeakQueued: c.peakQueued.Load(), PeakMemory: l.mem.peak.Load()}
	c.mu.Lock()
	defer c.mu.Unlock()
	st.RejectedBy = maps.Clone(c.rejectedBy)
	for _, n := range c.rejectedBy {
		st.Rejected += n
	}
	st.Rejects = append([]Reject(nil), c.rejects...)
	st.SpoolStopped = c.spoolStopped
	return st
}

// refuse counts a refusal of remote's, and keeps it among the first.
func (l *Listener) refuse(remote, reason, detail string) {
	c := &l.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejectedBy == nil {
		c.rejectedBy = map[string]int64{}
	}
	c.rejectedBy[reason]++
	if detail != "" {
		reason += ": " + detail
	}
	c.unsafeKeep(remote, []Reject{{Reason: reason}})
}

// unsafeKeep keeps the first MaxRejects refusals, escaped and shortened.
// c.mu is held.
func (c *listenCounts) unsafeKeep(remote string, rejects []Reject) {
	for _, r := range rejects {
		if len(c.rejects) >= MaxRejects {
			return
		}
		if len(r.Reason) > 300 {
			r.Reason = r.Reason[:300] + "..."
		}
		c.rejects = append(c.rejects, Reject{Remote: text.Escape(remote), Reason: text.Escape(r.Reason)})
	}
}

func (l *Listener) refuseConn(remote string) { l.refuse(remote, RejectConnections, "") }

// ServeHTTP takes one batch: 401 without the sender's credentials, 405
// for another method than POST, 415 for another content type than
// application/json, 413 for a body over MaxBatchBytes, 503 for one that
// does not fit in memory, 400 for a body that is not an EventList; else
// 200 once its events are queued or dropped.
func (l *Listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if reason := l.authenticate(r); reason != "" {
		l.refuse(r.RemoteAddr, reason, "")
		w.Header().Set("WWW-Authenticate", `Bearer realm="kubectl-rv"`)
		w.Header().Set("Connection", "close")
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method != http.MethodPost {
		l.refuse(r.RemoteAddr, RejectMethod, r.Method)
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST an audit.k8s.io/v1 EventList", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		l.refuse(r.RemoteAddr, RejectContentType, r.Header.Get("Content-Type"))
		http.Error(w, "POST an audit.k8s.io/v1 EventList as application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, status, reason := l.readBody(w, r)
	if status != 0 {
		l.mem.give(int64(cap(body)))
		l.refuse(r.RemoteAddr, reason, "")
		w.Header().Set("Connection", "close")
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, reason, status)
		return
	}
	b := l.getBatch()
	err := l.readBatch(b, body)
	l.putBody(body)
	if err != nil {
		l.putBatch(b)
		l.refuse(r.RemoteAddr, RejectNotEventList, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l.count(b, r.RemoteAddr)
	// The answer is a header: a sender that does not read it has as long
	// as a header takes.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(l.cfg.Limits.HeaderTimeout))
	w.WriteHeader(http.StatusOK)
}

// authenticate returns why r lacks the credentials the receiver asks
// for, or "".
func (l *Listener) authenticate(r *http.Request) string {
	if l.clientCAs && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
		// The handshake requires one: not reached but by a bug.
		return RejectTLS
	}
	if l.tokenSum == nil {
		return ""
	}
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return RejectNoCredentials
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(h[7:])))
	if subtle.ConstantTimeCompare(sum[:], l.tokenSum[:]) != 1 {
		return RejectWrongToken
	}
	return ""
}

// count counts b's events, queued or dropped, and puts b back when it is
// not queued.
func (l *Listener) count(b *batch, remote string) {
	c := &l.stats
	c.batches.Add(1)
	c.rejectedEvents.Add(b.rejected)
	c.otherStages.Add(b.other)
	c.droppedEvents.Add(b.dropped)
	if len(b.rejects) > 0 {
		c.mu.Lock()
		c.unsafeKeep(remote, b.rejects)
		c.mu.Unlock()
	}
	passed, late, queued := l.enqueue(b)
	c.late.Add(late)
	if queued {
		c.events.Add(passed)
		return
	}
	c.droppedBatches.Add(1)
	c.droppedEvents.Add(int64(len(b.meta)))
	l.putBatch(b)
}

// readBody reads r's body within its deadline into memory counted in
// the budget; on failure, status is the answer and reason why (the body's
// memory is then still counted, for the caller to give back).
func (l *Listener) readBody(w http.ResponseWriter, r *http.Request) (body []byte, status int, reason string) {
	if r.ContentLength > MaxBatchBytes {
		return nil, http.StatusRequestEntityTooLarge, RejectTooLarge
	}
	lim := l.cfg.Limits
	rc := http.NewResponseController(w)
	d := &deadlineReader{r: http.MaxBytesReader(w, r.Body, MaxBatchBytes), rc: rc, start: time.Now(), grace: lim.BodyTimeout, rate: lim.MinBodyRate}
	d.extend()
	buf := l.getBody()
	if n := r.ContentLength; n > 0 && int64(cap(buf)) <= n {
		if !l.reserve(n + 1 - int64(cap(buf))) {
			return buf, http.StatusServiceUnavailable, RejectMemory
		}
		buf = make([]byte, 0, n+1)
	}
	for {
		if len(buf) == cap(buf) {
			c := min(max(2*cap(buf), 64<<10), MaxBatchBytes+1)
			if !l.reserve(int64(c - cap(buf))) {
				return buf, http.StatusServiceUnavailable, RejectMemory
			}
			buf = append(make([]byte, 0, c), buf...)
		}
		n, err := d.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		var tooLarge *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			return buf, 0, ""
		case errors.As(err, &tooLarge):
			return buf, http.StatusRequestEntityTooLarge, RejectTooLarge
		case err != nil:
			return buf, http.StatusRequestTimeout, RejectSlow
		}
	}
}

// deadlineReader reads a body within its deadline: grace at first, then
// as much more as the body's bytes take at rate bytes a second.
type deadlineReader struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	rate  int64
	n     int64
	due   time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.n += int64(n)
	d.extend()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("the body took longer than %v for %d bytes: %w", time.Since(d.start).Round(time.Millisecond), d.n, err)
	}
	return n, err
}

// extend moves the read deadline to where the bytes read so far allow,
// when that is later by a tenth of a second or more.
func (d *deadlineReader) extend() {
	due := d.start.Add(d.grace + time.Duration(d.n*int64(time.Second)/d.rate))
	if due.Sub(d.due) >= 100*time.Millisecond {
		d.due = due
		_ = d.rc.SetReadDeadline(due)
	}
}

// serverLog is the http.Server's error log: it counts failed TLS
// handshakes (a client without a certificate the client CA signed, say)
// as refusals, and drops the rest (a client that went away).
type serverLog struct{ l *Listener }

func (s serverLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if rest, ok := strings.CutPrefix(msg, "http: TLS handshake error from "); ok {
		remote, detail, _ := strings.Cut(rest, ": ")
		s.l.refuse(remote, RejectTLS, detail)
	}
	return len(p), nil
}
