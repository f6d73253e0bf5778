package bounded_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/hostile"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	. "github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
)

// get reads url's answer through a Transport of lim, returning the
// bytes read and the first error.
func get(ctx context.Context, url string, lim Limits) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	tr, err := NewTransport(lim, nil)
	if err != nil {
		return 0, err
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = res.Body.Close() }()
	return io.Copy(io.Discard, res.Body)
}

// TestTransportCapsTheAnswer: an answer over MaxBytes, endless or
// declaring 2 GB, fails with ErrTooLarge once the cap is read (or at
// once, when declared), the error saying the cap and the fix; the server
// stops sending, as the connection is dropped. An answer of exactly the
// cap is read whole.
func TestTransportCapsTheAnswer(t *testing.T) {
	const max = 1 << 20
	for _, tc := range []struct {
		name     string
		declare  int64
		wantRead int64
		wantErr  string
	}{
		{"endless", 0, max, "the answer is over 1 MiB, the cap on one answer: ask for less"},
		{"declares 2 GB", 2 << 30, 0, "the answer declares 2147483648 bytes, over 1 MiB"},
		{"one over the cap", max + 1, 0, "the answer declares 1048577 bytes"},
		{"the cap", max, max, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hostile.Huge{Prefix: "[", Item: `"x",`, Declare: tc.declare}
			ts := httptest.NewServer(h)
			defer ts.Close()
			n, err := get(context.Background(), ts.URL, Limits{Idle: 5 * time.Second, MaxBytes: max, Fix: "ask for less"})
			if tc.wantErr == "" {
				if err != nil || n != tc.wantRead {
					t.Fatalf("read %d bytes, %v; want %d and no error", n, err, tc.wantRead)
				}
				return
			}
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), tc.wantErr) || n != tc.wantRead {
				t.Fatalf("read %d bytes, %v; want %d and ErrTooLarge saying %q", n, err, tc.wantRead, tc.wantErr)
			}
			ts.Close() // waits for the handler: it ends once the client went
			if sent := h.Sent(); sent > 32*max {
				t.Errorf("the server sent %d bytes: the client kept the transfer going", sent)
			}
		})
	}
}

// TestTransportIdle: a server that sends nothing for the idle time,
// before its headers or within its body, is cut off with ErrIdle, which
// names --source-timeout.
func TestTransportIdle(t *testing.T) {
	for name, h := range map[string]http.Handler{
		"no headers":      http.HandlerFunc(hostile.Silent),
		"a byte a second": &hostile.Trickle{Prefix: `{"hits":`, Every: time.Second, Max: 60},
		"headers only":    &hostile.Trickle{Prefix: `{"hits":`},
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(h)
			defer ts.Close()
			start := time.Now()
			_, err := get(context.Background(), ts.URL, Limits{Idle: 200 * time.Millisecond, Total: time.Minute})
			if !errors.Is(err, ErrIdle) || !strings.Contains(err.Error(), "the service sent nothing for 200ms") || !strings.Contains(err.Error(), "--source-timeout") {
				t.Fatalf("%v, want ErrIdle naming the time and --source-timeout", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("cut off after %s", d)
			}
		})
	}
}

// lateBase is a transport in front of a server that stalls and answers
// once the client left: an empty page (headers) or the end of its body
// (body). net/http's Transport hands on such an answer when it races
// the request's cancel; lateBase always does, once the context ended.
type lateBase struct{ body bool }

func (b lateBase) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	res := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: req, ContentLength: -1}
	if b.body {
		res.Body = io.NopCloser(&lateEOF{ctx: ctx})
		return res, nil
	}
	<-ctx.Done()
	res.Body, res.ContentLength = http.NoBody, 0
	return res, nil
}

// lateEOF is a body that sends nothing, then ends once ctx did.
type lateEOF struct{ ctx context.Context }

func (r *lateEOF) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, io.EOF
}

// TestTransportIdleLateAnswer: an answer that comes after the idle
// bound cut the request off, whole headers or the end of a body, is
// not taken for the service's: the read fails with ErrIdle.
func TestTransportIdleLateAnswer(t *testing.T) {
	for name, body := range map[string]bool{"headers": false, "end of body": true} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://late.invalid/", nil)
			if err != nil {
				t.Fatal(err)
			}
			tr := Wrap(lateBase{body: body}, Limits{Idle: 50 * time.Millisecond, Total: time.Minute})
			res, err := tr.RoundTrip(req)
			if err == nil {
				_, err = io.Copy(io.Discard, res.Body)
				_ = res.Body.Close()
			}
			if !errors.Is(err, ErrIdle) {
				t.Fatalf("%v, want ErrIdle", err)
			}
		})
	}
}

// TestTransportSteadyAnswer: an answer whose bytes come more often than
// the idle time is read whole, however long it takes in all.
func TestTransportSteadyAnswer(t *testing.T) {
	ts := httptest.NewServer(&hostile.Trickle{Prefix: "[]", Every: 20 * time.Millisecond, Max: 25})
	defer ts.Close()
	n, err := get(context.Background(), ts.URL, Limits{Idle: 200 * time.Millisecond, MaxBytes: 1 << 10})
	if err != nil || n != 27 {
		t.Fatalf("read %d bytes, %v; want 27", n, err)
	}
}

// TestTransportPageTimeout: a server that trickles within the idle time
// is cut off at the total time of one answer.
func TestTransportPageTimeout(t *testing.T) {
	ts := httptest.NewServer(&hostile.Trickle{Prefix: "[", Every: 20 * time.Millisecond, Max: 3000})
	defer ts.Close()
	// The idle bound is far above the trickle's gaps, so that only the
	// total bound can end the read, however loaded the machine.
	_, err := get(context.Background(), ts.URL, Limits{Idle: 5 * time.Second, Total: time.Second, Fix: "ask for less"})
	if !errors.Is(err, ErrPageTimeout) || !strings.Contains(err.Error(), "the answer took over 1s") || !strings.HasSuffix(err.Error(), ": ask for less") {
		t.Fatalf("%v, want ErrPageTimeout naming the time and the fix", err)
	}
}

// TestTransportCancel: cancelling the request's context mid-body ends
// the read with context.Canceled, not a bound's error.
func TestTransportCancel(t *testing.T) {
	started := make(chan struct{})
	ts := httptest.NewServer(&hostile.Trickle{Prefix: `{"hits":`, Started: started})
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	start := time.Now()
	_, err := get(ctx, ts.URL, Limits{Idle: time.Minute, Total: time.Minute, MaxBytes: 1 << 20})
	var be *Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &be) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %s", d)
	}
}

// closingBody is a request body as the AWS SDK's (smithy-go's) is: its
// caller closes it once the answer's headers came, and once closed,
// WriteTo fails with io.EOF. Its read past its content waits for the
// close, as the transport's last read does when the close lands then.
type closingBody struct {
	r      *strings.Reader
	closed chan struct{}
	once   sync.Once
}

func (b *closingBody) Read(p []byte) (int, error) {
	if b.r.Len() > 0 {
		return b.r.Read(p)
	}
	<-b.closed
	return 0, io.EOF
}

func (b *closingBody) WriteTo(w io.Writer) (int64, error) {
	if b.r.Len() > 0 {
		return b.r.WriteTo(w)
	}
	<-b.closed
	return 0, io.EOF
}

func (b *closingBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestTransportOwnsTheRequestBody: a caller that closes its request's
// body as soon as the answer's headers come (the AWS SDK) does not cut
// the answer off: the transport writes from a copy of its own.
func TestTransportOwnsTheRequestBody(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "[")
		w.(http.Flusher).Flush()
		time.Sleep(100 * time.Millisecond)
		_, _ = io.WriteString(w, "]")
	}))
	defer ts.Close()
	const sent = `{"logGroupName":"g"}`
	body := &closingBody{r: strings.NewReader(sent), closed: make(chan struct{})}
	req, _ := http.NewRequest(http.MethodPost, ts.URL, body)
	req.ContentLength = int64(len(sent))
	tr, _ := NewTransport(Limits{Idle: 5 * time.Second}, nil)
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = body.Close()
	got, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil || string(got) != "[]" {
		t.Fatalf("answer %q, %v; want [] whole", got, err)
	}
}

func TestPageLimitsDefaults(t *testing.T) {
	got := PageLimits(audit.SourceConfig{}, "fix")
	want := Limits{Idle: audit.DefaultSourceTimeout, Total: audit.PageTimeoutFactor * audit.DefaultSourceTimeout, MaxBytes: audit.DefaultMaxResponseBytes, Fix: "fix"}
	if got != want {
		t.Errorf("PageLimits = %+v, want %+v", got, want)
	}
	if got := PageLimits(audit.SourceConfig{Timeout: time.Second}, ""); got.Total != audit.PageTimeoutFactor*time.Second {
		t.Errorf("the total time follows the timeout: %+v", got)
	}
	if got := StreamLimits(audit.SourceConfig{Timeout: time.Second}); got != (Limits{Idle: time.Second}) {
		t.Errorf("StreamLimits = %+v, want the idle time alone", got)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestConnIdle: a read that gets no byte within the idle time fails with
// ErrIdle; one cut off by the user's earlier deadline fails as the
// connection's do; bytes that come in time are read.
func TestConnIdle(t *testing.T) {
	addr := hostile.MuteTCP(t, func(c net.Conn) {
		for i := 0; i < 3; i++ {
			time.Sleep(20 * time.Millisecond)
			if _, err := c.Write([]byte{'x'}); err != nil {
				return
			}
		}
	})
	c, err := Dial(context.Background(), addr, time.Second, 200*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	b := make([]byte, 1)
	for i := 0; i < 3; i++ {
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatalf("byte %d: %v", i, err)
		}
	}
	if _, err := c.Read(b); !errors.Is(err, ErrIdle) {
		t.Fatalf("%v, want ErrIdle", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Read(b); !errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, ErrIdle) {
		t.Fatalf("%v, want the user's deadline", err)
	}
}
