package clickhouse

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	clickhousego "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/kubectl-rv/kubectl-rv/internal/auditgen"
	"github.com/kubectl-rv/kubectl-rv/internal/chfake"
	"github.com/kubectl-rv/kubectl-rv/internal/hostile"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// patient is the timeout of the tests that are not about the bounds: the
// local server builds a page of a big log slowly under -race on a busy
// machine (TestSourceBounds tests the bounds).
const patient = 10 * time.Minute

var base = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// server is a ClickHouse table of the log's events in its event column,
// in blocks of 8,192 rows.
func server(l auditgen.Log) *chfake.Server {
	return &chfake.Server{Database: "audit", Table: "k8s_events", N: l.N, Row: l.Event, BlockRows: 8192}
}

// dsn is the HTTP interface's DSN of a local server's URL.
func dsn(url string) string { return url + "/audit" }

func read(t *testing.T, target string, since, until time.Time) (events, conflicts int, st Stats, err error) {
	t.Helper()
	tg, err := ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := Connect(tg, audit.SourceConfig{Timeout: patient})
	if err != nil {
		t.Fatal(err)
	}
	src := Source(context.Background(), conn, tg, since, until, &st)
	events, conflicts, err = auditgen.Count(t, src)
	return events, conflicts, st, err
}

// TestSourceStreamsAMillionRows: a table of a million events is read with
// the filter pushed down as SQL parameters: the server sends only the
// completed writes, every one of them, in blocks the source reads as they
// come and hands on a page at a time. The server refuses any request
// ClickHouse would (chfake), so a wrong parameter, type or query fails.
func TestSourceStreamsAMillionRows(t *testing.T) {
	l := auditgen.Log{N: 1_000_000, Base: base}
	srv := server(l)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	events, conflicts, st, err := read(t, dsn(ts.URL)+"/k8s_events", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Counts()
	if want := l.Writes(); events != want || st.Rows != want || c.Sent != want {
		t.Errorf("the filter keeps %d events: decoded %d, the source read %d, the server sent %d", want, events, st.Rows, c.Sent)
	}
	if conflicts != l.Conflicts() {
		t.Errorf("%d 409s, want %d", conflicts, l.Conflicts())
	}
	if len(c.Queries) != 1 || c.Blocks < l.Writes()/8192 || st.Pages != (l.Writes()+PageRows-1)/PageRows || len(c.Refused) != 0 {
		t.Errorf("%d queries, %d blocks, %d pages, refused %q: want one query streamed in blocks, read in pages", len(c.Queries), c.Blocks, st.Pages, c.Refused)
	}
	t.Logf("%d rows, %d kept, %d blocks, %d pages", l.N, l.Writes(), c.Blocks, st.Pages)
}

// TestSourceFilter: the query's text names no value; the values are
// parameters (the table too, as an Identifier), and the window is pushed
// down.
func TestSourceFilter(t *testing.T) {
	l := auditgen.Log{N: 100_000, Base: base}
	srv := server(l)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	events, _, _, err := read(t, dsn(ts.URL)+"/k8s_events", base.Add(20*time.Second), base.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Counts()
	if events != 1000 || c.Sent != 1000 {
		t.Errorf("the window holds 1000 writes: decoded %d, sent %d", events, c.Sent)
	}
	if len(c.Queries) != 1 {
		t.Fatalf("queries %v", c.Queries)
	}
	q := c.Queries[0]
	for _, v := range []string{"k8s_events", "update", "ResponseComplete", "2026"} {
		if strings.Contains(q.SQL, v) {
			t.Errorf("the query's text holds %q: %s", v, q.SQL)
		}
	}
	want := map[string]string{"table": "k8s_events", "verbs": "['create', 'update', 'patch', 'delete', 'deletecollection']", "stages": "['ResponseComplete', 'Panic']", "since": strconv.FormatInt(base.Unix()+20, 10), "until": strconv.FormatInt(base.Unix()+30, 10)}
	for k, v := range want {
		if q.Params[k] != v {
			t.Errorf("parameter %s = %q, want %q", k, q.Params[k], v)
		}
	}
}

// TestSourceErrors: the server's refusals and a stream cut short end the
// source with exit 3, naming the source and what went wrong, never a
// credential.
func TestSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, table string
		set         func(*chfake.Server)
		want        string
	}{
		{"absent table", "absent", nil, "UNKNOWN_TABLE"},
		{"another column", "k8s_events", func(s *chfake.Server) { s.Column = "message" }, "the table needs a String column event"},
		{"stream cut short", "k8s_events", func(s *chfake.Server) { s.Cut = func(b int) bool { return b == 3 } }, "read the rows"},
		{"wrong password", "k8s_events", func(s *chfake.Server) { s.User, s.Password = "reader", "other" }, "AUTHENTICATION_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CLICKHOUSE_USER", "reader")
			t.Setenv("CLICKHOUSE_PASSWORD", "pa55-w0rd")
			srv := server(auditgen.Log{N: 300_000, Base: base})
			if tc.set != nil {
				tc.set(srv)
			}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			_, _, _, err := read(t, dsn(ts.URL)+"/"+tc.table, time.Time{}, time.Time{})
			if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "clickhouse:"+dsn(ts.URL)+"/"+tc.table) {
				t.Errorf("error %v (exit %d), want exit 3 naming the table and %q", err, exitcode.Classify(err), tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "pa55-w0rd") {
				t.Errorf("the password is in the error: %v", err)
			}
		})
	}
}

// TestSourceUnreachable: no server at the address is exit 3 naming it.
func TestSourceUnreachable(t *testing.T) {
	ts := httptest.NewServer(nil)
	url := ts.URL
	ts.Close()
	_, _, _, err := read(t, dsn(url)+"/k8s_events", time.Time{}, time.Time{})
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), "clickhouse:"+dsn(url)+"/k8s_events") {
		t.Errorf("error %v (exit %d), want exit 3 naming the source", err, exitcode.Classify(err))
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]string{
		"clickhouse://ch.example:9000/audit/k8s_events":                   "clickhouse://ch.example:9000/audit k8s_events",
		"clickhouse://ch.example:9000/k8s_events":                         "clickhouse://ch.example:9000 k8s_events",
		"https://ch.example:8443/audit/k8s_events?secure=true":            "https://ch.example:8443/audit?secure=true k8s_events",
		"http://localhost:8123/audit/k8s_events?dial_timeout=5s":          "http://localhost:8123/audit?dial_timeout=5s k8s_events",
		"clickhouse://ch.example:9000/audit/":                             "",
		"clickhouse://ch.example:9000/a/b/c":                              "",
		"clickhouse://ch.example:9000":                                    "",
		"clickhouse://u:p@ch.example:9000/audit/t":                        "",
		"clickhouse://ch.example:9000/audit/t?password=p":                 "",
		"clickhouse://ch.example:9000/audit/t?Password=p":                 "",
		"clickhouse://ch.example:9000/audit/t?PASSWORD=p":                 "",
		"clickhouse://ch.example:9000/audit/t?pass%77ord=p":               "",
		"clickhouse://ch.example:9000/audit/t?username=u":                 "",
		"clickhouse://ch.example:9000/audit/t?UserName=u":                 "",
		"http://ch.example:8123/audit/t?user=u":                           "",
		"http://ch.example:8123/audit/t?User=u&secure=false":              "",
		"http://ch.example:8123/audit/t?http_proxy=http://u:p@proxy:3128": "",
		"http://ch.example:8123/audit/t?http_proxy=http://proxy:3128":     "http://ch.example:8123/audit?http_proxy=http://proxy:3128 t",
		"https://ch.example:8443/audit/t":                                 "",
		"ftp://ch.example/audit/t":                                        "",
	} {
		tg, err := ParseTarget(in)
		if got := tg.DSN + " " + tg.Table; (err == nil) != (want != "") || err == nil && got != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), ":p@") || strings.Contains(strings.ToLower(err.Error()), "password=p")) {
			t.Errorf("ParseTarget(%q) printed the password: %v", in, err)
		}
		if err != nil && strings.Contains(in, "=u") && !strings.Contains(err.Error(), Credentials) {
			t.Errorf("ParseTarget(%q) = %v: want where credentials go", in, err)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("clickhouse://ch.example:9000/audit/k8s_events")
	f.Add("http://u:secret@h:8123/db/t")
	f.Add("https://h:8443/db/t?secure=true&password=secret")
	f.Add("https://h:8443/db/t?secure=true&Password=secret")
	f.Add("tcp://[::1]:9000/a/b?x=y#z")
	f.Fuzz(func(t *testing.T, in string) {
		tg, err := ParseTarget(in)
		if err != nil {
			if (strings.Contains(in, ":secret@") || strings.Contains(strings.ToLower(in), "password=secret")) && strings.Contains(err.Error(), "secret") {
				t.Fatalf("the password is in the error: %v", err)
			}
			return
		}
		if tg.Table == "" || strings.Contains(tg.Table, "/") || strings.Contains(tg.DSN, "@") || strings.Contains(strings.ToLower(tg.DSN), "password=") {
			t.Fatalf("ParseTarget(%q) = %+v: a table with a slash or none, or a credential kept", in, tg)
		}
	})
}

// readWith reads target with cfg under ctx, returning the read's error.
func readWith(t *testing.T, ctx context.Context, target string, cfg audit.SourceConfig) error {
	t.Helper()
	tg, err := ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := Connect(tg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = audit.Decode(ctx, Source(ctx, conn, tg, cfg.Since, cfg.Until, nil), audit.Options{}, func(*audit.Event) error { return nil })
	return err
}

// TestSourceIdle: a server that stops sending, before its answer or in
// the middle of the stream, is cut off after the timeout, the error the
// service's (exit 3), naming the source and --source-timeout.
func TestSourceIdle(t *testing.T) {
	for name, stall := range map[string]int{"before the answer": 1, "mid-stream": 3} {
		t.Run(name, func(t *testing.T) {
			srv := server(auditgen.Log{N: 30_000, Base: base})
			srv.BlockRows, srv.Stall = 100, func(b int) bool { return b == stall }
			ts := httptest.NewServer(srv)
			defer ts.Close()
			start := time.Now()
			err := readWith(t, context.Background(), dsn(ts.URL)+"/k8s_events", audit.SourceConfig{Timeout: 300 * time.Millisecond})
			if !errors.Is(err, bounded.ErrIdle) || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), "clickhouse:"+dsn(ts.URL)+"/k8s_events") {
				t.Errorf("error %v (exit %d), want ErrIdle, exit 3, naming the source", err, exitcode.Classify(err))
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("cut off after %s", d)
			}
		})
	}
}

// TestSourceCancel: cancelling the read mid-stream ends it promptly with
// context.Canceled.
func TestSourceCancel(t *testing.T) {
	srv := server(auditgen.Log{N: 30_000, Base: base})
	srv.BlockRows, srv.Stall, srv.Stalled = 100, func(b int) bool { return b == 2 }, make(chan struct{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	go func() {
		<-srv.Stalled
		cancelled <- time.Now()
		cancel()
	}()
	err := readWith(t, ctx, dsn(ts.URL)+"/k8s_events", audit.SourceConfig{Timeout: time.Minute})
	if !errors.Is(err, context.Canceled) || exitcode.Classify(err) != exitcode.CodeInterrupted {
		t.Errorf("error %v (exit %d), want context.Canceled", err, exitcode.Classify(err))
	}
	if d := time.Since(<-cancelled); d > 2*time.Second {
		t.Errorf("returned %s after the cancel", d)
	}
}

// TestSourceNativeIdle: over the native protocol, a server that accepts
// the connection and says nothing (not even its hello) is cut off after
// the timeout.
func TestSourceNativeIdle(t *testing.T) {
	addr := hostile.MuteTCP(t, nil)
	target := "clickhouse://" + addr + "/audit/k8s_events"
	start := time.Now()
	err := readWith(t, context.Background(), target, audit.SourceConfig{Timeout: 300 * time.Millisecond})
	if err == nil || exitcode.Classify(err) != exitcode.CodeCluster || !strings.Contains(err.Error(), "the service sent nothing for 300ms") {
		t.Errorf("error %v (exit %d), want the idle bound's, exit 3", err, exitcode.Classify(err))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cut off after %s", d)
	}
}

// TestBoundOptions: without read_timeout in the DSN, the stream's
// read_timeout is long (the idle bound is the connection's); the DSN's
// read_timeout and dial_timeout stay.
func TestBoundOptions(t *testing.T) {
	for dsn, want := range map[string][2]time.Duration{
		"clickhouse://h:9000/db":                                  {0, StreamReadTimeout},
		"clickhouse://h:9000/db?read_timeout=10m&dial_timeout=3s": {3 * time.Second, 10 * time.Minute},
	} {
		opts, err := clickhousego.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		bound(opts, Target{DSN: dsn}, audit.SourceConfig{Timeout: time.Second})
		if got := [2]time.Duration{opts.DialTimeout, opts.ReadTimeout}; got != want || opts.DialContext == nil {
			t.Errorf("%s: dial and read timeouts %v, want %v, and the bounded dial", dsn, got, want)
		}
	}
	opts, _ := clickhousego.ParseDSN("http://h:8123/db")
	bound(opts, Target{DSN: "http://h:8123/db"}, audit.SourceConfig{})
	if opts.DialContext != nil || opts.TransportFunc == nil {
		t.Error("the HTTP interface is bounded by its transport, not a dial")
	}
}
