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
	obj       ObjectKey
	writer    WriterKey
	reader    readerKey
	userAgent string
	read      bool
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

// readerKey identifies who read: reads carry no field manager.
type readerKey struct {
	user, pod, userAgent string
}

// Collector turns events into records; Report analyses them.
type Collector struct {
	cfg  Config
	recs []record
}

// NewCollector returns an empty collector.
func NewCollector(cfg Config) *Collector { return &Collector{cfg: cfg} }

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
	r := record{
		obj:       ObjectKey{Group: e.ObjectRef.APIGroup, Resource: e.ObjectRef.Resource, Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name},
		reader:    readerKey{user: e.Username, pod: e.PodName, userAgent: e.UserAgent},
		userAgent: e.UserAgent, read: !write, verb: e.Verb, sub: e.ObjectRef.Subresource, code: e.Code,
		result: e.ResponseRV, received: e.RequestReceived, completed: e.StageTimestamp,
	}
	if write {
		r.writer = WriterKey{User: e.Username, FieldManager: fieldManager(e.RequestURI), Pod: e.PodName}
		r.precond, r.details = e.ObjectRef.ResourceVersion, e.DetailsKind
		if e.Code == 409 {
			r.message = e.Message
		}
	}
	c.recs = append(c.recs, r)
}

// Merge moves o's records into c.
func (c *Collector) Merge(o *Collector) {
	c.recs = append(c.recs, o.recs...)
	o.recs = nil
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
