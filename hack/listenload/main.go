// Command listenload measures kubectl rv conflicts --listen under load: it
// starts the command, POSTs audit.k8s.io/v1 EventList batches to it over
// loopback at a steady rate, as the API server's webhook backend does, and
// reports the rate it kept, the events the listener received and dropped
// (from its own report on stderr) and its peak resident memory (VmHWM of
// /proc/PID/status, Linux). The events are a log's lines (hack/genaudit),
// read again and again as needed, each pass's auditIDs made new. With
// -cpus the listener runs on those CPUs only (taskset -c): -cpus 0, with
// the sender itself started under taskset -c 1, measures the listener on
// one core, its sender on another.
//
//	go run ./hack/listenload -rv ./kubectl-rv -log /tmp/audit.log -rate 100000 -for 20s
//
// hack/bench-listen.sh builds the binary and the log and runs it.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	rv := flag.String("rv", "kubectl-rv", "the kubectl-rv binary")
	logPath := flag.String("log", "", "audit log whose lines are sent (required)")
	rate := flag.Int("rate", 100000, "events a second")
	size := flag.Int("batch", 400, "events a batch (the webhook backend's --audit-webhook-batch-max-size is 400 by default)")
	dur := flag.Duration("for", 20*time.Second, "how long to send")
	inflight := flag.Int("inflight", 64, "requests waiting for their answers at most")
	cpus := flag.String("cpus", "", "run the listener on these CPUs only (taskset -c CPUS), e.g. 0 for one core; the sender is pinned by whoever starts it")
	plain := flag.Bool("plain", false, "send plain HTTP without credentials, to a kubectl-rv from before the listener authenticated its senders (943241e and older)")
	flag.Parse()
	if *logPath == "" {
		fmt.Fprintln(os.Stderr, "listenload: -log is required")
		os.Exit(2)
	}
	if err := run(*rv, *logPath, *rate, *size, *inflight, *dur, *cpus, *plain); err != nil {
		fmt.Fprintln(os.Stderr, "listenload:", err)
		os.Exit(1)
	}
}

func run(rv, logPath string, rate, size, inflight int, dur time.Duration, cpus string, plain bool) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	// Made before the listener starts: its memory and time are the
	// sender's.
	batches, err := newBatches(logPath, size)
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	// It receives until interrupted (Ctrl-C), once every batch is sent.
	// taskset execs the listener: the process (and its PID) is the
	// listener's.
	args := []string{rv, "conflicts", "--listen", addr, "-o", "json"}
	dir, err := os.MkdirTemp("", "listenload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "webhook.kubeconfig")
	if !plain {
		args = append(args, "--webhook-kubeconfig", kubeconfig)
	}
	if cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	peak := make(chan usage)
	stopSampling := make(chan struct{})
	go sampleRSS(cmd.Process.Pid, stopSampling, peak)
	url, client := "http://"+addr+"/", &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: inflight}}
	if plain {
		err = waitListening(addr)
	} else {
		url, client, err = webhookClient(kubeconfig, inflight)
	}
	if err != nil {
		return err
	}
	sent, late, elapsed, err := send(url, client, batches, rate/size, inflight, dur)
	if err != nil {
		_ = cmd.Process.Signal(os.Interrupt)
		werr := cmd.Wait()
		return fmt.Errorf("after %d events: %w; %s (%v) said: %s", sent, err, rv, werr, stderr.String())
	}
	_ = cmd.Process.Signal(os.Interrupt)
	werr := cmd.Wait()
	close(stopSampling)
	u := <-peak
	if werr != nil {
		return fmt.Errorf("%s exited: %v: %s", rv, werr, stderr.String())
	}
	fmt.Printf("target %d events/s in batches of %d for %s; sent %d events in %s (%.0f events/s), %d batches late\n", rate, size, dur, sent, elapsed.Round(time.Millisecond), float64(sent)/elapsed.Seconds(), late)
	if cpus != "" {
		fmt.Printf("listener: on CPU %s only (taskset -c; the Go runtime's GOMAXPROCS follows)\n", cpus)
	}
	fmt.Printf("listener: %s", grep(stderr.String(), `(?m)^.*(received|dropped) .*$`))
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	fmt.Printf("listener: peak RSS (VmHWM) %.1f MiB, CPU %s (to its last sample); this sender: CPU %s\n", float64(u.hwmKiB)/1024, u.cpu, time.Duration(self.Utime.Nano()+self.Stime.Nano()).Round(time.Millisecond))
	return nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// webhookClient waits for the kubeconfig the listener writes once it
// listens, and returns its URL and a client that sends as the API
// server's webhook backend does: client-go's, over TLS, with the token.
func webhookClient(kubeconfig string, inflight int) (string, *http.Client, error) {
	for range 200 {
		data, err := os.ReadFile(kubeconfig)
		if err != nil || len(data) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
		if err != nil {
			return "", nil, err
		}
		cfg.Timeout = 10 * time.Second
		cfg.QPS, cfg.Burst = -1, inflight
		client, err := rest.HTTPClientFor(cfg)
		return cfg.Host + "/", client, err
	}
	return "", nil, fmt.Errorf("no %s after 10s", kubeconfig)
}

func waitListening(addr string) error {
	for range 200 {
		if c, err := net.Dial("tcp", addr); err == nil {
			return c.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s", addr)
}

// usage is a process's peak resident memory and CPU time.
type usage struct {
	hwmKiB int64
	cpu    time.Duration
}

// sampleRSS sends the process's VmHWM and CPU time (user and system, in
// the kernel's 100 Hz ticks) as last read once stop is closed.
func sampleRSS(pid int, stop <-chan struct{}, peak chan<- usage) {
	var u usage
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
			if m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b); m != nil {
				u.hwmKiB, _ = strconv.ParseInt(string(m[1]), 10, 64)
			}
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			// Fields after the command's closing parenthesis: utime and
			// stime are the 12th and 13th.
			if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				u.cpu = time.Duration(ut+st) * 10 * time.Millisecond
			}
		}
		select {
		case <-stop:
			peak <- u
			return
		case <-t.C:
		}
	}
}

// batches makes EventList bodies of the log's lines, items without kind
// and apiVersion as the API server sends them. The bodies are made once,
// before the sending starts: the sender's own work per batch is a copy
// and the patches below. The log is sent again and again as needed, each
// pass's events new, as an API server's would be: their auditIDs get the
// pass's number (p0002-...) and their timestamps move on by the log's time
// span (and a second) each pass, so that the stream stays in time order.
type batches struct {
	bodies []body
	// span is how far each pass's timestamps move on.
	span time.Duration
	i    int
}

// body is one EventList and where its events' pass numbers and
// timestamps are.
type body struct {
	b      []byte
	ids    []int
	stamps []stamp
}

// stamp is a timestamp's offset in its body and its time in the log.
type stamp struct {
	at int
	t  time.Time
}

// passWidth is the width of a pass number: p0001-, p0002-...
const passWidth = 4

// stampLayout is the API server's form of an audit event's timestamps.
const stampLayout = "2006-01-02T15:04:05.000000Z07:00"

var stampKeys = []string{`"requestReceivedTimestamp":"`, `"stageTimestamp":"`}

func newBatches(path string, size int) (*batches, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	b := &batches{}
	var cur body
	var buf bytes.Buffer
	var first, last time.Time
	n := 0
	for sc.Scan() {
		if n == 0 {
			buf.WriteString(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[`)
		} else {
			buf.WriteByte(',')
		}
		line := strings.Replace(sc.Text(), `"kind":"Event","apiVersion":"audit.k8s.io/v1",`, "", 1)
		i := strings.Index(line, `"auditID":"`)
		if i < 0 {
			return nil, fmt.Errorf("%s: a line without an auditID", path)
		}
		i += len(`"auditID":"`)
		line = line[:i] + "p" + strings.Repeat("0", passWidth) + "-" + line[i:]
		cur.ids = append(cur.ids, buf.Len()+i+1)
		for _, key := range stampKeys {
			j := strings.Index(line, key)
			if j < 0 {
				continue
			}
			j += len(key)
			v := line[j:min(j+len(stampLayout)-5, len(line))]
			t, err := time.Parse(stampLayout, v)
			if err != nil || t.Format(stampLayout) != v {
				return nil, fmt.Errorf("%s: timestamp %q is not in the API server's form (%s)", path, v, stampLayout)
			}
			cur.stamps = append(cur.stamps, stamp{at: buf.Len() + j, t: t})
			if first.IsZero() || t.Before(first) {
				first = t
			}
			if t.After(last) {
				last = t
			}
		}
		buf.WriteString(line)
		if n++; n == size {
			buf.WriteString("]}")
			cur.b = bytes.Clone(buf.Bytes())
			b.bodies = append(b.bodies, cur)
			buf.Reset()
			cur, n = body{}, 0
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(b.bodies) == 0 {
		return nil, fmt.Errorf("%s: fewer than %d lines", path, size)
	}
	b.span = last.Sub(first).Truncate(time.Second) + 2*time.Second
	return b, nil
}

// next is the next batch's body and its number of events.
func (b *batches) next() ([]byte, int, error) {
	k := b.i % len(b.bodies)
	pass := b.i/len(b.bodies) + 1
	b.i++
	src := &b.bodies[k]
	out := bytes.Clone(src.b)
	digits := fmt.Sprintf("%0*d", passWidth, pass)
	if len(digits) > passWidth {
		return nil, 0, fmt.Errorf("the log was sent %d times: give a longer one", pass-1)
	}
	for _, at := range src.ids {
		copy(out[at:], digits)
	}
	shift := time.Duration(pass-1) * b.span
	for _, st := range src.stamps {
		copy(out[st.at:], st.t.Add(shift).Format(stampLayout))
	}
	return out, len(src.ids), nil
}

// send POSTs perSecond batches a second for dur, each in its own request
// when its turn comes, without waiting for the ones before, as the
// webhook backend does (k8s.io/apiserver's buffered backend sends each
// batch from a goroutine of its own, paced by
// --audit-webhook-batch-throttle-qps): at most inflight at once, over as
// many connections. A batch whose turn passed while inflight requests
// were waiting for their answers is sent once one is answered, and
// counted late.
func send(url string, client *http.Client, b *batches, perSecond, inflight int, dur time.Duration) (sent, late int, elapsed time.Duration, err error) {
	interval := time.Second / time.Duration(perSecond)
	slots := make(chan struct{}, inflight)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		if due.Sub(start) >= dur {
			break
		}
		body, n, err := b.next()
		if err != nil {
			return sent, late, 0, err
		}
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		slots <- struct{}{}
		if time.Until(due) < -interval {
			late++
		}
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			err := post(client, url, body)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if err == nil {
				sent += n
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return sent, late, 0, firstErr
	}
	return sent, late, time.Since(start), nil
}

func post(client *http.Client, url string, body []byte) error {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST: %s", resp.Status)
	}
	return nil
}

func grep(s, pattern string) string {
	var out strings.Builder
	for _, m := range regexp.MustCompile(pattern).FindAllString(s, -1) {
		out.WriteString(m + "\n")
	}
	return out.String()
}
