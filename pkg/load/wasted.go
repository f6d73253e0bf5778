package load

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Wasted is one writer's writes that achieved nothing.
type Wasted struct {
	Writer   string `json:"writer"`
	Attempts int    `json:"attempts"`
	// AlreadyExists counts creates refused because the name exists.
	AlreadyExists int `json:"alreadyExists"`
	// NoOps counts updates and patches that changed nothing; nil when
	// the writer made some and none could be judged (a Metadata-level
	// log).
	NoOps *int `json:"noOps"`
	// NoOpUnknown counts the successful updates and patches that could
	// not be judged: no resourceVersion in the event, or none of the
	// object's seen before the request.
	NoOpUnknown int `json:"noOpUnknown,omitempty"`
	// Lost counts the other 409s.
	Lost   int     `json:"lost"`
	Wasted int     `json:"wasted"`
	Share  float64 `json:"share"`
	// noOps and judged count the no-ops and the updates and patches
	// judged.
	noOps, judged int
}

// wastedCounter counts each writer's wasted writes, and keeps the
// resourceVersions the log showed of each object, to tell a no-op.
type wastedCounter struct {
	writers map[string]*Wasted
	// versions are by the object's KeyHash.
	versions map[audit.KeyHash]*seenVersions
	buf      []byte
}

// seenVersions are the last resourceVersions the log showed of an
// object, each with when the request that showed it completed.
type seenVersions [4]struct {
	rv   string
	seen time.Time
}

func newWastedCounter() *wastedCounter {
	return &wastedCounter{writers: map[string]*Wasted{}, versions: map[audit.KeyHash]*seenVersions{}}
}

// isWrite says whether verb writes.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// add counts e, about the object of KeyHash obj, and says whether it is a
// wasted write.
func (w *wastedCounter) add(e *audit.Event, obj audit.KeyHash) (wasted bool) {
	if isWrite(e.Verb) && !audit.DryRun(e) {
		wasted = w.count(e, obj)
	}
	if e.ResponseRV != "" && e.ObjectRef.Name != "" {
		w.saw(obj, e.ResponseRV, e.StageTimestamp)
	}
	return wasted
}

func (w *wastedCounter) count(e *audit.Event, obj audit.KeyHash) bool {
	w.buf = appendWriter(w.buf[:0], e)
	t := w.writers[string(w.buf)]
	if t == nil {
		t = &Wasted{Writer: string(w.buf)}
		w.writers[t.Writer] = t
	}
	t.Attempts++
	switch {
	case e.Code == 409 && alreadyExists(e):
		t.AlreadyExists++
	case e.Code == 409:
		t.Lost++
	case (e.Verb == "update" || e.Verb == "patch") && e.Code/100 == 2:
		noOp, known := w.noOp(e, obj)
		if !known {
			t.NoOpUnknown++
			return false
		}
		t.judged++
		if !noOp {
			return false
		}
		t.noOps++
	default:
		return false
	}
	t.Wasted++
	return true
}

func alreadyExists(e *audit.Event) bool {
	return e.Reason == "AlreadyExists" || e.Verb == "create" && strings.HasSuffix(e.Message, "already exists")
}

// noOp says whether the successful update or patch e left its object as
// it was, and whether that can be known: its response's resourceVersion
// is the precondition it sent, or one the object had before e was
// received.
func (w *wastedCounter) noOp(e *audit.Event, obj audit.KeyHash) (noOp, known bool) {
	rv := e.ResponseRV
	if rv == "" {
		return false, false
	}
	if e.ObjectRef.ResourceVersion != "" {
		return rv == e.ObjectRef.ResourceVersion, true
	}
	v := w.versions[obj]
	if v == nil {
		return false, false
	}
	for _, s := range v {
		if s.rv != "" && s.seen.Before(e.RequestReceived) {
			if s.rv == rv {
				return true, true
			}
			known = true
		}
	}
	return false, known
}

// saw records that a request completed at t showed rv of obj.
func (w *wastedCounter) saw(obj audit.KeyHash, rv string, t time.Time) {
	v := w.versions[obj]
	if v == nil {
		v = &seenVersions{}
		w.versions[obj] = v
	}
	if v[0].rv == rv {
		return
	}
	copy(v[1:], v[:len(v)-1])
	v[0].rv, v[0].seen = strings.Clone(rv), t
}

// rows are the writers that wrote, the most wasted first.
func (w *wastedCounter) rows() []Wasted {
	out := make([]Wasted, 0, len(w.writers))
	for _, t := range w.writers {
		r := *t
		if r.judged > 0 || r.NoOpUnknown == 0 {
			r.NoOps = &t.noOps
		}
		if r.Attempts > 0 {
			r.Share = float64(r.Wasted) / float64(r.Attempts)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Wasted) int {
		return cmp.Or(cmp.Compare(b.Wasted, a.Wasted), cmp.Compare(b.Attempts, a.Attempts), strings.Compare(a.Writer, b.Writer))
	})
	return out
}
