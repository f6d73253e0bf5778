package load

import (
	"cmp"
	"context"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Key is what the top table groups requests by.
type Key string

// The keys.
const (
	// User is user.username (impersonatedUser.username when impersonated).
	User Key = "user"
	// Writer is user[/fieldManager][@pod], as the writers view names it.
	Writer Key = "writer"
	Verb   Key = "verb"
	// Resource is resource[.group]; a subresource counts under its resource.
	Resource Key = "resource"
	// Status is responseStatus.code, 0 when the event has none.
	Status    Key = "status"
	Namespace Key = "namespace"
	// Object is resource[.group]/[namespace/]name, with * for the name of
	// a request about a collection (a list or a watch), or the path of a
	// request about no resource (/healthz, /apis).
	Object Key = "object"
)

// Keys are every key, in the order --by documents them.
var Keys = []Key{User, Writer, Verb, Resource, Status, Namespace, Object}

// Config says what Analyze counts and how.
type Config struct {
	// By are the keys of the top table's groups, outermost first.
	By []Key
	// Window bounds the requests by receive time; the rate is per minute
	// of it, or of the log's span where a bound is open.
	Window audit.Window
	// Keep, when set, says whether an event is counted (the scope and
	// filter flags).
	Keep func(*audit.Event) bool
	// Hot is the hot-loop detection; a zero Rate finds none.
	Hot Hot
	// Strict makes every line that would be skipped an error.
	Strict bool
	// Parallel is how many goroutines decode a source.
	Parallel int
}

// Report is what Analyze found.
type Report struct {
	By []Key `json:"by"`
	// Total counts the requests counted.
	Total  int    `json:"total"`
	Window Window `json:"window"`
	// Groups are the top table, the largest first.
	Groups []Group  `json:"groups"`
	Wasted []Wasted `json:"wasted"`
	// Findings are the hot loops, the longest first.
	Findings []Finding   `json:"findings"`
	Input    audit.Stats `json:"input"`
}

// Window is the span the rates are over.
type Window struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Minutes float64   `json:"minutes"`
}

// Group is one row of the top table.
type Group struct {
	Key       map[Key]string `json:"key"`
	Count     int            `json:"count"`
	Share     float64        `json:"share"`
	PerMinute float64        `json:"perMinute"`
	P50Ms     float64        `json:"p50Ms"`
	P99Ms     float64        `json:"p99Ms"`
	First     time.Time      `json:"first"`
	Last      time.Time      `json:"last"`
	// Objects are the group's busiest objects (none when Object is a key).
	Objects  []ObjectCount `json:"objects,omitempty"`
	Statuses []StatusCount `json:"statuses"`
}

// ObjectCount is how many of a group's requests were about one object.
type ObjectCount struct {
	Object string `json:"object"`
	Count  int    `json:"count"`
	// Error bounds how much Count may be over the true count: non-zero
	// only in a group of more objects than its summary holds.
	Error int `json:"error,omitempty"`
}

// StatusCount is how many of a group's requests got one status code.
type StatusCount struct {
	Code  int `json:"code"`
	Count int `json:"count"`
}

// Analyze reads the sources in order and returns the report.
func Analyze(ctx context.Context, sources []audit.Source, cfg Config) (*Report, error) {
	c := newCounter(cfg)
	// KeyHashes: the decoding goroutines hash each event's object and
	// client, which the counting goroutine looks them up by.
	opts := audit.Options{Strict: cfg.Strict, Workers: cfg.Parallel, Reuse: true, KeyHashes: true}
	for _, src := range sources {
		st, err := audit.Decode(ctx, src, opts, func(e *audit.Event) error {
			c.add(e)
			return nil
		})
		c.stats.Add(st)
		if err != nil {
			return nil, err
		}
	}
	return c.report(), nil
}

// counter counts events as they come.
type counter struct {
	cfg    Config
	dedup  *audit.Dedup
	stats  audit.Stats
	groups map[string]*group
	// buf builds an event's group key, val one value of it; obj its
	// object's name, made on
	// first use (objectName) since most events need only its hash.
	buf, val, obj []byte
	objMade       bool
	objectName    func() []byte
	total         int
	first, last   time.Time
	wasted        *wastedCounter
	hot           *hotTracker
	// cur is the event being counted.
	cur *audit.Event
	// objects says whether groups count their busiest objects: not when
	// the object is a key.
	objects bool
}

func newCounter(cfg Config) *counter {
	if len(cfg.By) == 0 {
		cfg.By = []Key{User}
	}
	c := &counter{cfg: cfg, dedup: audit.NewDedup(), groups: map[string]*group{},
		wasted: newWastedCounter(), hot: newHotTracker(cfg.Hot)}
	c.objectName = c.makeObjectName
	c.objects = !slices.Contains(cfg.By, Object)
	return c
}

// makeObjectName is the object name of the event being counted (cur).
func (c *counter) makeObjectName() []byte {
	if !c.objMade {
		c.obj, c.objMade = appendObject(c.obj[:0], c.cur), true
	}
	return c.obj
}

func (c *counter) add(e *audit.Event) {
	if !c.dedup.First(e) || !c.cfg.Window.Holds(e.RequestReceived) || c.cfg.Keep != nil && !c.cfg.Keep(e) {
		return
	}
	c.total++
	if c.first.IsZero() || e.RequestReceived.Before(c.first) {
		c.first = e.RequestReceived
	}
	if e.RequestReceived.After(c.last) {
		c.last = e.RequestReceived
	}
	c.cur, c.objMade = e, false
	oh := objectHash(e)
	// Each value after its length: values from the log may hold any byte.
	c.buf = c.buf[:0]
	for _, k := range c.cfg.By {
		c.val = appendKey(c.val[:0], k, e, c.objectName)
		c.buf = append(binary.AppendUvarint(c.buf, uint64(len(c.val))), c.val...)
	}
	g := c.groups[string(c.buf)]
	if g == nil {
		g = &group{first: e.RequestReceived, key: make([]string, len(c.cfg.By))}
		for i, k := range c.cfg.By {
			g.key[i] = string(appendKey(nil, k, e, c.objectName))
		}
		c.groups[string(c.buf)] = g
	}
	g.add(e, c.objectName, oh, c.objects)
	wasted := c.wasted.add(e, oh)
	c.hot.add(e, c.objectName, oh, wasted)
}

// objectHash is the KeyHash of e's object as appendObject names it.
func objectHash(e *audit.Event) audit.KeyHash {
	h := e.ObjectHash()
	if e.ObjectRef.Resource == "" {
		path, _, _ := strings.Cut(e.RequestURI, "?")
		h = h.With(path)
	}
	return h
}

// appendKey appends the value of k for e (obj is its object's name).
func appendKey(b []byte, k Key, e *audit.Event, obj func() []byte) []byte {
	switch k {
	case User:
		return append(b, e.Username...)
	case Writer:
		return appendWriter(b, e)
	case Verb:
		return append(b, e.Verb...)
	case Resource:
		return appendResource(b, &e.ObjectRef)
	case Status:
		return strconv.AppendInt(b, int64(e.Code), 10)
	case Namespace:
		return append(b, e.ObjectRef.Namespace...)
	case Object:
		return append(b, obj()...)
	}
	return b
}

// appendWriter appends audit.WriterOf(e)'s name without allocating it.
func appendWriter(b []byte, e *audit.Event) []byte {
	b = append(b, e.Username...)
	if fm := audit.FieldManager(e); fm != "" {
		b = append(append(b, '/'), fm...)
	}
	if e.PodName != "" {
		b = append(append(b, '@'), e.PodName...)
	}
	return b
}

func appendResource(b []byte, r *audit.ObjectRef) []byte {
	b = append(b, r.Resource...)
	if r.APIGroup != "" {
		b = append(append(b, '.'), r.APIGroup...)
	}
	return b
}

// appendObject appends resource[.group]/[namespace/]name, * for a
// request with no name; a request about no resource (/healthz, discovery)
// is its path.
func appendObject(b []byte, e *audit.Event) []byte {
	r := &e.ObjectRef
	if r.Resource == "" {
		path, _, _ := strings.Cut(e.RequestURI, "?")
		return append(b, path...)
	}
	b = append(appendResource(b, r), '/')
	if r.Namespace != "" {
		b = append(append(b, r.Namespace...), '/')
	}
	if r.Name == "" {
		return append(b, '*')
	}
	return append(b, r.Name...)
}

func (c *counter) report() *Report {
	rep := &Report{By: c.cfg.By, Total: c.total, Input: c.stats, Window: c.window()}
	rep.Input.Duplicates = c.dedup.Duplicates
	for _, g := range c.groups {
		rep.Groups = append(rep.Groups, g.row(c.cfg.By, c.total, rep.Window.Minutes))
	}
	slices.SortFunc(rep.Groups, func(a, b Group) int {
		if d := cmp.Compare(b.Count, a.Count); d != 0 {
			return d
		}
		return compareKeys(c.cfg.By, a.Key, b.Key)
	})
	rep.Wasted = c.wasted.rows()
	rep.Findings = c.hot.finish()
	return rep
}

// window is the configured window, its open bounds closed by the first
// and last requests counted.
func (c *counter) window() Window {
	w := Window{From: c.cfg.Window.Since, To: c.cfg.Window.Until}
	if w.From.IsZero() {
		w.From = c.first
	}
	if w.To.IsZero() {
		w.To = c.last
	}
	if w.To.After(w.From) {
		w.Minutes = w.To.Sub(w.From).Minutes()
	}
	return w
}

// compareKeys orders two groups' keys by their values, in by's order.
func compareKeys(by []Key, a, b map[Key]string) int {
	for _, k := range by {
		if d := strings.Compare(a[k], b[k]); d != 0 {
			return d
		}
	}
	return 0
}
