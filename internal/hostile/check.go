package hostile

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// Reader is a --source reader as Check tests it.
type Reader struct {
	// Serve is the service's local server, whose page requests (a
	// search, FilterLogEvents) page answers.
	Serve func(page http.Handler) http.Handler
	// Read reads the source of the server at url with cfg until the
	// error that ends it.
	Read func(ctx context.Context, url string, cfg audit.SourceConfig) error
	// Prefix, then Item again and again, is a page of the service's
	// JSON that never ends.
	Prefix, Item string
	// Name is the source's name for the server at url: every error
	// carries it.
	Name func(url string) string
	// Garbage is what the error says of a page that is not JSON.
	Garbage string
}

// Cap is the MaxResponseBytes Check reads with, Timeout its
// SourceConfig.Timeout and PageTimeout its PageTimeout. Timeout applies to
// the service's every answer, the ones it serves as it should too: long
// enough that those come in time under -race on a busy machine (300 ms
// did not, at a load average of 20), short enough to meet in a test.
// PageTimeout is long, so that a reader slow to decode an endless page
// meets the cap first.
const (
	Cap         = 4 << 20
	Timeout     = 2 * time.Second
	PageTimeout = time.Minute
)

// Check reads through r pages that are endless, declare 2 GB, trickle a
// byte a second, never come, are not JSON, or stall while the read is
// cancelled. Each bound's error is the service's (exit 3), carries the
// source's name and the bound's words, costs one request (not retried)
// and, for the big pages, a bounded amount of memory; the cancelled read
// ends promptly with context.Canceled (exit 130's class).
func Check(t *testing.T, r Reader) {
	t.Helper()
	t.Run("endless page", func(t *testing.T) {
		checkHuge(t, r, &Huge{Prefix: r.Prefix, Item: r.Item}, "the answer is over 4 MiB")
	})
	t.Run("page declaring 2 GB", func(t *testing.T) {
		checkHuge(t, r, &Huge{Prefix: r.Prefix, Item: r.Item, Declare: 2 << 30}, "the answer declares 2147483648 bytes, over 4 MiB")
	})
	t.Run("a byte every 5 s", func(t *testing.T) {
		err := readPage(context.Background(), t, r, &Trickle{Prefix: r.Prefix, Every: 5 * time.Second, Max: 12})
		wantBound(t, r, err, bounded.ErrIdle, "the service sent nothing for 2s")
	})
	t.Run("no answer", func(t *testing.T) {
		err := readPage(context.Background(), t, r, http.HandlerFunc(Silent))
		wantBound(t, r, err, bounded.ErrIdle, "the service sent nothing for 2s")
	})
	t.Run("not JSON", func(t *testing.T) {
		err := readPage(context.Background(), t, r, http.HandlerFunc(Garbage))
		if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), r.Garbage) {
			t.Errorf("error %v (exit %d), want the service's (exit 3) saying %q", err, exitcode.Classify(err), r.Garbage)
		}
	})
	t.Run("cancelled mid-page", func(t *testing.T) {
		started := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			<-started
			cancel()
		}()
		start := time.Now()
		err := readPage(ctx, t, r, &Trickle{Prefix: r.Prefix, Started: started})
		if !errors.Is(err, context.Canceled) || exitcode.Classify(err) != exitcode.CodeInterrupted {
			t.Errorf("error %v (exit %d), want context.Canceled", err, exitcode.Classify(err))
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the read ended %s after it was cancelled", d)
		}
	})
}

// checkHuge reads a page h serves, and wants ErrTooLarge, memory for a
// few times the cap, and the server stopped well before its 2 GB.
func checkHuge(t *testing.T, r Reader, h *Huge, want string) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := readPage(context.Background(), t, r, h)
	runtime.ReadMemStats(&after)
	wantBound(t, r, err, bounded.ErrTooLarge, want)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*Cap {
		t.Errorf("the read allocated %d bytes for a cap of %d", alloc, Cap)
	}
	if sent := h.Sent(); sent > 16*Cap {
		t.Errorf("the server sent %d bytes: the transfer went on past the cap", sent)
	}
}

// readPage serves page behind r's server and reads the source, returning
// its error; the page must have been asked for once.
func readPage(ctx context.Context, t *testing.T, r Reader, page http.Handler) error {
	var asked atomic.Int64
	counted := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		asked.Add(1)
		page.ServeHTTP(w, req)
	})
	ts := httptest.NewServer(r.Serve(counted))
	err := r.Read(ctx, ts.URL, audit.SourceConfig{Timeout: Timeout, PageTimeout: PageTimeout, MaxResponseBytes: Cap})
	t.Logf("error: %v", err)
	ts.CloseClientConnections()
	ts.Close()
	if errors.Is(err, context.Canceled) {
		return err
	}
	if err != nil && !strings.Contains(err.Error(), r.Name(ts.URL)) {
		t.Errorf("error %v does not name the source %s", err, r.Name(ts.URL))
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the page was asked for %d times, want once (no retry)", n)
	}
	return err
}

// wantBound wants err to be the service's (exit 3), of kind, saying want.
func wantBound(t *testing.T, r Reader, err, kind error, want string) {
	t.Helper()
	if !errors.Is(err, kind) || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v (exit %d), want the service's (exit 3), %v, saying %q", err, exitcode.Classify(err), kind, want)
	}
}
