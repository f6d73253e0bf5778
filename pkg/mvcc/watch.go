package mvcc

import (
	"context"
	"slices"
)

// watcher is a watch on the embedded store. Its queue is guarded by the
// store's mu.
type watcher struct {
	s        *Store
	id       int64
	key, end string
	// startRev is the revision asked for (after defaulting); nextRev is the
	// first revision not yet delivered.
	startRev, nextRev int64
	prevKV            bool
	progressNotify    bool
	// sentSinceTick records that events went out since the last
	// NotifyProgress, which then skips this watcher (etcd elides a
	// periodic progress notification after a key update).
	sentSinceTick bool
	queue         []WatchResponse
	closed        bool
}

var _ Watcher = (*watcher)(nil)

// Watch starts a watch. Like etcd's watchable store:
//   - opts.Rev <= 0 starts after the current revision;
//   - opts.Rev below the compacted revision queues one response with
//     CompactRevision set and Canceled, and the watch ends there;
//   - opts.Rev at or below the current revision queues the history from
//     opts.Rev at once (at most WatchBatchMaxRevs revisions per response,
//     header revision = current revision), then the watch is synced;
//   - a future opts.Rev waits for that revision;
//   - an empty range (opts.End at or before key) is ErrEmptyWatcherRange.
//
// Afterwards every write txn queues one response holding its events that
// fall in the watched range, with the txn's revision in the header.
func (s *Store) Watch(_ context.Context, key string, opts WatchOptions) (Watcher, error) {
	if opts.End != "" && opts.End != "\x00" && key >= opts.End {
		return nil, ErrEmptyWatcherRange
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextWatchID++
	w := &watcher{s: s, id: s.nextWatchID - 1, key: key, end: opts.End, prevKV: opts.PrevKV, progressNotify: opts.ProgressNotify}
	if s.closed {
		w.closed = true
		return w, nil
	}
	start := opts.Rev
	if start <= 0 {
		start = s.current + 1
	}
	w.startRev, w.nextRev = start, start
	if start < s.compactMain {
		w.queue = append(w.queue, WatchResponse{
			Header:          s.header(0),
			WatchID:         w.id,
			CompactRevision: s.compactMain,
			Canceled:        true,
		})
		w.closed = true
		return w, nil
	}
	if start <= s.current {
		s.unsafeCatchUp(w)
	}
	s.watchers = append(s.watchers, w)
	return w, nil
}

// unsafeCatchUp queues the history from w.nextRev to the current revision.
func (s *Store) unsafeCatchUp(w *watcher) {
	type revEvent struct {
		rev Revision
		ev  Event
	}
	var revs []revEvent
	s.unsafeAscend(w.key, w.end, func(ki *keyIndex) {
		for i := range ki.hist {
			if r := ki.hist[i].rev(); r.Main >= w.nextRev {
				revs = append(revs, revEvent{r, s.unsafeEvent(ki, i, w.prevKV)})
			}
		}
	})
	slices.SortFunc(revs, func(a, b revEvent) int { return a.rev.Compare(b.rev) })
	evs := make([]Event, len(revs))
	for i := range revs {
		evs[i] = revs[i].ev
	}
	for len(evs) > 0 {
		// Cut after WatchBatchMaxRevs distinct revisions.
		n, revs := 0, 0
		for n < len(evs) {
			if n == 0 || evs[n].KV.ModRevision != evs[n-1].KV.ModRevision {
				if revs == s.cfg.WatchBatchMaxRevs {
					break
				}
				revs++
			}
			n++
		}
		w.queue = append(w.queue, WatchResponse{Header: s.header(s.current), WatchID: w.id, Events: evs[:n:n]})
		evs = evs[n:]
		w.sentSinceTick = true
	}
	w.nextRev = s.current + 1
}

// unsafeEvent builds the event of ki.hist[i], with its previous key-value
// pair when asked for and readable: etcd reads it at mod_revision-1, so
// it is the state before the whole txn, and skips creations and compacted
// history.
func (s *Store) unsafeEvent(ki *keyIndex, i int, withPrev bool) Event {
	r := &ki.hist[i]
	ev := Event{Type: EventPut}
	if r.tombstone {
		ev.Type = EventDelete
		ev.KV = KeyValue{Key: ki.key, ModRevision: r.main}
	} else {
		ev.KV = s.kvOf(ki, r, false)
	}
	isCreate := !r.tombstone && r.create == r.main
	if withPrev && !isCreate && r.main-1 >= s.compactMain {
		if p, ok := ki.at(r.main - 1); ok {
			kv := s.kvOf(ki, p, false)
			ev.PrevKV = &kv
		}
	}
	return ev
}

// unsafeNotify queues the events of the write txn at rev on the watchers.
func (s *Store) unsafeNotify(rev int64, events []Event) {
	for _, w := range s.watchers {
		if w.nextRev > rev {
			continue
		}
		var evs []Event
		for _, ev := range events {
			if !inRange(ev.KV.Key, w.key, w.end) {
				continue
			}
			if !w.prevKV {
				ev.PrevKV = nil
			} else if ev.Type == EventPut && ev.KV.CreateRevision == ev.KV.ModRevision {
				ev.PrevKV = nil
			}
			evs = append(evs, ev)
		}
		w.nextRev = rev + 1
		if len(evs) == 0 {
			continue
		}
		w.queue = append(w.queue, WatchResponse{Header: s.header(rev), WatchID: w.id, Events: evs})
		w.sentSinceTick = true
	}
}

// RequestProgress queues a progress notification (no events, header
// revision = current revision) on every open watcher that does not wait
// for a future revision (etcd's progressIfSync, with each watcher on a
// stream of its own).
func (s *Store) RequestProgress(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		if s.current >= w.startRev {
			w.queue = append(w.queue, WatchResponse{Header: s.header(s.current), WatchID: w.id})
		}
	}
	return nil
}

// NotifyProgress is the periodic progress tick (etcd's
// --experimental-watch-progress-notify-interval, 10 minutes by default):
// the driver calls it at its virtual interval. Each watcher that asked for
// ProgressNotify, received no events since the last tick and does not wait
// for a future revision gets a progress notification.
func (s *Store) NotifyProgress() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		if w.progressNotify && !w.sentSinceTick && s.current >= w.startRev {
			w.queue = append(w.queue, WatchResponse{Header: s.header(s.current), WatchID: w.id})
		}
		w.sentSinceTick = false
	}
}

// ID returns the watch ID.
func (w *watcher) ID() int64 { return w.id }

// Drain returns the queued responses, oldest first.
func (w *watcher) Drain() []WatchResponse {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// Close ends the watch. Responses already queued can still be drained.
func (w *watcher) Close() error {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.s.watchers = slices.DeleteFunc(w.s.watchers, func(x *watcher) bool { return x == w })
	return nil
}
