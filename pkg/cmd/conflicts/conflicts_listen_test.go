package conflicts

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-rv/kubectl-rv/internal/cmdtest"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

func TestConflictsListenFlags(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "webhook.kubeconfig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "127.0.0.1:0"}, "senders must authenticate: give --webhook-kubeconfig FILE"},
		{[]string{"--audit-log", "x.log", "--webhook-kubeconfig", kc}, "--webhook-kubeconfig goes with --listen ADDR"},
		{[]string{"--audit-log", "x.log", "--record-append"}, "--record-append goes with --listen ADDR"},
		{[]string{"--listen", "127.0.0.1:0", "--webhook-kubeconfig", kc, "--record-append"}, "--record-append appends to --record FILE"},
		{[]string{"--listen", "127.0.0.1:0", "--webhook-kubeconfig", kc, "--spool-max", "-1Gi"}, `--spool-max "-1Gi": give a positive size`},
		{[]string{"--listen", "127.0.0.1:0", "--webhook-kubeconfig", kc, "--spool-max", "lots"}, `--spool-max "lots"`},
		{[]string{"--audit-log", "x.log", "--fail-on-rate", "-1"}, "--fail-on-rate is a fraction of attempts between 0 and 1, got -1"},
		// No host: the certificate the listener makes must name one.
		{[]string{"--listen", ":8443", "--webhook-kubeconfig", kc}, "--listen :8443: a certificate of its own is made for an IP address or localhost only: give one of those, or --listen-cert and --listen-key"},
	} {
		out, errOut, code := run(t, append([]string{"conflicts"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("conflicts %q: exit %d, stdout %q, stderr %q; want exit 2 with %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if _, err := os.Lstat(kc); err == nil {
		t.Errorf("a refused command wrote %s", kc)
	}
}

// capture is a conflicts --listen run in process, its sender the one
// the webhook kubeconfig it wrote describes.
type capture struct {
	cfg         *rest.Config
	client      *http.Client
	out, errOut *bytes.Buffer
	interrupt   context.CancelFunc
	code        chan int
}

// startCapture runs conflicts --listen 127.0.0.1:0 --webhook-kubeconfig
// DIR/webhook.kubeconfig ARGS and waits for the kubeconfig.
func startCapture(t *testing.T, dir string, args ...string) *capture {
	t.Helper()
	kc := filepath.Join(dir, "webhook.kubeconfig")
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := cmdtest.Root(streams, NewCmdConflicts)
	root.SetArgs(append([]string{"conflicts", "--listen", "127.0.0.1:0", "--webhook-kubeconfig", kc}, args...))
	ctx, interrupt := context.WithCancel(context.Background())
	t.Cleanup(interrupt)
	c := &capture{out: out, errOut: errOut, interrupt: interrupt, code: make(chan int, 1)}
	go func() { c.code <- cmdutil.HandleError(errOut, root.ExecuteContext(ctx)) }()
	var data []byte
	for deadline := time.Now().Add(20 * time.Second); len(data) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 20s; stderr %q", kc, errOut)
		}
		data, _ = os.ReadFile(kc)
	}
	var err error
	if c.cfg, err = clientcmd.RESTConfigFromKubeConfig(data); err != nil {
		t.Fatal(err)
	}
	// The API server's webhook backend posts with client-go as this does.
	if c.client, err = rest.HTTPClientFor(c.cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

// post sends an EventList of items with client and returns the status.
func (c *capture) post(t *testing.T, client *http.Client, items ...string) int {
	t.Helper()
	body := `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[` + strings.Join(items, ",") + `]}`
	req, err := http.NewRequest(http.MethodPost, c.cfg.Host, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// stop is Ctrl-C: the capture ends with a report, exit 0.
func (c *capture) stop(t *testing.T) {
	t.Helper()
	c.interrupt()
	select {
	case code := <-c.code:
		if code != 0 {
			t.Fatalf("exit %d after Ctrl-C, want 0 (the report); stderr %q", code, c.errOut)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no report 30s after Ctrl-C")
	}
}

// TestConflictsListenCapture: the generated kubeconfig's sender is heard,
// a forged batch is refused, a bad item costs itself only, Ctrl-C ends
// the capture with a report, and the record is 0600.
func TestConflictsListenCapture(t *testing.T) {
	dir := t.TempDir()
	kc, rec := filepath.Join(dir, "webhook.kubeconfig"), filepath.Join(dir, "received.log")
	c := startCapture(t, dir, "--record", rec, "--view", "writers", "-o", "json")
	forged := strings.Replace(conflictLine, `"username":"u"`, `"username":"forged"`, 1)
	if got := c.post(t, c.client, conflictLine, `{"verb":5}`, conflictLine); got != http.StatusOK {
		t.Fatalf("the kubeconfig's sender: %d, want 200", got)
	}
	// Without the token: the same TLS trust, no Authorization header.
	anon, err := rest.HTTPClientFor(rest.AnonymousClientConfig(c.cfg))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.post(t, anon, forged); got != http.StatusUnauthorized {
		t.Fatalf("a sender without the token: %d, want 401", got)
	}
	c.stop(t)
	out, errOut := c.out, c.errOut
	var rep struct {
		Summary struct {
			Attempts int `json:"attempts"`
		} `json:"summary"`
		Writers []struct {
			Writer struct {
				User         string `json:"user"`
				FieldManager string `json:"fieldManager"`
			} `json:"writer"`
		} `json:"writers"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout: %v: %q", err, out)
	}
	if rep.Summary.Attempts != 2 || len(rep.Writers) != 1 || rep.Writers[0].Writer.User != "u" || rep.Writers[0].Writer.FieldManager != "w" {
		t.Errorf("report: %+v, want the two attempts of u/w only", rep)
	}
	for _, want := range []string{"received 2 audit events in 1 batches", "skipped 1 events", "refused 1 requests or connections, none counted: 1 no credentials", "refused from 127.0.0.1:", "item 1:"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q: %q", want, errOut)
		}
	}
	for _, f := range []string{kc, rec} {
		fi, err := os.Lstat(f)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, fi.Mode())
		}
	}
	if b, _ := os.ReadFile(rec); strings.Count(string(b), "\n") != 2 || strings.Contains(string(b), "forged") {
		t.Errorf("record: %q, want the two good events only", b)
	}
}

// TestConflictsListenSpoolFull: once --spool-max is reached, an event
// completed more than 2s before the newest is dropped and counted, and
// the capture still ends with its report (the picture without the
// hottest object's timeline, which needed a second reading).
func TestConflictsListenSpoolFull(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "report.svg")
	listener := watchListener(t)
	c := startCapture(t, dir, "--spool-max", "1", "--report", svg, "-o", "json")
	at := func(ts string) string {
		return strings.NewReplacer("2026-11-24T10:00:00Z", "2026-11-24T10:00:"+ts+"Z", "2026-11-24T10:00:00.001Z", "2026-11-24T10:00:"+ts+".001Z").Replace(conflictLine)
	}
	if got := c.post(t, c.client, at("10"), at("20")); got != http.StatusOK {
		t.Fatalf("post: %d", got)
	}
	// 10s behind the newest: past the 2s window, once the copy stopped.
	for deadline := time.Now().Add(20 * time.Second); (<-listener).Stats().SpoolStopped == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the copy has not stopped 20s after a line went past --spool-max 1")
		}
	}
	if got := c.post(t, c.client, at("10"), at("19")); got != http.StatusOK {
		t.Fatalf("post: %d", got)
	}
	c.stop(t)
	var rep struct {
		Summary struct {
			Attempts int `json:"attempts"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(c.out.Bytes(), &rep); err != nil {
		t.Fatalf("stdout: %v: %q", err, c.out)
	}
	if rep.Summary.Attempts != 3 {
		t.Errorf("attempts %d, want 3: the late one dropped", rep.Summary.Attempts)
	}
	if want := "1 events older than the window (2s) dropped"; !strings.Contains(c.errOut.String(), want) {
		t.Errorf("stderr lacks %q: %q", want, c.errOut)
	}
	if fi, err := os.Stat(svg); err != nil || fi.Size() == 0 {
		t.Errorf("--report: %v", err)
	}
}

// watchListener returns a channel that yields the receiver of the next
// conflicts --listen, again and again.
func watchListener(t *testing.T) <-chan *audit.Listener {
	ch, done := make(chan *audit.Listener), make(chan struct{})
	old := onListen
	onListen = func(l *audit.Listener) {
		go func() {
			for {
				select {
				case ch <- l:
				case <-done:
					return
				}
			}
		}()
	}
	t.Cleanup(func() {
		onListen = old
		close(done)
	})
	return ch
}
