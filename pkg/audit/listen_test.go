package audit

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testToken is the bearer token of the tests' receivers.
const testToken = "test-token-0123456789abcdef"

// eventLine is one Metadata-level audit event as the API server writes
// it; i sets its auditID, resourceVersion and, in milliseconds, its
// stageTimestamp.
func eventLine(i int) string {
	ts := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000000Z")
	return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-%d","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ns/configmaps/c","verb":"update","user":{"username":"u"},"userAgent":"ua/1","objectRef":{"resource":"configmaps","namespace":"ns","name":"c","apiVersion":"v1","resourceVersion":"%d"},"responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"2026-11-27T10:00:00.000000Z","stageTimestamp":"%s"}`, i, i, ts)
}

// eventList is an EventList of events from, the way the webhook backend
// POSTs it: items without kind and apiVersion (pretty-printed items too,
// to check they become one line).
func eventList(from, n int, pretty bool) []byte {
	var items []string
	for i := from; i < from+n; i++ {
		l := strings.Replace(eventLine(i), `"kind":"Event","apiVersion":"audit.k8s.io/v1",`, "", 1)
		if pretty {
			l = strings.Replace(l, `,"verb"`, ",\n  \"verb\"", 1)
		}
		items = append(items, l)
	}
	return listOf(items...)
}

// listOf is an EventList of the given items.
func listOf(items ...string) []byte {
	return []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[` + strings.Join(items, ",") + `]}`)
}

// startListener starts a receiver on loopback with the test token (unless
// cfg gives other credentials), ended when the test ends.
func startListener(t testing.TB, cfg ListenConfig) *Listener {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Token == "" && cfg.TokenFile == "" && cfg.ClientCAFile == "" && cfg.WebhookKubeconfig == "" {
		cfg.Token = testToken
	}
	l, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.End(context.Background()) })
	return l
}

// readAll reads the receiver's source to its end, on a goroutine of its
// own: the lines come on the channel once the source ends (Close).
func readAll(l *Listener) <-chan []string {
	got := make(chan []string, 1)
	go func() {
		rc, _ := l.Source().open()
		b, _ := io.ReadAll(rc)
		s := strings.TrimSuffix(string(b), "\n")
		if s == "" {
			got <- nil
			return
		}
		got <- strings.Split(s, "\n")
	}()
	return got
}

// send POSTs body as the webhook backend does (the token, JSON) and
// returns the answer's code.
func send(t testing.TB, url string, body []byte) int {
	t.Helper()
	return do(t, url, body, map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"})
}

// do POSTs body with the given headers and returns the answer's code.
func do(t testing.TB, url string, body []byte, header map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// testClient trusts any certificate: the receivers' own are made anew
// for each.
var testClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func TestListenerPassesBatchesOnAsLogLines(t *testing.T) {
	var rec bytes.Buffer
	l := startListener(t, ListenConfig{Record: &rec})
	got := readAll(l)
	for _, tc := range []struct {
		body []byte
		code int
	}{
		{eventList(0, 3, false), 200},
		{eventList(3, 2, true), 200},
		{[]byte(`{"kind":"Event","apiVersion":"audit.k8s.io/v1"}`), 400},
		{[]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1beta1","items":[]}`), 400},
		{[]byte(`{"kind":"EventList"`), 400},
	} {
		if code := send(t, l.URL(), tc.body); code != tc.code {
			t.Errorf("POST %.40s...: %d, want %d", tc.body, code, tc.code)
		}
	}
	if err := l.Close(context.Background()); err != nil {
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
	st := l.Stats()
	if st.Batches != 2 || st.Events != 5 || st.Rejected != 3 || st.RejectedBy[RejectNotEventList] != 3 || st.DroppedBatches != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestListenerDropsWhenTheQueueIsFull: nobody reads the source, the queue
// holds one batch (and the drain goroutine one more): further batches are
// answered 200 at once and counted as dropped, never waited for.
func TestListenerDropsWhenTheQueueIsFull(t *testing.T) {
	l := startListener(t, ListenConfig{QueueBatches: 1})
	for i := range 5 {
		if code := send(t, l.URL(), eventList(i*2, 2, false)); code != 200 {
			t.Fatalf("POST %d: %d", i, code)
		}
	}
	_ = l.End(context.Background())
	st := l.Stats()
	if st.Batches != 5 || st.DroppedBatches < 3 || st.DroppedEvents != 2*st.DroppedBatches || st.Events+st.DroppedEvents != 10 || st.PeakQueued != 1 {
		t.Errorf("stats %+v: want 5 batches, at least 3 dropped, every event either passed on or dropped, the queue of 1 full", st)
	}
}

// TestListenerQueueIsBoundedInMemory: a queue of 100 batches but memory
// for a few batches' lines is full with them: nobody reads, the drain
// goroutine holds one more, the events that do not fit are dropped, and
// the memory held never passes the bound.
func TestListenerQueueIsBoundedInMemory(t *testing.T) {
	body := eventList(0, 100, false)
	const bound = 256 << 10
	l := startListener(t, ListenConfig{QueueBatches: 100, MemoryBytes: bound})
	for range 8 {
		if code := send(t, l.URL(), body); code != 200 {
			t.Fatalf("POST: %d", code)
		}
	}
	_ = l.End(context.Background())
	st := l.Stats()
	if st.Batches != 8 || st.DroppedEvents == 0 || st.Events+st.DroppedEvents != 800 || st.PeakMemory > bound || st.QueueBytes != bound {
		t.Errorf("stats %+v: want 8 batches, some events dropped, every event either passed on or dropped, at most %d bytes held", st, bound)
	}
}

// TestListenMakesACertificateForAnIPAddressOnly: without a certificate,
// the receiver makes one for the IP address (or localhost) it listens
// on; a wildcard address or a host name needs one given.
func TestListenMakesACertificateForAnIPAddressOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "example.com:0", "nohost"} {
		if l, err := Listen(ListenConfig{Addr: addr, Token: testToken}); err == nil {
			_ = l.End(context.Background())
			t.Errorf("Listen(%q) without a certificate: no error", addr)
		}
	}
	if _, err := Listen(ListenConfig{Addr: "127.0.0.1:0", Token: testToken, CertFile: "x.pem"}); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("a certificate without a key: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		l := startListener(t, ListenConfig{Addr: addr})
		if !strings.HasPrefix(l.URL(), "https://127.0.0.1:") {
			t.Errorf("Listen(%q): %s, want https://127.0.0.1:PORT", addr, l.URL())
		}
	}
}

// TestScanEventListReadsTheWebhooksBatches: the API server's batches,
// compact or not, are read by the scanner, not handed to encoding/json;
// bodies it is not sure of are, and read the same.
func TestScanEventListReadsTheWebhooksBatches(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		ok   bool
	}{
		{"compact", string(eventList(0, 3, false)), true},
		{"items spanning lines", string(eventList(0, 2, true)), true},
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
			var scanned []string
			ok := scanEventList([]byte(tc.body), nil, func(it *listItem) { scanned = append(scanned, string(it.raw)) })
			if ok != tc.ok {
				t.Fatalf("scanned: %v, want %v", ok, tc.ok)
			}
			want, err := splitBatchJSON([]byte(tc.body))
			if ok && err != nil {
				t.Fatalf("scanned, but encoding/json: %v", err)
			}
			if ok {
				if diff := cmp.Diff(want, scanned); diff != "" {
					t.Errorf("items (-encoding/json +scanner):\n%s", diff)
				}
			}
		})
	}
}

// splitBatchJSON is the plain encoding/json reading of an EventList that
// eachItem is held to: its items, each compacted to one line.
func splitBatchJSON(body []byte) ([]string, error) {
	var list struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, err
	}
	if list.Kind != "EventList" || list.APIVersion != "audit.k8s.io/v1" {
		return nil, fmt.Errorf("kind %q, apiVersion %q", list.Kind, list.APIVersion)
	}
	var items []string
	for _, it := range list.Items {
		items = append(items, string(compactItem(it)))
	}
	return items, nil
}

// splitBatch is eachItem's items, as splitBatchJSON gives them.
func splitBatch(body []byte) ([]string, error) {
	var items []string
	err := eachItem(body, nil, func(it *listItem) { items = append(items, string(it.raw)) }, func() { items = nil })
	return items, err
}

// FuzzSplitBatch holds the reading of EventList bodies (eachItem: the
// scanner, or encoding/json for a body it is not sure of) to a plain
// encoding/json decoding (splitBatchJSON): the same bodies accepted, with
// the same items; every item is one line, and an object item is an
// object line once kind and apiVersion are put in.
func FuzzSplitBatch(f *testing.F) {
	f.Add(eventList(0, 2, true))
	f.Add(eventList(0, 3, false))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[1,"x",{},{ },[],null]}`))
	f.Add([]byte(` {"items":[{"a" :[1.5e3,-0,"\u00e9\n"]}],"metadata":{"x":{}},"apiVersion":"audit.k8s.io/v1","kind":"EventList"} `))
	f.Add([]byte(`{"KIND":"EventList","apiVersion":"audit.k8s.io/v1","items":[{}]}`))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"kind":"Event"}]}trailing`))
	f.Add([]byte(`{"Kind":5,"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[[[[["x"]]]],"]",{"a":"\"]"}]}`))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[1],"Items":null,"kind":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		want, werr := splitBatchJSON(body)
		got, err := splitBatch(body)
		if (err != nil) != (werr != nil) {
			t.Fatalf("eachItem: %v, encoding/json: %v", err, werr)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("items (-encoding/json +eachItem):\n%s", diff)
		}
		for _, it := range got {
			line := appendLine(nil, []byte(it))
			if bytes.IndexByte(line, '\n') != len(line)-1 || bytes.IndexByte(line, '\r') >= 0 || len(line) != lineLen([]byte(it)) {
				t.Fatalf("item %q: line %q spans lines, or is not %d bytes", it, line, lineLen([]byte(it)))
			}
			if it[0] == '{' && !json.Valid(line) {
				t.Fatalf("item %q: line %q is not JSON", it, line)
			}
		}
	})
}

// BenchmarkListener is the receiver's throughput: batches of 400
// Metadata events (the API server's --audit-webhook-batch-max-size)
// POSTed over loopback as the webhook backend does, over TLS with a
// bearer token, read as log lines; plain is the same over plain HTTP, to
// tell the receiver's own cost from TLS's. Run with -cpu 1 for one core;
// it reports events/s.
func BenchmarkListener(b *testing.B) {
	b.Run("tls", func(b *testing.B) { benchmarkListener(b, eventList(0, 400, false), false) })
	b.Run("plain", func(b *testing.B) { benchmarkListener(b, eventList(0, 400, false), true) })
}

// BenchmarkListenerRealistic is BenchmarkListener with events shaped like
// the test control plane's (realisticList), whose user objects the
// scanner's memo reads once per writer.
func BenchmarkListenerRealistic(b *testing.B) {
	b.Run("tls", func(b *testing.B) { benchmarkListener(b, realisticList(), false) })
	b.Run("plain", func(b *testing.B) { benchmarkListener(b, realisticList(), true) })
}

func benchmarkListener(b *testing.B, body []byte, plain bool) {
	l := startListener(b, ListenConfig{QueueBatches: 64, plainHTTP: plain})
	read := make(chan int64)
	go func() {
		rc, _ := l.Source().open()
		n, _ := io.Copy(io.Discard, rc)
		read <- n
	}()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for range b.N {
		req, _ := http.NewRequest(http.MethodPost, l.URL(), bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
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

// realisticList is an EventList of 400 events shaped like the test
// control plane's (hack/genaudit): service-account writers of 30 pods,
// each with its user object (uid, groups, extra) and the authorization
// annotations, 800 to 1,000 bytes an event.
func realisticList() []byte {
	const item = `{"level":"Metadata","auditID":"%08x-85a1-42b9-bcbe-%012x","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/app-%d/configmaps/config-%d?fieldManager=controller-%d","verb":"update","user":{"username":"system:serviceaccount:team-%d:controller-%d","uid":"%08x-1d2c-4b6a-9d61-0c1b2a3f4e5d","groups":["system:serviceaccounts","system:serviceaccounts:team-%d","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=%08x-7c1e-4f0a-b3c2-5d6e7f8091a2"],"authentication.kubernetes.io/node-name":["node-%d"],"authentication.kubernetes.io/pod-name":["controller-%d-6f9c-x1z"],"authentication.kubernetes.io/pod-uid":["%08x-aaaa-bbbb-cccc-ddddeeeeffff"]}},"sourceIPs":["10.0.%d.%d"],"userAgent":"manager/v0.0.0 (linux/amd64) kubernetes/$Format","objectRef":{"resource":"configmaps","namespace":"app-%d","name":"config-%d","apiVersion":"v1","uid":"%08x-bd90-4f5b-830b-6403e5eb1ec0","resourceVersion":"%d"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-11-24T10:00:00.%06dZ","stageTimestamp":"2026-11-24T10:00:00.%06dZ","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":"RBAC: allowed by ClusterRoleBinding \"controller-%d\" of ClusterRole \"controller-%d\" to ServiceAccount \"team-%d/controller-%d\""}}`
	var items []string
	for i := range 400 {
		w, obj := i%30, i*7919%20000
		items = append(items, fmt.Sprintf(item, i, i, obj%200, obj, w, w%40, w, w, w%40, w, w%12, w, w, w, w, obj%200, obj, obj, 1000+i, i*2, i*2+1, w, w, w%40, w))
	}
	return []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[` + strings.Join(items, ",") + `]}`)
}

// TestListenerSourceEventsAreTheRecordsEvents: Decode reads a receiver's
// source a batch at a time, with the events the receiver read (not its
// lines again), directly and through the analysis's spool; the events are
// those Decode reads from the record of the same lines, and the spool's
// copy holds those lines.
func TestListenerSourceEventsAreTheRecordsEvents(t *testing.T) {
	for _, spooled := range []bool{false, true} {
		var rec bytes.Buffer
		l := startListener(t, ListenConfig{Record: &rec})
		src := l.Source()
		var sp *Spool
		if spooled {
			var err error
			if sp, err = NewSpool(src, t.TempDir()); err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			src = sp.Source()
		}
		type result struct {
			events []Event
			st     Stats
			err    error
		}
		got := make(chan result, 1)
		go func() {
			var r result
			r.st, r.err = Decode(context.Background(), src, Options{Reuse: true, KeyHashes: true, Workers: 2}, func(e *Event) error {
				r.events = append(r.events, cloneEvent(*e))
				return nil
			})
			got <- r
		}()
		kindFirst := make([]string, 3)
		for i := range kindFirst {
			kindFirst[i] = eventLine(100 + i)
		}
		for _, body := range [][]byte{eventList(0, 50, false), eventList(50, 20, true), listOf(kindFirst...), eventList(70, 400, false)} {
			if code := send(t, l.URL(), body); code != 200 {
				t.Fatalf("POST: %d", code)
			}
		}
		if err := l.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.err != nil || r.st.Events != 473 || r.st.Lines != 473 {
			t.Fatalf("spooled %v: Decode: %v, %+v; want 473 events", spooled, r.err, r.st)
		}
		var want []Event
		if _, err := Decode(context.Background(), NewSource("record", bytes.NewReader(rec.Bytes())), Options{KeyHashes: true}, func(e *Event) error {
			want = append(want, cloneEvent(*e))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, r.events, cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" {
			t.Errorf("spooled %v: events (-the record's +the source's):\n%s", spooled, diff)
		}
		if !spooled {
			continue
		}
		copied, err := sp.Rest()
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := copied.open()
		b, _ := io.ReadAll(rc)
		if !bytes.Equal(b, rec.Bytes()) {
			t.Errorf("the spool's copy (%d bytes) is not the record (%d bytes)", len(b), rec.Len())
		}
	}
}
