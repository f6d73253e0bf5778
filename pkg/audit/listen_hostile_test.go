package audit

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestListenerSkipsBadItems: items the decoder would refuse (not an
// object, a field of the wrong type, another kind or version, a time
// that is not one) each cost themselves only: the batch is answered 200,
// its good events and the next batches pass on, the whole stream decodes,
// and the refusals name the sender and the item, escaped.
func TestListenerSkipsBadItems(t *testing.T) {
	l := startListener(t, ListenConfig{})
	src := l.Source()
	type result struct {
		ids []string
		err error
	}
	decoded := make(chan result, 1)
	go func() {
		var r result
		_, r.err = Decode(context.Background(), src, Options{}, func(e *Event) error {
			r.ids = append(r.ids, e.AuditID)
			return nil
		})
		decoded <- r
	}()
	good := func(i int) string {
		return strings.Replace(eventLine(i), `"kind":"Event","apiVersion":"audit.k8s.io/v1",`, "", 1)
	}
	body := listOf(good(0), `1`, `{"verb":5}`, `{"kind":"Foo\u001b[31m","stage":"ResponseComplete"}`, `"x"`,
		`{"apiVersion":"audit.k8s.io/v1beta1"}`, `{"stage":"ResponseComplete","stageTimestamp":"yesterday"}`,
		`{"stage":"ResponseStarted"}`, good(1))
	if code := send(t, l.URL(), body); code != 200 {
		t.Fatalf("the batch with bad items: %d, want 200", code)
	}
	if code := send(t, l.URL(), []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"a":`)); code != 400 {
		t.Errorf("a body cut short: %d, want 400", code)
	}
	if code := send(t, l.URL(), eventList(2, 1, false)); code != 200 {
		t.Fatalf("the next batch: %d", code)
	}
	_ = l.Close(context.Background())
	r := <-decoded
	if r.err != nil || strings.Join(r.ids, ",") != "id-0,id-1,id-2" {
		t.Fatalf("decoded %v, %v: want id-0,id-1,id-2 and no error", r.ids, r.err)
	}
	st := l.Stats()
	if st.RejectedEvents != 6 || st.OtherStages != 1 || st.Events != 3 || st.RejectedBy[RejectNotEventList] != 1 {
		t.Errorf("stats %+v: want 6 items refused, 1 of another stage, 3 passed on, 1 body refused", st)
	}
	var reasons []string
	for _, r := range st.Rejects {
		if !strings.HasPrefix(r.Remote, "127.0.0.1:") || strings.ContainsAny(r.Reason+r.Remote, "\x1b\n\r") {
			t.Errorf("refusal %+v: want the sender's address, escaped", r)
		}
		reasons = append(reasons, r.Reason)
	}
	for _, want := range []string{"item 1: not an audit event", "item 2: not an audit event: json: cannot unmarshal number", `item 3: not an audit event (kind "Foo\x1b[31m")`, "item 5: audit.k8s.io/v1beta1 is not supported", "item 6: not an audit event: parsing time"} {
		if !strings.Contains(strings.Join(reasons, "\n"), want) {
			t.Errorf("no refusal says %q:\n%s", want, strings.Join(reasons, "\n"))
		}
	}
}

// lazyList is an EventList body of n copies of item, made as it is read.
type lazyList struct {
	parts []string
	n     int
	i     int
	rest  string
}

func newLazyList(item string, size int) *lazyList {
	head := `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[`
	n := (size - len(head) - 2) / (len(item) + 1)
	return &lazyList{parts: []string{head, item}, n: n, rest: head}
}

func (l *lazyList) size() int64 {
	return int64(len(l.parts[0]) + l.n*(len(l.parts[1])+1) - 1 + 2)
}

func (l *lazyList) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if l.rest == "" {
			switch {
			case l.i < l.n-1:
				l.rest = l.parts[1] + ","
			case l.i == l.n-1:
				l.rest = l.parts[1] + "]}"
			default:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			l.i++
		}
		c := copy(p[n:], l.rest)
		n += c
		l.rest = l.rest[c:]
	}
	return n, nil
}

// heapPeak samples the heap in use until stop is closed, and returns
// the most it saw.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	peak := make(chan uint64, 1)
	go func() {
		var most uint64
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			most = max(most, ms.HeapInuse)
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	return peak
}

// countLines reads the receiver's source to its end (Close) on a
// goroutine of its own, keeping only the count of lines and the last.
func countLines(l *Listener) <-chan []string {
	got := make(chan []string, 1)
	go func() {
		rc, _ := l.Source().open()
		sc := bufio.NewScanner(rc)
		sc.Buffer(nil, MaxLineBytes+1)
		n, last := 0, ""
		for sc.Scan() {
			n++
			last = sc.Text()
		}
		got <- []string{strconv.Itoa(n), last}
	}()
	return got
}

// TestListenerMemoryIsBoundedByWhatItHolds: three bodies of some 63 MiB
// of tiny items (of another stage; of stage Panic, more lines than the
// memory left holds; of stage ResponseComplete, in another order) and one
// of items nested thousands deep, sent at once and again when answered
// 503 or cut (as the webhook backend does), are read within the bound: the
// memory the receiver counts never passes it, the heap grows by no more
// than a few times it, and the capture goes on. (The race detector slows
// the scanning some ten times: bodies and bound are then a tenth.)
func TestListenerMemoryIsBoundedByWhatItHolds(t *testing.T) {
	size, bound := 63<<20, int64(DefaultListenMemory)
	if raceEnabled {
		size, bound = size/10, bound/10
	}
	l := startListener(t, ListenConfig{MemoryBytes: bound})
	got := countLines(l)
	deep := strings.Repeat("[", 3000) + strings.Repeat("]", 3000)
	items := []string{`{}`, `{"stage":"Panic","a":[]}`, `{"stageTimestamp":null,"stage":"ResponseComplete"}`, deep}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := make(chan struct{})
	peak := heapPeak(stop)
	codes := make([][]int, len(items))
	var wg sync.WaitGroup
	deadline := time.Now().Add(5 * time.Minute)
	for i, item := range items {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				body := newLazyList(item, size)
				req, _ := http.NewRequest(http.MethodPost, l.URL(), body)
				req.ContentLength = body.size()
				req.Header.Set("Authorization", "Bearer "+testToken)
				req.Header.Set("Content-Type", "application/json")
				code := 0
				if resp, err := testClient.Do(req); err == nil {
					code = resp.StatusCode
					_ = resp.Body.Close()
				}
				codes[i] = append(codes[i], code)
				// 0: the connection closed as the body was sent.
				if code != http.StatusServiceUnavailable && code != 0 {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if code := send(t, l.URL(), eventList(0, 3, false)); code != 200 {
		t.Errorf("a good batch after: %d", code)
	}
	close(stop)
	heap := <-peak
	_ = l.Close(context.Background())
	lines := <-got
	st := l.Stats()
	for i, c := range codes {
		if len(c) == 0 || c[len(c)-1] != 200 {
			t.Errorf("body %d: answered %v, want 200 at last", i, c)
		}
	}
	if st.PeakMemory > bound || st.Batches != 5 {
		t.Errorf("the receiver held %d bytes at most, bound %d; %d batches read, want 5", st.PeakMemory, bound, st.Batches)
	}
	if grew := int64(heap) - int64(base.HeapInuse); grew > 3*bound {
		t.Errorf("the heap grew by %d MiB, over 3 x the %d MiB bound", grew>>20, bound>>20)
	}
	if st.OtherStages == 0 || st.DroppedEvents == 0 || st.RejectedEvents == 0 || lines[1] != eventLine(2) {
		t.Errorf("stats %+v, %s lines, the last %q: want items of other stages, dropped and refused, and the good batch passed on last", st, lines[0], lines[1])
	}
	t.Logf("bodies of %d MiB, bound %d MiB: held %d MiB at most, heap grew %d MiB; %s lines passed on; %d requests refused 503", size>>20, bound>>20, st.PeakMemory>>20, (int64(heap)-int64(base.HeapInuse))>>20, lines[0], st.RejectedBy[RejectMemory])
}

// slowSender opens a connection from 127.0.0.2 and sends a request whose
// body comes a byte a second, for at most secs seconds; it returns when
// the connection is closed or the time is up, and says whether it was
// closed (by the receiver) first.
func slowSender(url string, secs int) bool {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	raw, err := d.Dial("tcp", strings.TrimPrefix(url, "https://"))
	if err != nil {
		return true
	}
	conn := tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Duration(secs+2) * time.Second))
	if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", testToken); err != nil {
		return true
	}
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		close(closed)
	}()
	for range secs {
		if _, err := conn.Write([]byte("{")); err != nil {
			return true
		}
		select {
		case <-closed:
			return true
		case <-time.After(time.Second):
		}
	}
	return false
}

// TestListenerSlowSendersDoNotStallOthers: 50 connections from one
// address sending their bodies a byte a second: those past the address's
// cap are closed at once, the others cut at their body's deadline; while
// they are open, a sender from another address has every batch answered
// and passed on.
func TestListenerSlowSendersDoNotStallOthers(t *testing.T) {
	l := startListener(t, ListenConfig{Limits: ListenLimits{BodyTimeout: 5 * time.Second, ConnsPerAddress: 8}})
	got := readAll(l)
	var wg sync.WaitGroup
	closedEarly := make(chan bool, 50)
	for range 50 {
		wg.Go(func() { closedEarly <- slowSender(l.URL(), 10) })
	}
	// The slow senders are in: every one accepted or refused.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && l.Stats().RejectedBy[RejectConnections] < 42; {
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 20 {
		if code := send(t, l.URL(), eventList(i*5, 5, false)); code != 200 {
			t.Fatalf("batch %d of the good sender: %d", i, code)
		}
	}
	during := l.Stats()
	wg.Wait()
	close(closedEarly)
	early := 0
	for c := range closedEarly {
		if c {
			early++
		}
	}
	_ = l.Close(context.Background())
	if lines := <-got; len(lines) != 100 {
		t.Errorf("%d events passed on, want the good sender's 100", len(lines))
	}
	if during.RejectedBy[RejectConnections] != 42 || during.RejectedBy[RejectSlow] != 0 || during.Batches != 20 {
		t.Errorf("while the slow senders were open: %v, %d batches; want 42 connections refused, none cut yet, 20 batches", during.RejectedBy, during.Batches)
	}
	if st := l.Stats(); st.RejectedBy[RejectSlow] != 8 || early != 50 {
		t.Errorf("refused %v; %d of 50 slow senders closed before they were done: want the 8 accepted cut at their deadline, all closed", st.RejectedBy, early)
	}
}

// TestListenerHeaderTimeout: a sender that sends its header a byte a
// second is closed once the header timeout passes.
func TestListenerHeaderTimeout(t *testing.T) {
	l := startListener(t, ListenConfig{Limits: ListenLimits{HeaderTimeout: time.Second}})
	conn, err := tls.Dial("tcp", strings.TrimPrefix(l.URL(), "https://"), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		close(closed)
	}()
	for range 6 {
		select {
		case <-closed:
			return
		case <-time.After(time.Second):
		}
		_, _ = conn.Write([]byte("P"))
	}
	t.Fatal("the connection is still open 6 s into a header with a 1 s timeout")
}

// TestListenerDropsLateEventsOnceTheCopyStops: once the analysis's copy
// of the events reaches MaxSpool, an event that completed more than the
// late window before the newest passed on is dropped and counted, so
// that the analysis never needs the copy for it; events within the window
// pass on, and the capture goes on.
func TestListenerDropsLateEventsOnceTheCopyStops(t *testing.T) {
	l := startListener(t, ListenConfig{MaxSpool: 3 * int64(len(eventLine(0))+1)})
	sp, err := NewSpool(l.Source(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sp.Close() }()
	read := make(chan []string, 1)
	go func() {
		var ids []string
		_, _ = Decode(context.Background(), sp.Source(), Options{}, func(e *Event) error {
			ids = append(ids, e.AuditID)
			return nil
		})
		read <- ids
	}()
	if code := send(t, l.URL(), eventList(0, 5, false)); code != 200 {
		t.Fatal(code)
	}
	for deadline := time.Now().Add(10 * time.Second); l.Stats().SpoolStopped == "" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// Completed 10 s after the first; then 5 s before that (late), 1 s
	// before (within the 2 s window).
	for _, b := range [][]byte{eventList(10000, 3, false), eventList(5000, 3, false), eventList(9000, 1, false)} {
		if code := send(t, l.URL(), b); code != 200 {
			t.Fatal(code)
		}
	}
	_ = l.Close(context.Background())
	ids := <-read
	want := "id-0,id-1,id-2,id-3,id-4,id-10000,id-10001,id-10002,id-9000"
	st := l.Stats()
	if strings.Join(ids, ",") != want || st.Late != 3 || st.Events != 9 || !strings.Contains(st.SpoolStopped, "--spool-max") {
		t.Errorf("passed on %v, stats %+v; want %s, 3 late, the copy stopped at --spool-max", ids, st, want)
	}
	if _, err := sp.Rest(); !errors.Is(err, ErrSpoolFull) {
		t.Errorf("Rest: %v, want ErrSpoolFull (the stream was read to its end)", err)
	}
}
