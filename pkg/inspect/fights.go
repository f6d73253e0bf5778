package inspect

import (
	"context"
	"time"
	"unique"
)

// FieldWriters is the bounded history of who wrote one field of one object:
// the fight detection shared by watch (Tracker) and churn. A field fights
// when it changes hands between managers threshold times within window.
// Only the latest 4*threshold+1 writes are kept, so its size is bounded
// whatever the write rate. The zero value is ready to use.
type FieldWriters struct {
	writes []fieldWrite
	// inBout is set once the current bout was reported, until a quiet window.
	inBout bool
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
	h.writes = append(h.writes[:0], h.writes[i:]...)
	if len(h.writes) == 0 {
		h.inBout = false
	}
	h.writes = append(h.writes, fieldWrite{manager: unique.Make(manager), at: at})
	if maxKeep := 4*threshold + 1; len(h.writes) > maxKeep {
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
	return &Fight{Managers: sortedKeys(managers), Flips: flips, Span: Duration(span), PerMinute: perMinute(flips, span), Since: h.writes[0].at}, first
}

// Stream lists and watches cfg.Targets through src and sends what it
// receives to out until ctx is done: the list/watch/resume/relist driver of
// watch, for other engines (churn) that keep their own bookkeeping. See
// stream for the contract; warnf may be called from several goroutines.
func Stream(ctx context.Context, src Source, cfg StreamConfig, warnf func(format string, args ...any), out chan<- RecordedEvent) error {
	return stream(ctx, src, cfg, warnf, out)
}
