// Package chfake is a local HTTP server that speaks ClickHouse's HTTP
// interface as clickhouse-go's HTTP protocol uses it, over a table given
// as a function, for tests of kubectl rv conflicts --source clickhouse:.
// A query is POSTed as the body; settings, the database and the query's
// parameters ({name:Type}, as param_name) come as URL parameters; the
// answer is the Native format (default_format=Native) written for the
// client's protocol revision (client_protocol_version), block by block,
// as built by ch-go's proto package, which clickhouse-go itself uses.
//
// It answers clickhouse-go's hello (SELECT displayName(), version(),
// revision(), timezone()) and the read pkg/audit/clickhouse.Query writes:
// SELECT COLUMN FROM {table:Identifier} WHERE conditions joined by AND,
// each has({p:Array(String)}, JSONExtractString(COLUMN, 'FIELD')) or
// parseDateTime64BestEffortOrNull(JSONExtractString(COLUMN, 'FIELD'), 9,
// 'UTC') >= or < {p:DateTime64(9, 'UTC')}. It refuses, in ClickHouse's
// words and codes, what ClickHouse refuses: a parameter the query uses
// and the request does not set (UNKNOWN_QUERY_PARAMETER), a value that
// does not parse as its type (BAD_QUERY_PARAMETER), an unknown table,
// database or column, a setting it does not know, wrong credentials; and
// any other query, which a real server might run but this one cannot.
//
// Only tests import it.
package chfake

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/ch-go/proto"
)

// Server serves one table of one database.
type Server struct {
	// Database is the table's database; empty is default.
	Database string
	// Table is the table's name; another is UNKNOWN_TABLE.
	Table string
	// Column is the table's column holding the events; empty is event.
	Column string
	// N is how many rows the table has; Row(i) is row i: the fields a
	// condition may name and the event column's value (a formula, so
	// that a table of millions takes no memory).
	N   int
	Row func(i int) (fields map[string]string, event string)
	// BlockRows is the most rows a block holds (ClickHouse's
	// max_block_size); zero is 65409.
	BlockRows int
	// User and Password, when User is set, are the only credentials
	// accepted.
	User, Password string
	// Cut, when not nil, says which blocks (counted from 1) are sent
	// only in part, the stream ending there.
	Cut func(block int) bool
	// Stall, when not nil, says before which block (counted from 1) the
	// stream stops sending and waits for the client to go (at most a
	// minute); Stalled, when not nil, is closed then.
	Stall   func(block int) bool
	Stalled chan struct{}

	// mu guards the fields below.
	mu           sync.Mutex
	queries      []Query
	blocks, sent int
	refused      []string
}

// Query is a query the server ran: its text and parameters.
type Query struct {
	SQL    string
	Params map[string]string
}

// Counts are what the server saw and sent.
type Counts struct {
	// Queries are the reads run (not the hello).
	Queries []Query
	// Blocks and Sent count the blocks and rows sent.
	Blocks, Sent int
	// Refused are the queries refused, with the exception sent.
	Refused []string
}

// Counts returns what the server saw so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Counts{append([]Query(nil), s.queries...), s.blocks, s.sent, append([]string(nil), s.refused...)}
}

// Hello is the query clickhouse-go's HTTP connection sends first.
const Hello = "SELECT displayName(), version(), revision(), timezone()"

// Version is the server version the hello answers.
const Version = "25.8.3.66"

// Exception codes, as ClickHouse numbers them (src/Common/ErrorCodes.cpp).
const (
	codeUnknownIdentifier     = 47
	codeUnknownTable          = 60
	codeSyntaxError           = 62
	codeUnknownDatabase       = 81
	codeUnknownSetting        = 115
	codeUnknownQueryParameter = 456
	codeBadQueryParameter     = 457
	codeAuthenticationFailed  = 516
)

var codeNames = map[int]string{
	codeUnknownIdentifier: "UNKNOWN_IDENTIFIER", codeUnknownTable: "UNKNOWN_TABLE", codeSyntaxError: "SYNTAX_ERROR",
	codeUnknownDatabase: "UNKNOWN_DATABASE", codeUnknownSetting: "UNKNOWN_SETTING", codeUnknownQueryParameter: "UNKNOWN_QUERY_PARAMETER",
	codeBadQueryParameter: "BAD_QUERY_PARAMETER", codeAuthenticationFailed: "AUTHENTICATION_FAILED",
}

// exception answers an error as ClickHouse's HTTP interface does: the
// status, X-ClickHouse-Exception-Code, and "Code: N. DB::Exception: ...
// (NAME) (version V)" as text.
func (s *Server) exception(w http.ResponseWriter, status, code int, format string, args ...any) {
	msg := fmt.Sprintf("Code: %d. DB::Exception: %s. (%s) (version %s (official build))\n", code, fmt.Sprintf(format, args...), codeNames[code], Version)
	s.refused = append(s.refused, msg)
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.Header().Set("X-ClickHouse-Exception-Code", strconv.Itoa(code))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

// known are the URL parameters that are not settings, and the settings
// this server knows.
var known = map[string]bool{"default_format": true, "client_protocol_version": true, "database": true, "query_id": true, "query": true, "max_block_size": true, "max_execution_time": true}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	user, key := r.Header.Get("X-ClickHouse-User"), r.Header.Get("X-ClickHouse-Key")
	if u, p, ok := r.BasicAuth(); ok {
		user, key = u, p
	}
	if s.User != "" && (user != s.User || key != s.Password) {
		s.exception(w, http.StatusForbidden, codeAuthenticationFailed, "%s: Authentication failed: password is incorrect, or there is no user with such name", user)
		return
	}
	q := r.URL.Query()
	params := map[string]string{}
	for k := range q {
		if name, ok := strings.CutPrefix(k, "param_"); ok {
			params[name] = q.Get(k)
		} else if !known[k] {
			s.exception(w, http.StatusBadRequest, codeUnknownSetting, "Setting %s is neither a builtin setting nor started with the prefix 'custom_' registered for user-defined settings", k)
			return
		}
	}
	if db := q.Get("database"); db != "" && db != s.database() {
		s.exception(w, http.StatusNotFound, codeUnknownDatabase, "Database %s does not exist", db)
		return
	}
	version, err := strconv.Atoi(q.Get("client_protocol_version"))
	if q.Get("default_format") != "Native" || err != nil {
		s.exception(w, http.StatusBadRequest, codeSyntaxError, "this server answers clickhouse-go's requests: default_format=Native and client_protocol_version")
		return
	}
	body, _ := io.ReadAll(r.Body)
	sql := strings.TrimSpace(q.Get("query") + string(body))
	if sql == Hello {
		s.hello(w, version)
		return
	}
	s.read(r.Context(), w, sql, params, version)
}

func (s *Server) database() string {
	if s.Database == "" {
		return "default"
	}
	return s.Database
}

func (s *Server) hello(w http.ResponseWriter, version int) {
	name, ver, tz := new(proto.ColStr), new(proto.ColStr), new(proto.ColStr)
	rev := new(proto.ColUInt32)
	name.Append("chfake")
	ver.Append(Version)
	rev.Append(uint32(version))
	tz.Append("UTC")
	var buf proto.Buffer
	_ = proto.Block{Columns: 4, Rows: 1}.EncodeBlock(&buf, version, []proto.InputColumn{
		{Name: "displayName()", Data: name}, {Name: "version()", Data: ver}, {Name: "revision()", Data: rev}, {Name: "timezone()", Data: tz},
	})
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-ClickHouse-Format", "Native")
	_, _ = w.Write(buf.Buf)
}

var (
	placeholder = regexp.MustCompile(`\{(\w+):([^{}]+)\}`)
	selectFrom  = regexp.MustCompile(`^SELECT (\w+) FROM \{table:Identifier\} WHERE (.+)$`)
	hasCond     = regexp.MustCompile(`^has\(\{(\w+):Array\(String\)\}, JSONExtractString\((\w+), '(\w+)'\)\)$`)
	timeCond    = regexp.MustCompile(`^parseDateTime64BestEffortOrNull\(JSONExtractString\((\w+), '(\w+)'\), 9, 'UTC'\) (>=|<) \{(\w+):DateTime64\(9, 'UTC'\)\}$`)
)

// cond is one condition of the WHERE clause.
type cond func(fields map[string]string) bool

func (s *Server) read(ctx context.Context, w http.ResponseWriter, sql string, params map[string]string, version int) {
	for _, m := range placeholder.FindAllStringSubmatch(sql, -1) {
		if _, ok := params[m[1]]; !ok {
			s.exception(w, http.StatusBadRequest, codeUnknownQueryParameter, "Substitution `%s` is not set", m[1])
			return
		}
	}
	m := selectFrom.FindStringSubmatch(sql)
	if m == nil {
		s.exception(w, http.StatusBadRequest, codeSyntaxError, "this server runs only kubectl rv's read of a table, not %q", sql)
		return
	}
	if params["table"] != s.Table {
		s.exception(w, http.StatusNotFound, codeUnknownTable, "Table %s.%s does not exist", s.database(), params["table"])
		return
	}
	if column := s.Column; m[1] != column && (column != "" || m[1] != "event") {
		s.exception(w, http.StatusNotFound, codeUnknownIdentifier, "Unknown expression identifier `%s` in scope SELECT %s FROM %s", m[1], m[1], s.Table)
		return
	}
	var conds []cond
	for _, c := range strings.Split(m[2], " AND ") {
		f, code, err := s.condition(c, m[1], params)
		if err != nil {
			s.exception(w, http.StatusBadRequest, code, "%v", err)
			return
		}
		conds = append(conds, f)
	}
	s.queries = append(s.queries, Query{SQL: sql, Params: params})
	s.stream(ctx, w, conds, version)
}

// condition reads one condition over column.
func (s *Server) condition(c, column string, params map[string]string) (cond, int, error) {
	if m := hasCond.FindStringSubmatch(c); m != nil && m[2] == column {
		values, err := parseStrings(params[m[1]])
		if err != nil {
			return nil, codeBadQueryParameter, fmt.Errorf("Value %s cannot be parsed as Array(String) for query parameter '%s': %v", params[m[1]], m[1], err)
		}
		field := m[3]
		return func(f map[string]string) bool {
			for _, v := range values {
				if f[field] == v {
					return true
				}
			}
			return false
		}, 0, nil
	}
	if m := timeCond.FindStringSubmatch(c); m != nil && m[1] == column {
		at, err := parseTime(params[m[4]])
		if err != nil {
			return nil, codeBadQueryParameter, fmt.Errorf("Value %s cannot be parsed as DateTime64(9, 'UTC') for query parameter '%s'", params[m[4]], m[4])
		}
		field, before := m[2], m[3] == "<"
		return func(f map[string]string) bool {
			t, err := time.Parse(time.RFC3339Nano, f[field])
			return err == nil && t.Before(at) == before
		}, 0, nil
	}
	return nil, codeSyntaxError, fmt.Errorf("this server does not know the condition %q", c)
}

// stream writes the rows that hold every condition, block by block.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, conds []cond, version int) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-ClickHouse-Format", "Native")
	per := s.BlockRows
	if per == 0 {
		per = 65409
	}
	col := new(proto.ColStr)
	flush := func() bool {
		if s.Stall != nil && s.Stall(s.blocks+1) {
			if s.Stalled != nil {
				close(s.Stalled)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Minute):
			}
			return false
		}
		var buf proto.Buffer
		_ = proto.Block{Columns: 1, Rows: col.Rows()}.EncodeBlock(&buf, version, []proto.InputColumn{{Name: "event", Data: col}})
		s.blocks++
		if s.Cut != nil && s.Cut(s.blocks) {
			_, _ = w.Write(buf.Buf[:len(buf.Buf)/2])
			return false
		}
		s.sent += col.Rows()
		_, _ = w.Write(buf.Buf)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		col.Reset()
		return true
	}
rows:
	for i := 0; i < s.N; i++ {
		fields, event := s.Row(i)
		for _, c := range conds {
			if !c(fields) {
				continue rows
			}
		}
		col.Append(event)
		if col.Rows() == per && !flush() {
			return
		}
	}
	if col.Rows() > 0 {
		flush()
	}
}

// parseStrings reads an Array(String) in ClickHouse's text format:
// ['a', 'b\'c'], blanks allowed between elements.
func parseStrings(s string) ([]string, error) {
	inner, ok := strings.CutPrefix(s, "[")
	if inner, ok = strings.CutSuffix(inner, "]"); !ok || !strings.HasPrefix(s, "[") {
		return nil, fmt.Errorf("not an array")
	}
	var out []string
	for inner = strings.TrimSpace(inner); inner != ""; inner = strings.TrimSpace(inner) {
		if inner[0] != '\'' {
			return nil, fmt.Errorf("not a quoted string at %q", inner)
		}
		var v strings.Builder
		i := 1
		for ; i < len(inner) && inner[i] != '\''; i++ {
			if inner[i] == '\\' && i+1 < len(inner) {
				i++
			}
			v.WriteByte(inner[i])
		}
		if i == len(inner) {
			return nil, fmt.Errorf("an unterminated string")
		}
		out = append(out, v.String())
		inner = strings.TrimSpace(inner[i+1:])
		if rest, ok := strings.CutPrefix(inner, ","); ok {
			inner = rest
		} else if inner != "" {
			return nil, fmt.Errorf("no comma at %q", inner)
		}
	}
	return out, nil
}

// parseTime reads a DateTime64 parameter: seconds since the epoch with a
// fraction (what clickhouse-go sends for a time.Time), or YYYY-MM-DD
// hh:mm:ss[.fraction].
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse("2006-01-02 15:04:05.999999999", s); err == nil {
		return t, nil
	}
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || len(frac) > 9 {
		return time.Time{}, fmt.Errorf("not a time: %q", s)
	}
	var ns int64
	if frac != "" {
		if ns, err = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64); err != nil {
			return time.Time{}, fmt.Errorf("not a time: %q", s)
		}
	}
	return time.Unix(n, ns).UTC(), nil
}
