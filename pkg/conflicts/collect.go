package conflicts

import (
	"net/url"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// record is one write attempt or one read of a named object, as kept
// between decoding and analysis: no bodies, and the strings of the event
// it came from.
type record struct {
	// obj, writer and reader point into the collector's tables: records
	// of one object or writer share them.
	obj       *ObjectKey
	writer    *WriterKey
	reader    *readerKey
	verb      string
	sub       string
	code      int
	message   string
	details   string
	precond   string
	result    string
	received  time.Time
	completed time.Time
}

// readRec is one successful get of a named object.
type readRec struct {
	obj                 *ObjectKey
	reader              *readerKey
	received, completed time.Time
}

// readerKey identifies who read: reads carry no field manager.
type readerKey struct {
	user, pod, userAgent string
}

// Collector turns events into records; Report analyses them. Memory grows
// with the records (about 200 bytes each: writes and gets in the window),
// the objects and the writers; the decoder's strings are interned, so an
// event's own allocations do not outlive it.
type Collector struct {
	cfg     Config
	recs    []record
	reads   []readRec
	strs    map[string]string
	objs    map[ObjectKey]*ObjectKey
	writers map[WriterKey]*WriterKey
	readers map[readerKey]*readerKey
}

// NewCollector returns an empty collector.
func NewCollector(cfg Config) *Collector {
	return &Collector{cfg: cfg, strs: map[string]string{}, objs: map[ObjectKey]*ObjectKey{},
		writers: map[WriterKey]*WriterKey{}, readers: map[readerKey]*readerKey{}}
}

func (c *Collector) str(s string) string {
	if v, ok := c.strs[s]; ok {
		return v
	}
	c.strs[s] = s
	return s
}

func intern[K comparable](m map[K]*K, k K) *K {
	if p, ok := m[k]; ok {
		return p
	}
	p := &k
	m[k] = p
	return p
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// Add keeps e if it is a write attempt, or a get of a named object, inside
// the window.
func (c *Collector) Add(e *audit.Event) {
	write := isWrite(e.Verb)
	// A create with generateName has no name yet: its objects are counted
	// together, under the name "".
	unnamed := e.ObjectRef.Name == "" && e.Verb != "create" && e.Verb != "deletecollection"
	if !write && e.Verb != "get" || unnamed || e.ObjectRef.Resource == "" {
		return
	}
	if !c.cfg.Since.IsZero() && e.RequestReceived.Before(c.cfg.Since) || !c.cfg.Until.IsZero() && !e.RequestReceived.Before(c.cfg.Until) {
		return
	}
	ref := &e.ObjectRef
	obj := ObjectKey{Group: c.str(ref.APIGroup), Resource: c.str(ref.Resource), Namespace: c.str(ref.Namespace), Name: c.str(ref.Name)}
	user, pod, ua := c.str(e.Username), c.str(e.PodName), c.str(e.UserAgent)
	objp, reader := intern(c.objs, obj), intern(c.readers, readerKey{user: user, pod: pod, userAgent: ua})
	if !write {
		if e.Code/100 == 2 {
			c.reads = append(c.reads, readRec{obj: objp, reader: reader, received: e.RequestReceived, completed: e.StageTimestamp})
		}
		return
	}
	r := record{
		obj: objp, reader: reader, verb: c.str(e.Verb), sub: c.str(ref.Subresource), code: e.Code,
		result: e.ResponseRV, received: e.RequestReceived, completed: e.StageTimestamp,
		writer:  intern(c.writers, WriterKey{User: user, FieldManager: c.str(fieldManager(e.RequestURI)), Pod: pod}),
		precond: ref.ResourceVersion, details: c.str(e.DetailsKind),
	}
	if e.Code == 409 {
		r.message = c.str(e.Message)
	}
	c.recs = append(c.recs, r)
}

// Merge moves o's records into c.
func (c *Collector) Merge(o *Collector) {
	c.recs = append(c.recs, o.recs...)
	c.reads = append(c.reads, o.reads...)
	o.recs, o.reads = nil, nil
}

// fieldManager reads ?fieldManager= from a request URI.
func fieldManager(uri string) string {
	i := strings.IndexByte(uri, '?')
	if i < 0 || !strings.Contains(uri[i:], "fieldManager=") {
		return ""
	}
	q, err := url.ParseQuery(uri[i+1:])
	if err != nil {
		return ""
	}
	return q.Get("fieldManager")
}
