// Package clickhouse reads audit events that a pipeline (the API server's
// audit webhook or log file shipped by Vector, Fluent Bit, an OpenTelemetry
// collector...) stored in a ClickHouse table, one row per event, the event
// as the API server wrote it in a String column named event (kubectl rv
// conflicts --source clickhouse:DSN/TABLE). Other columns
// are not read; a table laid out otherwise is read through a view that
// names its column event.
//
// The filter is pushed down as SQL with query parameters ({name:Type},
// sent apart from the query text, so that nothing a user typed is pasted
// into it, the table's name included, as an Identifier): the completed
// writes (a write verb, stage ResponseComplete or Panic) received in the
// time window, read from the JSON with JSONExtractString. The rows are
// streamed as the server sends its blocks; memory holds a block and a
// page of lines, never the result.
//
// The server may go no longer than audit.SourceConfig.Timeout without
// sending a byte (pkg/audit/bounded: on the native protocol's connection,
// on the HTTP interface's transport); the DSN's read_timeout and
// dial_timeout, when given, are clickhouse-go's (read_timeout bounds the
// whole stream after its first block, so it is a day unless given).
// Cancelling the context cancels the query. The size of a block is not
// bounded: clickhouse-go reads a block whole.
//
// The DSN is clickhouse-go's: clickhouse://HOST:9000[/DATABASE] (the
// native protocol), http://HOST:8123[/DATABASE] or
// https://HOST:8443[/DATABASE]?secure=true (the HTTP interface), with its
// options as parameters. Credentials come only from the environment
// (CLICKHOUSE_USER and CLICKHOUSE_PASSWORD, as clickhouse-client reads
// them; a CA bundle in CLICKHOUSE_CA_CERT), never from the DSN, and are
// never printed.
//
// Package clickhouse does not decode or analyse events (pkg/audit and
// pkg/conflicts do).
package clickhouse

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	clickhousego "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// Column is the column holding the event's JSON.
const Column = "event"

// PageRows is how many rows a page of the source holds.
const PageRows = 5000

// Credentials says where the credentials go.
const Credentials = "set CLICKHOUSE_USER and CLICKHOUSE_PASSWORD"

// Open is the table's Source as cfg says, target being DSN/TABLE,
// with the environment's credentials.
func Open(ctx context.Context, target string, cfg audit.SourceConfig) (audit.Source, error) {
	t, err := ParseTarget(target)
	if err != nil {
		return audit.Source{}, err
	}
	conn, err := Connect(t, cfg)
	if err != nil {
		return audit.Source{}, err
	}
	return Source(ctx, conn, t, cfg.Since, cfg.Until, nil), nil
}

// Target is a parsed clickhouse:DSN/TABLE.
type Target struct {
	// DSN is clickhouse-go's, with the database and without the table.
	DSN string
	// Table is the table (or view) read.
	Table string
}

// Name is the target as errors name it: clickhouse:DSN/TABLE.
func (t Target) Name() string {
	return audit.ClickHouseScheme + audit.RedactUserinfo(t.DSN) + "/" + t.Table
}

var dsnSchemes = map[string]bool{"clickhouse": true, "tcp": true, "http": true, "https": true}

// ParseTarget reads DSN/TABLE (what follows clickhouse:): a clickhouse-go
// DSN whose path is [/DATABASE]/TABLE. A DSN with a credential
// (user:password@, a credential parameter in any case, an http_proxy
// with a user) is refused; no error prints it.
func ParseTarget(s string) (Target, error) {
	shown := audit.RedactUserinfo(s)
	u, err := url.Parse(s)
	if err != nil || !dsnSchemes[u.Scheme] || u.Host == "" {
		return Target{}, fmt.Errorf("%q: give clickhouse:clickhouse://HOST:9000/DATABASE/TABLE, or the HTTP interface's http(s)://HOST:PORT/DATABASE/TABLE", shown)
	}
	if u.User != nil || hasCredential(u.Query()) {
		u.User, u.RawQuery = nil, "..."
		return Target{}, fmt.Errorf("%q: credentials do not go in the DSN: %s", u.String(), Credentials)
	}
	shown = audit.RedactUserinfo(u.String())
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) > 2 || parts[len(parts)-1] == "" || parts[0] == "" {
		return Target{}, fmt.Errorf("%q: name the table after the address: clickhouse:%s://%s/DATABASE/TABLE", shown, u.Scheme, u.Host)
	}
	t := Target{Table: parts[len(parts)-1]}
	u.Path, u.RawPath, u.Fragment = "", "", ""
	if len(parts) == 2 {
		u.Path = "/" + parts[0]
	}
	t.DSN = u.String()
	if _, err := clickhousego.ParseDSN(t.DSN); err != nil {
		// Its words may quote a parameter (an http_proxy with a password).
		return Target{}, fmt.Errorf("%q: %s", shown, audit.RedactUserinfo(err.Error()))
	}
	return t, nil
}

// credentialParams are the DSN parameters that carry a credential, in
// lower case: clickhouse-go's (username, password) and the HTTP
// interface's (user, password; clickhouse-go passes a parameter it does
// not know to the server as a setting, and reads its own only in lower
// case, so Password= would reach the server).
var credentialParams = map[string]bool{"user": true, "username": true, "password": true}

// hasCredential says whether q, a DSN's parameters, carries a
// credential: a credential parameter in any case, or an http_proxy with
// a user.
func hasCredential(q url.Values) bool {
	for k, vs := range q {
		if credentialParams[strings.ToLower(k)] {
			return true
		}
		if strings.EqualFold(k, "http_proxy") {
			for _, v := range vs {
				if p, err := url.Parse(v); err != nil || p.User != nil {
					return true
				}
			}
		}
	}
	return false
}

// StreamReadTimeout is clickhouse-go's read_timeout when the DSN does not
// give one: the library sets it once for the whole stream after the
// first block, not per read (the idle bound is bounded.Conn's), so it is
// long enough for a big table.
const StreamReadTimeout = 24 * time.Hour

// Connect is a connection to t's server with the environment's
// credentials (none: clickhouse-go's user default), held to cfg's idle
// bound. No request is sent before the query.
func Connect(t Target, cfg audit.SourceConfig) (driver.Conn, error) {
	opts, err := clickhousego.ParseDSN(t.DSN)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", t.Name(), err)
	}
	opts.Auth.Username = os.Getenv("CLICKHOUSE_USER")
	opts.Auth.Password = os.Getenv("CLICKHOUSE_PASSWORD")
	if ca := os.Getenv("CLICKHOUSE_CA_CERT"); ca != "" {
		b, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("CLICKHOUSE_CA_CERT: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("CLICKHOUSE_CA_CERT %s: no PEM certificate in it", ca)
		}
		if opts.TLS == nil {
			return nil, fmt.Errorf("CLICKHOUSE_CA_CERT is set but %q does not use TLS (add secure=true)", t.Name())
		}
		opts.TLS = &tls.Config{RootCAs: pool, ServerName: opts.TLS.ServerName, InsecureSkipVerify: opts.TLS.InsecureSkipVerify} //nolint:gosec // skip_verify is the user's
	}
	bound(opts, t, cfg)
	conn, err := clickhousego.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", t.Name(), err)
	}
	return conn, nil
}

// bound holds opts's connections to cfg's idle bound: the native
// protocol's through bounded.Conn (TLS over it when opts has TLS), the
// HTTP interface's through bounded.Transport. The DSN's own read_timeout
// and dial_timeout stay; without them, the native protocol's TCP connect
// takes at most cfg's timeout and read_timeout is StreamReadTimeout. Call
// it after opts.TLS is final.
func bound(opts *clickhousego.Options, t Target, cfg audit.SourceConfig) {
	cfg = cfg.WithDefaults()
	q := url.Values{}
	if u, err := url.Parse(t.DSN); err == nil {
		q = u.Query()
	}
	if !q.Has("read_timeout") {
		opts.ReadTimeout = StreamReadTimeout
	}
	if opts.Protocol == clickhousego.HTTP {
		// Its transport dials and does TLS itself.
		opts.TransportFunc = func(base *http.Transport) (http.RoundTripper, error) {
			return bounded.Wrap(base, bounded.StreamLimits(cfg)), nil
		}
		return
	}
	// The handshake's deadline is DialTimeout, the library's 30 s unless
	// given: the idle bound cuts a silent server off first.
	dialTimeout, tlsConfig := cfg.Timeout, opts.TLS
	if q.Has("dial_timeout") {
		dialTimeout = opts.DialTimeout
	}
	opts.DialContext = func(ctx context.Context, addr string) (net.Conn, error) {
		return bounded.Dial(ctx, addr, dialTimeout, cfg.Timeout, tlsConfig)
	}
}

// Query is the SQL of the read and its parameters, over the window (zero
// times are no bound).
func Query(table string, since, until time.Time) (string, []any) {
	var sql strings.Builder
	fmt.Fprintf(&sql, "SELECT %[1]s FROM {table:Identifier} WHERE has({verbs:Array(String)}, JSONExtractString(%[1]s, 'verb')) AND has({stages:Array(String)}, JSONExtractString(%[1]s, 'stage'))", Column)
	args := []any{
		clickhousego.Named("table", table),
		clickhousego.Named("verbs", audit.WriteVerbs),
		clickhousego.Named("stages", []string{audit.StageResponseComplete, audit.StagePanic}),
	}
	received := fmt.Sprintf("parseDateTime64BestEffortOrNull(JSONExtractString(%s, 'requestReceivedTimestamp'), 9, 'UTC')", Column)
	if !since.IsZero() {
		fmt.Fprintf(&sql, " AND %s >= {since:DateTime64(9, 'UTC')}", received)
		args = append(args, clickhousego.Named("since", since.UTC()))
	}
	if !until.IsZero() {
		fmt.Fprintf(&sql, " AND %s < {until:DateTime64(9, 'UTC')}", received)
		args = append(args, clickhousego.Named("until", until.UTC()))
	}
	return sql.String(), args
}

// Stats count what was read.
type Stats struct {
	Pages, Rows int
}

// Source is the table's completed writes in the window as an audit
// source, named clickhouse:DSN/TABLE; stats, when not nil, counts pages
// and rows. The query runs when the source is first read; the connection
// is closed at the end. An error of the server ends the source, marked as
// the service's (exit 3).
func Source(ctx context.Context, conn driver.Conn, t Target, since, until time.Time, stats *Stats) audit.Source {
	if stats == nil {
		stats = &Stats{}
	}
	r := &reader{conn: conn, t: t, since: since, until: until, stats: stats}
	return audit.NewPagedSource(t.Name(), func(buf *bytes.Buffer) error { return r.page(ctx, buf) })
}

// reader is one read of the table: its rows, as the server streams them.
type reader struct {
	conn         driver.Conn
	t            Target
	since, until time.Time
	stats        *Stats
	rows         driver.Rows
	done         bool
}

func serviceError(what string, err error) error {
	return exitcode.Cluster(&audit.ServiceError{Err: fmt.Errorf("%s: %w", what, err)})
}

// page writes the next PageRows rows to buf, or returns io.EOF after the
// last.
func (r *reader) page(ctx context.Context, buf *bytes.Buffer) error {
	if r.done {
		return io.EOF
	}
	if r.rows == nil {
		sql, args := Query(r.t.Table, r.since, r.until)
		rows, err := r.conn.Query(ctx, sql, args...)
		if err != nil {
			r.finish()
			if strings.Contains(err.Error(), "UNKNOWN_IDENTIFIER") {
				err = fmt.Errorf("%w (the table needs a String column %s holding the event's JSON: read another layout through a view that names it so)", err, Column)
			}
			return serviceError("query", err)
		}
		r.rows = rows
	}
	var event string
	n := 0
	for ; n < PageRows && r.rows.Next(); n++ {
		if err := r.rows.Scan(&event); err != nil {
			r.finish()
			return serviceError("read a row", err)
		}
		r.stats.Rows++
		line := []byte(event)
		var compact bytes.Buffer
		if json.Compact(&compact, line) == nil {
			line = compact.Bytes()
		}
		buf.Write(bytes.ReplaceAll(line, []byte("\n"), []byte(" ")))
		buf.WriteByte('\n')
	}
	if n > 0 {
		r.stats.Pages++
	}
	if n == PageRows {
		return nil
	}
	err := r.rows.Err()
	r.finish()
	if err != nil {
		return serviceError("read the rows", err)
	}
	if n == 0 {
		return io.EOF
	}
	return nil
}

// finish closes the rows and the connection; the source is done.
func (r *reader) finish() {
	r.done = true
	if r.rows != nil {
		_ = r.rows.Close()
	}
	_ = r.conn.Close()
}
