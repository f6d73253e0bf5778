package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// eventLine is one Metadata-level audit event as the API server writes it.
func eventLine(i int) string {
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/c","verb":"update","user":{"username":"u"},"userAgent":"ua/1","objectRef":{"resource":"configmaps","namespace":"ns","name":"c","apiVersion":"v1","resourceVersion":"%d"},"responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"2026-11-27T10:00:00.000000Z","stageTimestamp":"2026-11-27T10:00:00.001000Z"}`, i, i)
}

// batch is an EventList of events from, the way the webhook backend
// POSTs it: items without kind and apiVersion (pretty-printed items too,
// to check they become one line).
func batch(from, n int, pretty bool) []byte {
	var items []string
	for i := from; i < from+n; i++ {
		l := strings.Replace(eventLine(i), `"kind":"Event","apiVersion":"audit.k8s.io/v1",`, "", 1)
		if pretty {
			l = strings.Replace(l, `,"verb"`, ",\n  \"verb\"", 1)
		}
		items = append(items, l)
	}
	return []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[` + strings.Join(items, ",") + `]}`)
}

func post(t testing.TB, url string, body []byte) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func TestListenerPassesBatchesOnAsLogLines(t *testing.T) {
	var rec bytes.Buffer
	l, err := Listen(ListenConfig{Addr: "127.0.0.1:0", Record: &rec})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []string)
	go func() {
		rc, _ := l.Source().open()
		b, _ := io.ReadAll(rc)
		got <- strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}()
	for _, tc := range []struct {
		body []byte
		code int
	}{
		{batch(0, 3, false), 200},
		{batch(3, 2, true), 200},
		{[]byte(`{"kind":"Event","apiVersion":"audit.k8s.io/v1"}`), 400},
		{[]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1beta1","items":[]}`), 400},
		{[]byte(`{"kind":"EventList"`), 400},
	} {
		if code := post(t, l.URL(), tc.body); code != tc.code {
			t.Errorf("POST %.40s...: %d, want %d", tc.body, code, tc.code)
		}
	}
	if err := l.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := <-got
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, line := range lines {
		if want := eventLine(i); line != want {
			t.Errorf("line %d:\n%s\nwant\n%s", i, line, want)
		}
	}
	if rec.String() != strings.Join(lines, "\n")+"\n" {
		t.Errorf("the record differs from the source:\n%s", rec.String())
	}
	if st := l.Stats(); st.Batches != 2 || st.Events != 5 || st.Rejected != 3 || st.DroppedBatches != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestListenerDropsWhenTheQueueIsFull: nobody reads the source, the queue
// holds one batch (and the drain goroutine one more): further batches are
// answered 200 at once and counted as dropped, never waited for.
func TestListenerDropsWhenTheQueueIsFull(t *testing.T) {
	l, err := Listen(ListenConfig{Addr: "127.0.0.1:0", QueueBatches: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if code := post(t, l.URL(), batch(i*2, 2, false)); code != 200 {
			t.Fatalf("POST %d: %d", i, code)
		}
	}
	_ = l.End(context.Background())
	st := l.Stats()
	if st.Batches != 5 || st.DroppedBatches < 3 || st.DroppedEvents != 2*st.DroppedBatches || st.Events+st.DroppedEvents != 10 || st.PeakQueued != 1 {
		t.Errorf("stats %+v: want 5 batches, at least 3 dropped, every event either passed on or dropped, the queue of 1 full", st)
	}
}

// TestListenerQueueIsBoundedInBytes: a queue of 100 batches but room for
// the bytes of one is full with one batch waiting: nobody reads, the
// drain goroutine holds one more, the rest are dropped.
func TestListenerQueueIsBoundedInBytes(t *testing.T) {
	body := batch(0, 2, false)
	l, err := Listen(ListenConfig{Addr: "127.0.0.1:0", QueueBatches: 100, QueueBytes: int64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if code := post(t, l.URL(), body); code != 200 {
			t.Fatalf("POST: %d", code)
		}
	}
	_ = l.End(context.Background())
	st := l.Stats()
	if st.Batches != 5 || st.DroppedBatches < 3 || st.Events+st.DroppedEvents != 10 || st.PeakQueued != 1 || st.QueueBytes != int64(len(body)) {
		t.Errorf("stats %+v: want 5 batches, at least 3 dropped, every event either passed on or dropped, one batch queued at most", st)
	}
}

func TestListenRefusesPlainHTTPBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0", "nohost"} {
		if l, err := Listen(ListenConfig{Addr: addr}); err == nil {
			_ = l.End(context.Background())
			t.Errorf("Listen(%q) without TLS: no error", addr)
		}
	}
	if _, err := Listen(ListenConfig{Addr: "127.0.0.1:0", CertFile: "x.pem"}); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("a certificate without a key: %v", err)
	}
}

// TestScanEventListReadsTheWebhooksBatches: the API server's batches,
// compact or not, are read by the scanner, not handed to encoding/json;
// bodies it is not sure of are.
func TestScanEventListReadsTheWebhooksBatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"compact", string(batch(0, 3, false)), true},
		{"items spanning lines", string(batch(0, 2, true)), true},
		{"no items", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[]}`, true},
		{"white space", " {\n \"items\" : [ {} , { \"a\" : 1 } ] ,\"apiVersion\":\"audit.k8s.io/v1\",\"kind\":\"EventList\"}\n", true},
		{"a key folded", `{"Kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[]}`, false},
		{"a key escaped", `{"kin\u0064":"EventList","apiVersion":"audit.k8s.io/v1","items":[]}`, false},
		{"a key twice", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[],"items":[]}`, false},
		{"items null", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":null}`, false},
		{"another kind", `{"kind":"Event","apiVersion":"audit.k8s.io/v1","items":[]}`, false},
		{"after the list", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[]}x`, false},
		{"a bad item", `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"a":tru}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, ok := scanEventList([]byte(tc.body), nil)
			if ok != tc.ok {
				t.Fatalf("scanned: %v, want %v", ok, tc.ok)
			}
			want, err := splitBatchJSON([]byte(tc.body))
			if ok && err != nil {
				t.Fatalf("scanned, but encoding/json: %v", err)
			}
			if ok {
				if diff := cmp.Diff(lines(want), lines(items)); diff != "" {
					t.Errorf("items (-encoding/json +scanner):\n%s", diff)
				}
			}
		})
	}
}

func lines(items [][]byte) []string {
	var out []string
	for _, it := range items {
		out = append(out, string(it))
	}
	return out
}

// FuzzSplitBatch holds the scanner of EventList bodies (scanEventList) to
// encoding/json (splitBatchJSON): what it reads, encoding/json reads
// into the same items; every item is one line, and an object item is an
// object line once kind and apiVersion are put in.
func FuzzSplitBatch(f *testing.F) {
	f.Add(batch(0, 2, true))
	f.Add(batch(0, 3, false))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[1,"x",{},{ },[],null]}`))
	f.Add([]byte(` {"items":[{"a" :[1.5e3,-0,"\u00e9\n"]}],"metadata":{"x":{}},"apiVersion":"audit.k8s.io/v1","kind":"EventList"} `))
	f.Add([]byte(`{"KIND":"EventList","apiVersion":"audit.k8s.io/v1","items":[{}]}`))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"kind":"Event"}]}trailing`))
	f.Fuzz(func(t *testing.T, body []byte) {
		scanned, ok := scanEventList(body, nil)
		want, err := splitBatchJSON(body)
		if ok {
			if err != nil {
				t.Fatalf("scanned, but encoding/json: %v", err)
			}
			if diff := cmp.Diff(lines(want), lines(scanned)); diff != "" {
				t.Fatalf("items (-encoding/json +scanner):\n%s", diff)
			}
		}
		items, serr := splitBatch(body, nil)
		if (serr != nil) != (err != nil) {
			t.Fatalf("splitBatch: %v, encoding/json: %v", serr, err)
		}
		for _, it := range items {
			line := appendLine(nil, it)
			if bytes.IndexByte(line, '\n') != len(line)-1 || bytes.IndexByte(line, '\r') >= 0 {
				t.Fatalf("item %q spans lines: %q", it, line)
			}
			if it[0] == '{' && !json.Valid(line) {
				t.Fatalf("item %q: line %q is not JSON", it, line)
			}
		}
	})
}

// BenchmarkListener is the receiver's throughput: batches of 400
// Metadata events (the API server's --audit-webhook-batch-max-size) POSTed
// over loopback as the webhook backend does, read as log lines. Run with
// -cpu 1 for one core; it reports events/s.
func BenchmarkListener(b *testing.B) {
	l, err := Listen(ListenConfig{Addr: "127.0.0.1:0", QueueBatches: 64})
	if err != nil {
		b.Fatal(err)
	}
	read := make(chan int64)
	go func() {
		rc, _ := l.Source().open()
		n, _ := io.Copy(io.Discard, rc)
		read <- n
	}()
	body := batch(0, 400, false)
	client := &http.Client{}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		resp, err := client.Post(l.URL(), "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	_ = l.Close(context.Background())
	<-read
	b.StopTimer()
	_ = l.End(context.Background())
	st := l.Stats()
	b.ReportMetric(float64(st.Events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(st.DroppedEvents), "dropped")
}
