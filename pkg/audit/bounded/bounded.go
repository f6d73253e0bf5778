package bounded

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Limits are the bounds on each answer. A zero field is no bound.
type Limits struct {
	// Idle is the longest the service may keep the reader waiting: from
	// the request's start to the answer's headers, and in each read of
	// its body (the time between reads is the reader's).
	Idle time.Duration
	// Total is the longest one answer may take, from the request's start
	// to the end of its body.
	Total time.Duration
	// MaxBytes is the most bytes one answer's body may hold (as read,
	// after the transport's decompression).
	MaxBytes int64
	// Fix says what the user can do about an answer over MaxBytes or
	// Total (ask for fewer events a page); empty says nothing.
	Fix string
}

// PageLimits are cfg's bounds (its defaults filled) for a reader whose
// every answer is one page: each answer's idle time, total time and
// size are bounded; fix says how to ask for smaller pages.
func PageLimits(cfg audit.SourceConfig, fix string) Limits {
	cfg = cfg.WithDefaults()
	return Limits{Idle: cfg.Timeout, Total: cfg.PageTimeout, MaxBytes: cfg.MaxResponseBytes, Fix: fix}
}

// StreamLimits are cfg's bounds for a reader whose one answer is the
// whole result, streamed (ClickHouse's HTTP interface): only the idle
// time, since a long result takes long and is big.
func StreamLimits(cfg audit.SourceConfig) Limits {
	return Limits{Idle: cfg.WithDefaults().Timeout}
}

// The kinds of Error, for errors.Is.
var (
	ErrTooLarge    = errors.New("the answer is over the size cap")
	ErrIdle        = errors.New("the service sent nothing for too long")
	ErrPageTimeout = errors.New("the answer took too long")
)

// Error is an answer a bound cut off. Its text says which bound, its
// value and the fix; errors.Is matches its kind (ErrTooLarge, ErrIdle,
// ErrPageTimeout).
type Error struct {
	kind error
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Is says whether target is e's kind.
func (e *Error) Is(target error) bool { return target == e.kind }

// RetryableError tells the AWS SDK's retryer (aws/retry.RetryableError)
// not to send the request again: the same request meets the same bound,
// and a retry would multiply the wait the bound is there to end.
func (e *Error) RetryableError() bool { return false }

func tooLarge(lim Limits, declared int64) *Error {
	msg := fmt.Sprintf("the answer is over %s, the cap on one answer", Size(lim.MaxBytes))
	if declared > 0 {
		msg = fmt.Sprintf("the answer declares %d bytes, over %s, the cap on one answer", declared, Size(lim.MaxBytes))
	}
	return &Error{kind: ErrTooLarge, msg: withFix(msg, lim.Fix)}
}

func idle(d time.Duration) *Error {
	return &Error{kind: ErrIdle, msg: fmt.Sprintf("the service sent nothing for %s: give a service that is slow to answer a longer --source-timeout", d)}
}

func pageTimeout(lim Limits) *Error {
	return &Error{kind: ErrPageTimeout, msg: withFix(fmt.Sprintf("the answer took over %s, the time one answer may take (%d times --source-timeout)", lim.Total, audit.PageTimeoutFactor), lim.Fix)}
}

func withFix(msg, fix string) string {
	if fix == "" {
		return msg
	}
	return msg + ": " + fix
}

// Size is n bytes as the errors print it: 64 MiB, 512 KiB, 1000 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Transport is an http.RoundTripper that holds every answer of its base
// to its Limits (see the package's doc).
type Transport struct {
	base http.RoundTripper
	lim  Limits
}

var _ http.RoundTripper = (*Transport)(nil)

// Wrap is base with every answer held to lim.
func Wrap(base http.RoundTripper, lim Limits) *Transport {
	return &Transport{base: base, lim: lim}
}

// NewTransport is a copy of http.DefaultTransport (proxies from the
// environment, HTTP/2) held to lim, trusting the PEM certificates of
// caPEM when not nil rather than the system's.
func NewTransport(lim Limits, caPEM []byte) (*Transport, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("no PEM certificate in it")
		}
		base.TLSClientConfig.RootCAs = pool
	}
	return Wrap(base, lim), nil
}

// RoundTrip sends req through the base transport under a context of its
// own, which the idle and total timers cancel, and bounds the answer's
// body.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := t.watch(req.Context())
	own, err := ownBody(req.WithContext(w.ctx))
	if err != nil {
		w.stop()
		return nil, err
	}
	res, err := t.base.RoundTrip(own)
	if err != nil {
		err = w.cause(err)
		w.stop()
		return nil, err
	}
	w.disarm()
	if err := w.cutOff(); err != nil {
		// The headers came after a bound had cut the request off: the
		// transport can still hand on an answer that raced the cancel,
		// such as the empty one a server writes once the client left.
		_ = res.Body.Close()
		w.stop()
		return nil, err
	}
	res.Body = &body{rc: res.Body, w: w, lim: t.lim, declared: res.ContentLength}
	return res, nil
}

// maxOwnedBody is the largest request body ownBody copies: the readers'
// requests (a search, FilterLogEvents, a query) are far smaller.
const maxOwnedBody = 1 << 20

// ownBody is req, a copy of the caller's, with a small body read into
// memory, so that the transport writes from a body of its own. The AWS
// SDK closes its request's body as soon as the answer's headers come; a
// close that lands while the transport finishes writing the request (it
// reads the body once more for EOF) fails the write, since smithy-go's
// closed body answers WriteTo with io.EOF, and the transport then drops
// the connection mid-answer, which the SDK retries.
func ownBody(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 || req.ContentLength > maxOwnedBody {
		return req, nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, req.ContentLength))
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the request's body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return req, nil
}

// watch is one request's timers and context.
type watch struct {
	parent, ctx context.Context
	cancel      context.CancelCauseFunc
	idleFor     time.Duration
	// idle and total are nil when there is no such bound.
	idle, total *time.Timer
}

func (t *Transport) watch(parent context.Context) *watch {
	ctx, cancel := context.WithCancelCause(parent)
	w := &watch{parent: parent, ctx: ctx, cancel: cancel, idleFor: t.lim.Idle}
	if t.lim.Idle > 0 {
		// Armed until the answer's headers come.
		e := idle(t.lim.Idle)
		w.idle = time.AfterFunc(t.lim.Idle, func() { cancel(e) })
	}
	if t.lim.Total > 0 {
		e := pageTimeout(t.lim)
		w.total = time.AfterFunc(t.lim.Total, func() { cancel(e) })
	}
	return w
}

// arm starts the idle timer: a read waits for the service.
func (w *watch) arm() {
	if w.idle != nil {
		w.idle.Reset(w.idleFor)
	}
}

// disarm stops the idle timer: the read returned, and the time until the
// next is the reader's, not the service's.
func (w *watch) disarm() {
	if w.idle != nil {
		w.idle.Stop()
	}
}

// stopTimers ends the timers, leaving the request's context as it is.
func (w *watch) stopTimers() {
	if w.idle != nil {
		w.idle.Stop()
	}
	if w.total != nil {
		w.total.Stop()
	}
}

// stop ends the timers and the request's context (and with it, any
// transfer still going).
func (w *watch) stop() {
	w.stopTimers()
	w.cancel(nil)
}

// cause is the error to return for err, a failure of the request: the
// caller's context's error when it ended (so that a cancellation reads
// as one), the bound that cut the request off, or err.
func (w *watch) cause(err error) error {
	if cut := w.cutOff(); cut != nil {
		return cut
	}
	return err
}

// cutOff is the error of the caller's ended context or of the bound
// that cut the request off, or nil while neither did: what the
// transport hands on after either is not the service's answer in time.
func (w *watch) cutOff() error {
	if e := w.parent.Err(); e != nil {
		return e
	}
	var be *Error
	if errors.As(context.Cause(w.ctx), &be) {
		return be
	}
	return nil
}

// body is an answer's body held to the limits: each read must return
// within the idle time, the bytes are counted against MaxBytes, and the
// first error sticks.
type body struct {
	rc       io.ReadCloser
	w        *watch
	lim      Limits
	declared int64
	n        int64
	err      error
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if max := b.lim.MaxBytes; max > 0 {
		if b.declared > max {
			return 0, b.fail(tooLarge(b.lim, b.declared))
		}
		// One byte more than the room left tells a body that ends at
		// the cap from one over it.
		if room := max - b.n + 1; int64(len(p)) > room {
			p = p[:room]
		}
	}
	b.w.arm()
	n, err := b.rc.Read(p)
	b.w.disarm()
	b.n += int64(n)
	if max := b.lim.MaxBytes; max > 0 && b.n > max {
		return n - int(b.n-max), b.fail(tooLarge(b.lim, 0))
	}
	switch {
	case err == io.EOF:
		b.w.stopTimers()
		if cut := b.w.cutOff(); cut != nil {
			// The end came after a bound had cut the answer off (a
			// server ends its body once the client left): the body is
			// not whole.
			return n, b.fail(cut)
		}
	case err != nil:
		err = b.fail(b.w.cause(err))
	}
	return n, err
}

// fail ends the request (the transfer stops, the connection is not
// reused) and makes err stick.
func (b *body) fail(err error) error {
	b.err = err
	b.w.stop()
	return err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.w.stop()
	return err
}

// Retryable says whether a client library may send again a request
// that failed with err: not when a bound cut it off or its context
// ended. elastic-transport-go's RetryOnError.
func Retryable(_ *http.Request, err error) bool {
	var be *Error
	return !errors.As(err, &be) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// Cause is the bound's *Error or the context's error that err, a
// client library's failure, carries, without the library's wrapping
// (opensearch-go's "error reading response body"); or err.
func Cause(err error) error {
	var be *Error
	switch {
	case errors.As(err, &be):
		return be
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return err
}
