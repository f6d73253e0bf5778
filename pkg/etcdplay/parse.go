package etcdplay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// Kind names an etcdctl command.
type Kind string

// The supported commands.
const (
	Put     Kind = "put"
	Get     Kind = "get"
	Del     Kind = "del"
	Txn     Kind = "txn"
	Compact Kind = "compact"
	Watch   Kind = "watch"
)

// Command is one parsed etcdctl command. Only the fields of its Kind are set.
type Command struct {
	// Source is "file:line" (or "args") for messages.
	Source string
	Kind   Kind
	Key    string
	Value  []byte
	Range  mvcc.RangeOptions
	Put    mvcc.PutOptions
	Delete mvcc.DeleteOptions
	Txn    mvcc.Txn
	Rev    int64
	Watch  mvcc.WatchOptions
	// WriteOut is the line's own -w/--write-out value ("" when it gives
	// none: the run's format applies). The printer checks the name.
	WriteOut string
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("invalid etcdctl command")

// ParseError is a parse error with its place.
type ParseError struct {
	Source string
	Msg    string
}

func (e *ParseError) Error() string { return e.Source + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrSyntax) hold.
func (e *ParseError) Unwrap() error { return ErrSyntax }

func perr(src, format string, args ...any) error {
	return &ParseError{Source: src, Msg: fmt.Sprintf(format, args...)}
}

// argRE is etcdctl's argify: double-quoted strings (with escapes) or runs of
// non-space.
var argRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.)*"|\S+`) })

// Split splits a command line the way etcdctl's txn reader does: quoted
// arguments are unquoted with Go's rules.
func Split(line string) ([]string, error) {
	var out []string
	for _, a := range argRE().FindAllString(line, -1) {
		if strings.HasPrefix(a, `"`) {
			u, err := strconv.Unquote(a)
			if err != nil {
				return nil, fmt.Errorf("bad quoted argument %s", a)
			}
			a = u
		}
		out = append(out, a)
	}
	return out, nil
}

// flagSpec says which flags a command takes and whether they take a value.
var flagSpec = map[Kind]map[string]bool{
	Put:     {"prev-kv": false},
	Get:     {"prefix": false, "from-key": false, "rev": true, "limit": true, "keys-only": false, "count-only": false},
	Del:     {"prefix": false, "from-key": false, "prev-kv": false},
	Compact: {"physical": false},
	Watch:   {"prefix": false, "rev": true, "prev-kv": false, "progress-notify": false},
	Txn:     {},
}

var usage = map[Kind]string{
	Put:     "put KEY VALUE [--prev-kv]",
	Get:     "get KEY [END] [--prefix|--from-key] [--rev N] [--limit N] [--keys-only] [--count-only]",
	Del:     "del KEY [END] [--prefix|--from-key] [--prev-kv]",
	Compact: "compact REVISION [--physical]",
	Watch:   "watch KEY [END] [--prefix] [--rev N] [--prev-kv] [--progress-notify]",
	Txn:     "txn (then compares, a blank line, success requests, a blank line, failure requests)",
}

// Kinds lists the commands in help order.
func Kinds() []Kind { return []Kind{Put, Get, Del, Txn, Compact, Watch} }

// Usage returns the synopsis of a command.
func Usage(k Kind) string { return usage[k] }

// parseFlags separates flags from positional arguments.
func parseFlags(src string, kind Kind, args []string) (pos []string, flags map[string]string, err error) {
	spec := flagSpec[kind]
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "--") || a == "--" {
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				return nil, nil, perr(src, "%s: unknown flag %q (usage: %s)", kind, a, usage[kind])
			}
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		takes, ok := spec[name]
		if !ok {
			return nil, nil, perr(src, "%s: unknown flag --%s (usage: %s)", kind, name, usage[kind])
		}
		if takes && !hasVal {
			if i+1 >= len(args) {
				return nil, nil, perr(src, "%s: flag --%s needs a value", kind, name)
			}
			i++
			val = args[i]
		}
		if !takes && hasVal {
			b, err := strconv.ParseBool(val)
			if err != nil {
				return nil, nil, perr(src, "%s: flag --%s takes no value, got %q", kind, name, val)
			}
			if !b {
				continue
			}
			val = ""
		}
		flags[name] = val
	}
	return pos, flags, nil
}

func intFlag(src string, kind Kind, flags map[string]string, name string) (int64, error) {
	v, ok := flags[name]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, perr(src, "%s: --%s must be an integer, got %q", kind, name, v)
	}
	if n < 0 {
		return 0, perr(src, "%s: --%s must not be negative, got %d", kind, name, n)
	}
	return n, nil
}

// rangeEnd resolves KEY [END] with --prefix and --from-key like etcdctl.
func rangeEnd(src string, kind Kind, pos []string, flags map[string]string) (key, end string, err error) {
	_, prefix := flags["prefix"]
	_, fromKey := flags["from-key"]
	switch {
	case len(pos) == 0:
		return "", "", perr(src, "%s: missing KEY (usage: %s)", kind, usage[kind])
	case len(pos) > 2:
		return "", "", perr(src, "%s: too many arguments (usage: %s)", kind, usage[kind])
	case prefix && fromKey:
		return "", "", perr(src, "%s: `--prefix` and `--from-key` cannot be set at the same time, choose one", kind)
	case (prefix || fromKey) && len(pos) == 2:
		return "", "", perr(src, "%s: too many arguments, only accept one argument when --prefix or --from-key is set", kind)
	}
	key = pos[0]
	if len(pos) == 2 {
		end = pos[1]
	}
	switch {
	case prefix && key == "":
		key, end = "\x00", "\x00"
	case prefix:
		end = mvcc.PrefixEnd(key)
	case fromKey && key == "":
		key, end = "\x00", "\x00"
	case fromKey:
		end = "\x00"
	}
	if key == "" {
		return "", "", perr(src, "%s: KEY must not be empty", kind)
	}
	return key, end, nil
}

// ParseArgs parses one command given as arguments, e.g.
// ["get", "k1", "--rev=6"], the way etcdctl takes them, so that a
// transcript pastes as is: an optional leading "etcdctl", and -w or
// --write-out anywhere on the line (etcdctl's global flag). A txn's body is
// parsed by ParseTxnBody.
func ParseArgs(src string, args []string) (Command, error) {
	if len(args) > 0 && args[0] == "etcdctl" {
		args = args[1:]
	}
	args, writeOut, err := takeWriteOut(src, args)
	if err != nil {
		return Command{}, err
	}
	c, err := parseCommand(src, args)
	c.WriteOut = writeOut
	return c, err
}

// takeWriteOut removes etcdctl's -w/--write-out flag from args, in the
// forms pflag accepts (-w json, -w=json, -wjson, --write-out json,
// --write-out=json; the last one wins), and returns its value.
func takeWriteOut(src string, args []string) (rest []string, val string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, v, hasVal := strings.Cut(a, "=")
		switch {
		case name == "-w" || name == "--write-out":
		case strings.HasPrefix(a, "-w") && !strings.HasPrefix(a, "--"):
			name, v, hasVal = "-w", a[2:], true
		default:
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, "", perr(src, "%s needs a value: simple or json", name)
			}
			i++
			v = args[i]
		}
		val = v
	}
	return rest, val, nil
}

// parseCommand parses a command without etcdctl's global flags.
func parseCommand(src string, args []string) (Command, error) {
	if len(args) == 0 {
		return Command{}, perr(src, "missing command: one of put, get, del, txn, compact, watch")
	}
	kind := Kind(args[0])
	switch kind {
	case "delete":
		kind = Del
	case "range":
		kind = Get
	}
	if _, ok := flagSpec[kind]; !ok {
		return Command{}, perr(src, "unknown command %q: one of put, get, del, txn, compact, watch", args[0])
	}
	pos, flags, err := parseFlags(src, kind, args[1:])
	if err != nil {
		return Command{}, err
	}
	c := Command{Source: src, Kind: kind}
	err = argParsers[kind](&c, pos, flags)
	return c, err
}

// argParsers fill a command of each kind from its positional arguments and
// flags.
var argParsers = map[Kind]func(c *Command, pos []string, flags map[string]string) error{
	Put:     (*Command).putArgs,
	Get:     (*Command).getArgs,
	Del:     (*Command).delArgs,
	Compact: (*Command).compactArgs,
	Watch:   (*Command).watchArgs,
	Txn:     (*Command).txnArgs,
}

func (c *Command) putArgs(pos []string, flags map[string]string) error {
	if len(pos) != 2 {
		return perr(c.Source, "put: want KEY VALUE, got %d argument(s) (usage: %s)", len(pos), usage[Put])
	}
	if pos[0] == "" {
		return perr(c.Source, "put: KEY must not be empty")
	}
	c.Key, c.Value = pos[0], []byte(pos[1])
	_, c.Put.PrevKV = flags["prev-kv"]
	return nil
}

func (c *Command) getArgs(pos []string, flags map[string]string) (err error) {
	if c.Key, c.Range.End, err = rangeEnd(c.Source, c.Kind, pos, flags); err != nil {
		return err
	}
	_, c.Range.KeysOnly = flags["keys-only"]
	_, c.Range.CountOnly = flags["count-only"]
	if c.Range.KeysOnly && c.Range.CountOnly {
		// etcdctl 3.6's getGetOp, after its --prefix/--from-key check.
		return perr(c.Source, "get: `--keys-only` and `--count-only` cannot be set at the same time, choose one")
	}
	if c.Range.Rev, err = intFlag(c.Source, c.Kind, flags, "rev"); err != nil {
		return err
	}
	if c.Range.Limit, err = intFlag(c.Source, c.Kind, flags, "limit"); err != nil {
		return err
	}
	return nil
}

func (c *Command) delArgs(pos []string, flags map[string]string) (err error) {
	if c.Key, c.Delete.End, err = rangeEnd(c.Source, c.Kind, pos, flags); err != nil {
		return err
	}
	_, c.Delete.PrevKV = flags["prev-kv"]
	return nil
}

func (c *Command) compactArgs(pos []string, _ map[string]string) error {
	if len(pos) != 1 {
		return perr(c.Source, "compact: want REVISION (usage: %s)", usage[Compact])
	}
	n, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return perr(c.Source, "compact: bad revision %q: want an integer", pos[0])
	}
	c.Rev = n
	return nil
}

func (c *Command) watchArgs(pos []string, flags map[string]string) (err error) {
	if _, ok := flags["from-key"]; ok {
		return perr(c.Source, "watch: unknown flag --from-key")
	}
	if c.Key, c.Watch.End, err = rangeEnd(c.Source, c.Kind, pos, flags); err != nil {
		return err
	}
	if c.Watch.Rev, err = intFlag(c.Source, c.Kind, flags, "rev"); err != nil {
		return err
	}
	_, c.Watch.PrevKV = flags["prev-kv"]
	_, c.Watch.ProgressNotify = flags["progress-notify"]
	return nil
}

func (c *Command) txnArgs(pos []string, _ map[string]string) error {
	if len(pos) != 0 {
		return perr(c.Source, "txn: takes no arguments; give compares and requests on the following lines")
	}
	return nil
}

// parseCompare parses etcdctl's compare syntax, e.g. mod("k1") > "0" or
// value("k1") = "v".
func parseCompare(src, line string) (mvcc.Compare, error) {
	target, rest, ok := strings.Cut(line, "(")
	if !ok {
		return mvcc.Compare{}, perr(src, "malformed comparison: %s (want e.g. mod(\"key\") > \"0\")", line)
	}
	target = strings.TrimSpace(target)
	var c mvcc.Compare
	var key, opTok, val string
	// etcdctl's own scan: fmt.Sscanf(rest, "%q) %s %q", ...).
	if n, _ := fmt.Sscanf(rest, "%q) %s %q", &key, &opTok, &val); n != 3 {
		return c, perr(src, "malformed comparison: %s (want e.g. mod(\"key\") > \"0\")", line)
	}
	if key == "" {
		return c, perr(src, "malformed comparison: %s (empty key)", line)
	}
	c.Key = key
	switch opTok {
	case "=":
		c.Result = mvcc.Equal
	case "!=":
		c.Result = mvcc.NotEqual
	case ">":
		c.Result = mvcc.Greater
	case "<":
		c.Result = mvcc.Less
	default:
		return c, perr(src, "malformed comparison: %s (unknown operator %q: one of =, !=, <, >)", line, opTok)
	}
	switch target {
	case "ver", "version":
		c.Target = mvcc.CompareVersion
	case "c", "create":
		c.Target = mvcc.CompareCreate
	case "m", "mod":
		c.Target = mvcc.CompareMod
	case "val", "value":
		c.Target = mvcc.CompareValue
		c.Value = []byte(val)
		return c, nil
	default:
		return c, perr(src, "malformed comparison: %s (unknown target %q: one of version, create, mod, value)", line, target)
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return c, perr(src, "invalid txn compare request: %s (%s compares with an integer)", line, target)
	}
	c.Int = n
	return c, nil
}

// parseTxnOp parses a request line of a txn branch: put, get or del.
func parseTxnOp(src, line string) (mvcc.Op, error) {
	args, err := Split(line)
	if err != nil {
		return mvcc.Op{}, perr(src, "%v", err)
	}
	c, err := ParseArgs(src, args)
	if err != nil {
		return mvcc.Op{}, err
	}
	if c.WriteOut != "" {
		return mvcc.Op{}, perr(src, "a txn request takes no -w: give it on the txn line")
	}
	switch c.Kind {
	case Put:
		return mvcc.OpPutKV(c.Key, c.Value, c.Put), nil
	case Get:
		return mvcc.OpGet(c.Key, c.Range), nil
	case Del:
		return mvcc.OpDel(c.Key, c.Delete), nil
	}
	return mvcc.Op{}, perr(src, "invalid txn request %q: only put, get and del", args[0])
}

// lineReader yields numbered lines.
type lineReader struct {
	name string
	sc   *bufio.Scanner
	n    int
}

func (l *lineReader) next() (string, string, bool) {
	if !l.sc.Scan() {
		return "", "", false
	}
	l.n++
	return strings.TrimRight(l.sc.Text(), "\r"), fmt.Sprintf("%s:%d", l.name, l.n), true
}

// readTxnBody reads the three blocks of a txn (compares, success, failure),
// each ended by a blank line or the end of input.
func readTxnBody(lr *lineReader, t *mvcc.Txn) error {
	for block := 0; block < 3; block++ {
		for {
			line, src, ok := lr.next()
			if !ok {
				if block == 0 && len(t.Compare) == 0 && lr.sc.Err() == nil {
					return nil
				}
				return lr.sc.Err()
			}
			if strings.TrimSpace(line) == "" {
				break
			}
			line = strings.TrimSpace(line)
			if block == 0 {
				c, err := parseCompare(src, line)
				if err != nil {
					return err
				}
				t.Compare = append(t.Compare, c)
				continue
			}
			op, err := parseTxnOp(src, line)
			if err != nil {
				return err
			}
			if block == 1 {
				t.Success = append(t.Success, op)
			} else {
				t.Failure = append(t.Failure, op)
			}
		}
	}
	return nil
}

// ParseTxnBody parses a txn body as etcdctl txn reads it from stdin.
func ParseTxnBody(name string, r io.Reader) (mvcc.Txn, error) {
	lr := &lineReader{name: name, sc: bufio.NewScanner(r)}
	var t mvcc.Txn
	err := readTxnBody(lr, &t)
	return t, err
}

// ParseScript parses commands, one per line; "txn" is followed by its
// body (compares, blank line, success requests, blank line, failure
// requests, blank line). Blank lines between commands and lines starting
// with # are skipped.
func ParseScript(name string, r io.Reader) ([]Command, error) {
	lr := &lineReader{name: name, sc: bufio.NewScanner(r)}
	var out []Command
	for {
		line, src, ok := lr.next()
		if !ok {
			if err := lr.sc.Err(); err != nil {
				return nil, fmt.Errorf("reading %s: %w", name, err)
			}
			return out, nil
		}
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		args, err := Split(t)
		if err != nil {
			return nil, perr(src, "%v", err)
		}
		c, err := ParseArgs(src, args)
		if err != nil {
			return nil, err
		}
		if c.Kind == Txn {
			if err := readTxnBody(lr, &c.Txn); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
}
