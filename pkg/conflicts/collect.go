package conflicts

import (
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// record is one write attempt or one get of a named object, as kept
// between decoding and analysis: no bodies, and interned strings.
type record struct {
	// The fields the stream reads for every record come first (the
	// record is read again seconds after it was made, when the cache no
	// longer holds it): its times, code and numbers, then the pointers and
	// versions most writes need.
	received  time.Time
	completed time.Time
	code      int
	// wid and rid number the writer and the reader (stream.writerKeys[wid]
	// is writer): objects keep their writers and readers by number. oid
	// numbers the object: the stream finds its state by it.
	wid, rid, oid uint32
	// read marks a successful get: only obj, oid, rid and the times are
	// set (see item).
	read bool
	// force marks a server-side apply with ?force=true.
	force bool
	// shown marks a write attempt that Config.Filter keeps.
	shown bool
	// obj, writer and reader point into the collector's tables: records
	// of one object or writer share them.
	obj     *ObjectKey
	writer  *audit.Writer
	reader  *readerKey
	precond string
	result  string
	verb    string
	sub     string
	// message is a 409's message when classify reads it (applyFailed,
	// alreadyExists), else "": most are kept neither interned nor copied.
	message string
	details string
	// host is the API server replica that logged the request (host-prefixed
	// logs), interned; auditID is set only for the records of a timeline.
	host, auditID string
	// seq is the order of arrival, the last tie-breaker.
	seq uint64
}

// item is what the collector hands the stream: a write attempt's record
// (r), or a successful get as the little the stream reads of one (r nil):
// its object (obj, numbered oid), its reader's number (rid) and its
// times. The stream makes a get a record only where one is kept (behind a
// 409 of its object that waits to ripen, or every record when the
// timeline needs them): a log's gets, half of its events, are otherwise
// never allocated. An item of a record has the record's fields.
type item struct {
	r                   *record
	obj                 *ObjectKey
	oid, rid            uint32
	received, completed time.Time
}

func recordItem(r *record) item {
	return item{r: r, obj: r.obj, oid: r.oid, rid: r.rid, received: r.received, completed: r.completed}
}

// readerKey identifies who read: reads carry no field manager.
type readerKey struct {
	user, pod, userAgent string
}

// Collector turns events into records and analyses them in time order
// (Report). A collector made by NewCollector keeps every record until
// Report, so it accepts events in any order; Analyze's collectors keep only
// a window (see stream.go).
type Collector struct {
	cfg  Config
	strs map[string]string
	// objs and actors are looked up by the hashes of their strings
	// (audit.KeyHash), which the decoder's goroutines compute.
	objs   audit.KeyMap[objectNumber]
	actors audit.KeyMap[actor]
	// writers and readers number the writers and readers; the stream keeps
	// its own copy of writers.keys (it may run on another goroutine).
	writers numbering[audit.Writer]
	readers numbering[readerKey]
	stream  *stream
	// dedup leaves out the events seen before (same auditID and stage).
	dedup *audit.Dedup
	// dryRuns counts the dry-run writes in scope, left out.
	dryRuns int
}

// numbering numbers keys in the order of first sight: keys[n] is the one
// numbered n.
type numbering[K comparable] struct {
	numbers map[K]uint32
	keys    []*K
}

// number returns k's number and the kept copy of k; a key seen for the
// first time is kept as intern makes it (its strings the collector's own).
func (nb *numbering[K]) number(k K, intern func(K) K) (uint32, *K) {
	if n, ok := nb.numbers[k]; ok {
		return n, nb.keys[n]
	}
	if nb.numbers == nil {
		nb.numbers = map[K]uint32{}
	}
	k = intern(k)
	n := uint32(len(nb.keys))
	nb.numbers[k] = n
	nb.keys = append(nb.keys, &k)
	return n, &k
}

// NewCollector returns an empty collector that keeps every record.
func NewCollector(cfg Config) *Collector {
	return newCollector(cfg, -1)
}

// newCollector returns a collector whose records may arrive out of
// completion order by up to skew; a negative skew keeps everything.
func newCollector(cfg Config, skew time.Duration) *Collector {
	c := &Collector{cfg: cfg, strs: map[string]string{}, dedup: audit.NewDedup()}
	c.stream = newStream(cfg, skew)
	return c
}

// str interns s; the decoder's strings point into its blocks, so the
// table keeps copies.
func (c *Collector) str(s string) string {
	if s == "" {
		return ""
	}
	if v, ok := c.strs[s]; ok {
		return v
	}
	s = strings.Clone(s)
	c.strs[s] = s
	return s
}

// The keys below are looked up with the decoder's strings, which point
// into its blocks, and stored with the collector's copies.

// objectNumber is an object's key and number (in the order of first
// sight).
type objectNumber struct {
	key *ObjectKey
	n   uint32
	// out says that the object is outside Config.Object and Namespace.
	out bool
}

func (c *Collector) object(e *audit.Event) objectNumber {
	h := e.ObjectHash()
	if p, ok := c.objs.Get(h); ok {
		return p
	}
	ref := &e.ObjectRef
	k := ObjectKey{Group: c.str(ref.APIGroup), Resource: c.str(ref.Resource), Namespace: c.str(ref.Namespace), Name: c.str(ref.Name)}
	out := c.cfg.Namespace != "" && k.Namespace != c.cfg.Namespace || c.cfg.Object != nil && !matchObject(*c.cfg.Object, k) ||
		!c.cfg.Resources.Keeps(k.Group, k.Resource)
	p := objectNumber{key: &k, n: uint32(c.objs.Len()), out: out}
	c.objs.Put(h, p)
	return p
}

// actor is who made a request, as its user, pod, user agent and field
// manager say: its reader's number, and its writer's once it wrote.
type actor struct {
	rid, wid uint32
	wrote    bool
	// shown says whether Config.Filter keeps the writer.
	shown bool
}

// actor numbers the reader and, for a write, the writer of e (reader and
// writer number them in the order of first sight); fm is the field
// manager of a write, "" for a read.
func (c *Collector) actor(e *audit.Event, write bool, fm string) actor {
	// The key: the hash of the client's strings (user, pod and user
	// agent) with the field manager.
	ak := e.ClientHash().With(fm)
	a, ok := c.actors.Get(ak)
	if ok && (a.wrote || !write) {
		return a
	}
	if !ok {
		a.rid, _ = c.reader(readerKey{user: e.Username, pod: e.PodName, userAgent: e.UserAgent})
	}
	if write {
		var k *audit.Writer
		a.wid, k = c.writer(audit.Writer{User: e.Username, FieldManager: fm, Pod: e.PodName})
		a.wrote, a.shown = true, c.cfg.Filter.keepsWriter(*k, e.UserAgent)
	}
	c.actors.Put(ak, a)
	return a
}

// reader numbers the readers (readers.keys[n] is the one numbered n).
func (c *Collector) reader(k readerKey) (uint32, *readerKey) {
	return c.readers.number(k, func(k readerKey) readerKey {
		return readerKey{user: c.str(k.user), pod: c.str(k.pod), userAgent: c.str(k.userAgent)}
	})
}

// writer numbers the writers as reader does the readers.
func (c *Collector) writer(k audit.Writer) (uint32, *audit.Writer) {
	return c.writers.number(k, func(k audit.Writer) audit.Writer {
		return audit.Writer{User: c.str(k.User), FieldManager: c.str(k.FieldManager), Pod: c.str(k.Pod)}
	})
}

// writeVerb is verb when it is one of audit.WriteVerbs, as a constant
// (not a string of the decoder's), else "" (TestWriteVerbIsAuditsList).
func writeVerb(verb string) string {
	switch verb {
	case "create":
		return "create"
	case "update":
		return "update"
	case "patch":
		return "patch"
	case "delete":
		return "delete"
	case "deletecollection":
		return "deletecollection"
	}
	return ""
}

// Add keeps e if it is a write attempt, or a successful get of a named
// object, inside the window.
func (c *Collector) Add(e *audit.Event) {
	if it, ok := c.record(e); ok {
		c.stream.add(it)
	}
}

func (c *Collector) record(e *audit.Event) (item, bool) {
	if !c.dedup.First(e) {
		return item{}, false
	}
	verb := writeVerb(e.Verb)
	write := verb != ""
	// A create with generateName has no name yet: its objects are counted
	// together, under the name "".
	unnamed := e.ObjectRef.Name == "" && e.Verb != "create" && e.Verb != "deletecollection"
	if !write && (e.Verb != "get" || e.Code/100 != 2) || unnamed || e.ObjectRef.Resource == "" {
		return item{}, false
	}
	if !c.cfg.Window.Holds(e.RequestReceived) {
		return item{}, false
	}
	ref := &e.ObjectRef
	obj := c.object(e)
	if obj.out {
		return item{}, false
	}
	fm := ""
	if write {
		if audit.DryRun(e) {
			c.dryRuns++
			return item{}, false
		}
		fm = audit.FieldManager(e)
	}
	a := c.actor(e, write, fm)
	if !write {
		return item{obj: obj.key, oid: obj.n, rid: a.rid, received: e.RequestReceived, completed: e.StageTimestamp}, true
	}
	r := &record{obj: obj.key, oid: obj.n, received: e.RequestReceived, completed: e.StageTimestamp}
	r.rid, r.reader = a.rid, c.readers.keys[a.rid]
	r.verb, r.sub, r.code, r.details = verb, c.str(ref.Subresource), e.Code, c.str(e.DetailsKind)
	r.wid, r.writer = a.wid, c.writers.keys[a.wid]
	r.shown = a.shown && c.cfg.Filter.keepsRequest(verb, r.sub, e.Code)
	r.precond, r.result = strings.Clone(ref.ResourceVersion), strings.Clone(e.ResponseRV)
	if e.Host != "" {
		r.host = c.str(e.Host)
	}
	if c.cfg.Object != nil || c.stream.only != nil && *c.stream.only == *obj.key || c.cfg.HottestTimeline && c.stream.skew < 0 {
		// A timeline's row names its request (the hottest object's is
		// picked at the end when every record is kept); other records
		// need no id.
		r.auditID = strings.Clone(e.AuditID)
	}
	if e.Code == 409 && (applyFailed(e.Message) || alreadyExists(verb, e.Message)) {
		r.message = c.str(e.Message)
	}
	r.force = verb == "patch" && audit.QueryParam(e.RequestURI, "force") == "true"
	return recordItem(r), true
}

// Report analyses what is left and returns the report.
func (c *Collector) Report() *Report {
	rep := c.stream.report()
	rep.Summary.DryRuns = c.dryRuns
	if c.dedup != nil {
		rep.Input.Duplicates = c.dedup.Duplicates
	}
	return rep
}
