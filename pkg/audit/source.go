package audit

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Source is one audit log stream: a file (plain or .gz) or stdin.
type Source struct {
	// Name is the path, or "-" for stdin; errors name it.
	Name string
	open func() (io.ReadCloser, error)
	// path is set for files; copied for a spool's copy (Spool.Rest),
	// spooled for the stream a spool copies (Spool.Source).
	path            string
	copied, spooled bool
	// live is set for a receiver's stream (Listener.Source): it bounds
	// the spool's copy and hears when the copy stops.
	live *liveStream
	// batches, when set, opens the stream a batch at a time, its events
	// already read (a receiver's, and its spool's first reading): Decode
	// reads it instead of open's bytes.
	batches func() (batchStream, error)
}

// liveStream is what a receiver tells the Spool of its stream, and hears
// from it.
type liveStream struct {
	// maxSpool bounds the copy, in bytes.
	maxSpool int64
	// stopped is called once when the copy stops (its cap reached, or
	// the disk full), with the reason.
	stopped func(reason string)
	// lost is called by Rest with the events the stream's first reading
	// read and the copy does not hold.
	lost func(events int64)
}

// Open expands one --audit-log value into sources: "-" is stdin, a
// directory is every regular file in it (rotated logs; the API server's
// current file, which has no timestamp, last), anything else one file.
// Gzip is recognised by its magic bytes when read, not by the name.
func Open(path string, stdin io.Reader) ([]Source, error) {
	if path == "-" {
		return []Source{{Name: "-", open: func() (io.ReadCloser, error) { return io.NopCloser(stdin), nil }}}, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", path, err)
	}
	if !fi.IsDir() {
		return []Source{fileSource(path)}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", path, err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Slice(names, func(i, j int) bool { return rotatedBefore(names[i], names[j]) })
	var out []Source
	for _, n := range names {
		out = append(out, fileSource(filepath.Join(path, n)))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--audit-log %s: the directory has no files", path)
	}
	return out, nil
}

// rotatedBefore orders audit-2026-11-24T14-21-55.123.log(.gz) before
// audit.log: lumberjack names backups NAME-TIMESTAMP.EXT.
func rotatedBefore(a, b string) bool {
	sa, sb := strings.Count(a, "-"), strings.Count(b, "-")
	if (sa == 0) != (sb == 0) {
		return sa != 0
	}
	return a < b
}

func fileSource(path string) Source {
	return Source{Name: path, path: path, open: func() (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--audit-log %s: %w", path, err)
		}
		return f, nil
	}}
}

// NewSource returns a source reading r, named name, for tests and callers
// that already hold a stream.
func NewSource(name string, r io.Reader) Source {
	return Source{Name: name, open: func() (io.ReadCloser, error) { return io.NopCloser(r), nil }}
}

// WriteVerbs are the verbs of the write attempts conflicts counts: what
// the log services' filters keep.
var WriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// The prefixes of a --source: the log service, then what of it to read.
const (
	// CloudWatchScheme names a CloudWatch Logs log group
	// (pkg/audit/cloudwatch).
	CloudWatchScheme = "cloudwatch:"
	// ElasticsearchScheme names an Elasticsearch index, after the
	// cluster's URL (pkg/audit/elasticsearch).
	ElasticsearchScheme = "elasticsearch:"
	// OpenSearchScheme names an OpenSearch index, after the cluster's URL
	// (pkg/audit/opensearch).
	OpenSearchScheme = "opensearch:"
	// ClickHouseScheme names a ClickHouse table, after the server's DSN
	// (pkg/audit/clickhouse).
	ClickHouseScheme = "clickhouse:"
)

// SourceConfig is how a --source is read: the window pushed down to the
// log service, and the bounds on each of its answers. Zero fields take
// the defaults below (WithDefaults).
type SourceConfig struct {
	// Since and Until bound the events' receive times; zero is no bound.
	Since, Until time.Time
	// Timeout is the longest the service may go without sending a byte:
	// to connect, to start its answer, and between two reads of its body
	// (--source-timeout). Default DefaultSourceTimeout.
	Timeout time.Duration
	// PageTimeout is the longest one answer (a page) may take in all,
	// however steadily its bytes come. Default PageTimeoutFactor times
	// Timeout.
	PageTimeout time.Duration
	// MaxResponseBytes is the most one answer (a page) may hold, after
	// decompression. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// PageSize is how many events a page asks for, at most 10,000 (the
	// services' maximum); zero is the reader's own (5,000 for
	// Elasticsearch and OpenSearch, CloudWatch Logs' 10,000). ClickHouse
	// streams and ignores it.
	PageSize int
}

// The defaults of SourceConfig.
const (
	DefaultSourceTimeout    = 30 * time.Second
	PageTimeoutFactor       = 4
	DefaultMaxResponseBytes = 64 << 20
)

// WithDefaults is c with its zero fields set to their defaults.
func (c SourceConfig) WithDefaults() SourceConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultSourceTimeout
	}
	if c.PageTimeout <= 0 {
		c.PageTimeout = PageTimeoutFactor * c.Timeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return c
}

// ParseCloudSource reads a --source value, SCHEME:TARGET, into its
// scheme (with the colon) and target: cloudwatch:LOG_GROUP,
// elasticsearch:URL/INDEX, opensearch:URL/INDEX or clickhouse:DSN/TABLE.
func ParseCloudSource(s string) (scheme, target string, err error) {
	for _, sc := range []string{CloudWatchScheme, ElasticsearchScheme, OpenSearchScheme, ClickHouseScheme} {
		if t, ok := strings.CutPrefix(s, sc); ok && t != "" {
			return sc, t, nil
		}
	}
	return "", "", fmt.Errorf("%q: give cloudwatch:LOG_GROUP (EKS's is /aws/eks/CLUSTER/cluster), elasticsearch:http(s)://HOST:PORT/INDEX, opensearch:http(s)://HOST:PORT/INDEX or clickhouse:clickhouse://HOST:9000/DATABASE/TABLE", RedactUserinfo(s))
}

// RedactUserinfo is s with whatever stands before its last @ (after a //
// when there is one: a URL's user and password) and the value of a
// password= parameter (clickhouse-go's DSNs take one) replaced by xxxxx,
// so that an error never prints a credential typed into a URL.
func RedactUserinfo(s string) string {
	if j := strings.LastIndexByte(s, '@'); j >= 0 {
		if i := strings.Index(s[:j], "//"); i < 0 {
			s = "xxxxx" + s[j:]
		} else {
			s = s[:i+2] + "xxxxx" + s[j:]
		}
	}
	const key = "password="
	for from := 0; ; {
		i := strings.Index(asciiLower(s[from:]), key)
		if i < 0 {
			return s
		}
		start := from + i + len(key)
		end := strings.IndexAny(s[start:], "&#")
		if end < 0 {
			end = len(s) - start
		}
		s = s[:start] + "xxxxx" + s[start+end:]
		from = start + len("xxxxx")
	}
}

// asciiLower is s with A-Z lowered, byte for byte (strings.ToLower may
// change the length of other letters).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// ServiceError is a log service's failure to serve a --source (it
// refused, or could not be reached): the readers mark it exit 3 too
// (exitcode.Cluster), and the commands do not name the Kubernetes cluster
// in it, since the service is not that cluster.
type ServiceError struct{ Err error }

func (e *ServiceError) Error() string { return e.Err.Error() }

func (e *ServiceError) Unwrap() error { return e.Err }

// NewPagedSource is a source read a page at a time, as it is asked for:
// next appends the next page's lines to buf, and returns io.EOF after
// the last (or any error, which ends the source).
func NewPagedSource(name string, next func(buf *bytes.Buffer) error) Source {
	return NewSource(name, &pager{next: next})
}

// pager reads pages as they are asked for.
type pager struct {
	next func(*bytes.Buffer) error
	buf  bytes.Buffer
	err  error
}

func (p *pager) Read(b []byte) (int, error) {
	for p.buf.Len() == 0 {
		if p.err != nil {
			return 0, p.err
		}
		p.err = p.next(&p.buf)
	}
	return p.buf.Read(b)
}

// Spooled says whether src is a stream a Spool copies as it is read.
func (s Source) Spooled() bool {
	return s.spooled
}

// Rereadable says whether src can be opened again from the start (a file
// or a spool's copy, not stdin or a stream given to NewSource).
func (s Source) Rereadable() bool {
	return s.path != "" || s.copied
}
