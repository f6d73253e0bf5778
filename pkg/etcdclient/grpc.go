package etcdclient

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// gRPC over HTTP/2 (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md),
// as much of it as etcd's KV and Watch services need: unary calls and one
// bidirectional stream per watch, messages uncompressed. etcd serves gRPC
// on its client URL: http:// speaks HTTP/2 without TLS (prior knowledge),
// https:// HTTP/2 over TLS.

// maxMessage bounds one message read from etcd (clientv3's default
// receive limit is larger; a range over this is refused with a clear error).
const maxMessage = 256 << 20

// conn sends gRPC requests to one etcd endpoint.
type conn struct {
	base   string
	client *http.Client
}

func newConn(endpoint string, dialTimeout time.Duration) (*conn, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an etcd client URL: want e.g. http://127.0.0.1:2379", endpoint)
	}
	var p http.Protocols
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{Protocols: &p, DialContext: d.DialContext, TLSHandshakeTimeout: dialTimeout}
	return &conn{base: strings.TrimSuffix(u.Scheme+"://"+u.Host, "/"), client: &http.Client{Transport: tr}}, nil
}

func (c *conn) close() { c.client.CloseIdleConnections() }

// frame wraps a message in gRPC's length prefix (not compressed).
func frame(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// readFrame reads one length-prefixed message; io.EOF at a message
// boundary means the stream ended.
func readFrame(r io.Reader) ([]byte, error) {
	var h [5]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if n > 0 && errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("%w: a gRPC message header was cut short", errMessage)
		}
		// Between messages: the stream's end (io.EOF), or the
		// transport's error (a lost connection) as it is.
		return nil, err
	}
	if h[0] != 0 {
		return nil, fmt.Errorf("%w: a compressed gRPC message (flag %d), which this client did not ask for", errMessage, h[0])
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxMessage {
		return nil, fmt.Errorf("%w: a gRPC message of %d bytes, over this client's limit of %d", errMessage, n, maxMessage)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, fmt.Errorf("%w: a gRPC message of %d bytes was cut short: %w", errMessage, n, err)
	}
	return msg, nil
}

// StatusError is an error status etcd answered a call with.
type StatusError struct {
	// Code is the gRPC status code (e.g. 11, OUT_OF_RANGE).
	Code int
	// Message is etcd's message, e.g. "etcdserver: request timed out".
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("etcd answered gRPC status %d", e.Code)
	}
	return e.Message
}

// status reads grpc-status and grpc-message from h (trailers, or the
// headers of a response that has no messages): whether h holds a status,
// and the error it says (nil for status 0).
func status(h http.Header) (present bool, err error) {
	s := h.Get("Grpc-Status")
	if s == "" {
		return false, nil
	}
	code, err := strconv.Atoi(s)
	if err != nil {
		return true, fmt.Errorf("%w: grpc-status %q is not a number", errMessage, s)
	}
	if code == 0 {
		return true, nil
	}
	msg := h.Get("Grpc-Message")
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	return true, &StatusError{Code: code, Message: msg}
}

// request builds a gRPC POST of method with body.
func (c *conn) request(ctx context.Context, method string, body io.Reader) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.base+method, body)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("User-Agent", "kubectl-rv")
	return req
}

// transportErr is a failure to reach etcd at base, or ctx's end.
func transportErr(ctx context.Context, base string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("%w at %s: %w", ErrUnreachable, base, err)
}

// open sends the request and checks the response's headers.
func (c *conn) open(req *http.Request) (*http.Response, error) {
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, transportErr(req.Context(), c.base, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/grpc") {
		resp.Body.Close()
		return nil, fmt.Errorf("%w at %s: it answered HTTP %d (%q), not gRPC: is it etcd's client URL?", ErrUnreachable, c.base, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if ok, err := status(resp.Header); ok {
		// A response without messages carries its status in its headers.
		resp.Body.Close()
		if err == nil {
			err = fmt.Errorf("%w: etcd answered no message", errMessage)
		}
		return nil, err
	}
	return resp, nil
}

// unary calls method with one request message and returns the response
// message.
func (c *conn) unary(ctx context.Context, method string, req []byte) ([]byte, error) {
	resp, err := c.open(c.request(ctx, method, bytes.NewReader(frame(req))))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, err := readFrame(resp.Body)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, c.streamErr(ctx, resp, err)
	}
	// Read to the end: the status comes in the trailers.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return nil, transportErr(ctx, c.base, err)
	}
	if _, err := status(resp.Trailer); err != nil {
		return nil, err
	}
	if msg == nil {
		return nil, fmt.Errorf("%w: etcd answered %s with no message", errMessage, method)
	}
	return msg, nil
}

// streamErr is the error that ended a response's body: a status in its
// trailers if there is one, else err.
func (c *conn) streamErr(ctx context.Context, resp *http.Response, err error) error {
	if _, st := status(resp.Trailer); st != nil {
		return st
	}
	if errors.Is(err, errMessage) {
		return err
	}
	return transportErr(ctx, c.base, err)
}

// stream is one bidirectional gRPC call. Sends never block: a goroutine
// writes them out in order, so a caller waiting with a deadline (a
// progress request) is never stuck behind HTTP/2 flow control.
type stream struct {
	c    *conn
	ctx  context.Context
	resp *http.Response
	pw   *io.PipeWriter

	// mu guards queue and ended; wake has a token when queue is not empty.
	mu    sync.Mutex
	queue [][]byte
	ended bool
	wake  chan struct{}
}

// openStream starts method's stream with a first message and returns once
// etcd answered with headers. Closing the stream is cancelling ctx.
func (c *conn) openStream(ctx context.Context, method string, first []byte) (*stream, error) {
	pr, pw := io.Pipe()
	s := &stream{c: c, ctx: ctx, pw: pw, wake: make(chan struct{}, 1)}
	go s.writeLoop()
	s.send(first)
	resp, err := c.open(c.request(ctx, method, pr))
	if err != nil {
		s.end(err)
		return nil, err
	}
	s.resp = resp
	return s, nil
}

// send queues msg for the stream; after the stream's end it is dropped.
func (s *stream) send(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.queue = append(s.queue, frame(msg))
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// end stops the writer and closes the request body.
func (s *stream) end(err error) {
	s.mu.Lock()
	s.ended = true
	s.queue = nil
	s.mu.Unlock()
	s.pw.CloseWithError(err)
}

// writeLoop writes the queued messages to the request body until the
// stream ends (a write fails once the transport closed the body).
func (s *stream) writeLoop() {
	for {
		select {
		case <-s.wake:
		case <-s.ctx.Done():
			s.end(s.ctx.Err())
			return
		}
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, b := range q {
			if _, err := s.pw.Write(b); err != nil {
				s.end(err)
				return
			}
		}
	}
}

// recv returns the next message; at the stream's end, its status as an
// error (io.EOF if it ended with status 0).
func (s *stream) recv() ([]byte, error) {
	msg, err := readFrame(s.resp.Body)
	if err == nil {
		return msg, nil
	}
	if errors.Is(err, io.EOF) {
		if _, st := status(s.resp.Trailer); st != nil {
			return nil, st
		}
		return nil, io.EOF
	}
	return nil, s.c.streamErr(s.ctx, s.resp, err)
}
