package follow

import (
	"math"
	"sort"
	"time"
	"unique"

	"github.com/kubectl-rv/kubectl-rv/pkg/jsonvalue"
)

// Fight is a field changing hands between managers again and again. Watch
// reports one as a FIGHT row, churn in its fights.
type Fight struct {
	Object    string `json:"object"`
	Namespace string `json:"namespace,omitempty"`
	Field     string `json:"field"`
	// Managers are the managers taking turns, sorted.
	Managers []string `json:"managers"`
	// Flips is how many times the field changed hands within the window.
	Flips int `json:"flips"`
	// Capped says that Flips is a lower bound: the field changed hands more
	// often within the window than FieldWriters keeps (4 x the threshold).
	Capped bool `json:"capped,omitempty"`
	// Span is the time between the first and last write counted.
	Span Duration `json:"span"`
	// PerMinute is Flips per minute over Span.
	PerMinute float64 `json:"perMinute"`
	// Since is when the first counted write was seen.
	Since time.Time `json:"since"`
}

// Duration marshals as Go's duration string ("1m30s").
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return jsonvalue.AppendString(nil, time.Duration(d).String()), nil
}

// String returns the duration as Go prints it.
func (d Duration) String() string { return time.Duration(d).String() }

// FieldWriters is the bounded history of who wrote one field of one object:
// the fight detection shared by watch (Tracker) and churn. A field fights
// when it changes hands between managers threshold times within window.
// Only the latest 4*threshold+1 writes are kept, so its size is bounded
// whatever the write rate; a fight whose flips went beyond is marked Capped.
// The zero value is ready to use.
type FieldWriters struct {
	writes []fieldWrite
	// inBout is set once the current bout was reported, until a quiet window.
	inBout bool
	// capped is set once a write was dropped to keep the history bounded,
	// until the window drops a kept write: the dropped writes are older, so
	// none is within the window any more. While it is set, Flips is a lower
	// bound. (A bool fits beside inBout: the history stays 32 bytes.)
	capped bool
}

// fieldWrite is one write of a field; the manager is interned, since one
// name writes many fields.
type fieldWrite struct {
	manager unique.Handle[string]
	at      time.Time
}

// Write records that manager wrote the field at `at`. It returns the fight
// (Object, Namespace and Field left for the caller to fill) when the field
// has now changed hands threshold times within window, and first is true
// for the first report of a bout: a field is reported once per bout, and a
// new bout starts only after a quiet window.
func (h *FieldWriters) Write(manager string, at time.Time, threshold int, window time.Duration) (f *Fight, first bool) {
	i := 0
	for i < len(h.writes) && at.Sub(h.writes[i].at) > window {
		i++
	}
	if i > 0 {
		h.capped = false
	}
	h.writes = append(h.writes[:0], h.writes[i:]...)
	if len(h.writes) == 0 {
		h.inBout = false
	}
	h.writes = append(h.writes, fieldWrite{manager: unique.Make(manager), at: at})
	if maxKeep := 4*threshold + 1; len(h.writes) > maxKeep {
		h.capped = true
		h.writes = append(h.writes[:0], h.writes[len(h.writes)-maxKeep:]...)
	}
	flips := 0
	for j := 1; j < len(h.writes); j++ {
		if h.writes[j].manager != h.writes[j-1].manager {
			flips++
		}
	}
	if flips < threshold {
		return nil, false
	}
	managers := map[string]bool{}
	for _, w := range h.writes {
		managers[w.manager.Value()] = true
	}
	span := at.Sub(h.writes[0].at)
	first = !h.inBout
	h.inBout = true
	return &Fight{Managers: sortedKeys(managers), Flips: flips, Capped: h.capped, Span: Duration(span), PerMinute: PerMinute(flips, span), Since: h.writes[0].at}, first
}

// PerMinute is n per minute over span (at least a second), to one decimal.
func PerMinute(n int, span time.Duration) float64 {
	if span < time.Second {
		span = time.Second
	}
	return math.Round(float64(n)/span.Minutes()*10) / 10
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Kept is how many writes the history holds: at most 4*threshold+1.
func (h *FieldWriters) Kept() int { return len(h.writes) }
