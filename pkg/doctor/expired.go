package doctor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkWatchExpired watches from resourceVersion 1, which every store that
// was ever compacted has lost. The server may answer 410 Gone; it may also
// serve the watch from history it still holds (the watch cache replays
// back to its first list until the API server restarts). Under the verdict
// rule only lost data fails: objects that exist, are newer than the start,
// and never arrived.
func (p *prober) checkWatchExpired(ctx context.Context, base *metav1.PartialObjectMetadataList) Check {
	// A 410 comes at once; so does a replay. The watch is read until every
	// listed object has arrived, or until the server closes it: after a
	// second when there is nothing to replay, so that the many empty types
	// of a cluster do not each hold a watch for the whole --watch-timeout.
	timeout := p.cfg.WatchTimeout
	if len(base.Items) == 0 {
		timeout = time.Second
	}
	w, err := p.watch(ctx, metav1.ListOptions{ResourceVersion: expiredRV}, timeout, allArrived(base.Items))
	if err != nil {
		if code := statusCode(err); code == 410 {
			return pass(WatchExpired, fmt.Sprintf("opening a watch from resourceVersion 1 answered 410: %v", err), "from", expiredRV, "code", "410")
		}
		return failUnlessUnreachable(WatchExpired, err, fmt.Sprintf("opening a watch from resourceVersion 1 failed with %d, not 410 Gone: %v", statusCode(err), err), "from", expiredRV, "code", itoa(statusCode(err)))
	}
	in := expiredWatch{watch: w, compacted: p.exactAtExpired(ctx), listed: base.Items}
	if w.err == nil && !w.stalled && in.compacted.code() == 410 {
		// Objects listed before the watch but deleted since are not owed
		// an event by a server that replays current state: only objects
		// that are still there count.
		if missing := missingFrom(w, base.Items); len(missing) > 0 {
			in.still = list(ctx, p.ri, metav1.ListOptions{})
		}
	}
	return judgeWatchExpired(in)
}

// expiredWatch is what checkWatchExpired saw.
type expiredWatch struct {
	watch *watched
	// compacted is the exact list at resourceVersion 1: 410 once the store
	// has compacted it.
	compacted listed
	// listed are the consistent list's items, before the watch.
	listed []metav1.PartialObjectMetadata
	// still is a list after the watch, made only when objects are missing.
	still listed
}

func judgeWatchExpired(in expiredWatch) Check {
	w := in.watch
	events := strconv.Itoa(len(w.events))
	switch {
	case w.err != nil && statusCode(w.err) == 410:
		return pass(WatchExpired, fmt.Sprintf("an ERROR event with 410: %v", w.err), "from", expiredRV, "code", "410", "reason", reasonOf(w.err))
	case w.err != nil:
		return failUnlessUnreachable(WatchExpired, w.err, fmt.Sprintf("a watch from resourceVersion 1 sent an error %d, not 410 Gone: %v", statusCode(w.err), w.err), "from", expiredRV, "code", itoa(statusCode(w.err)))
	case w.stalled:
		return warn(WatchExpired, fmt.Sprintf("unreachable: a watch from resourceVersion 1 neither answered nor closed within %s", ms(w.elapsed)), "from", expiredRV, "unreachable", "true")
	case in.compacted.err != nil && in.compacted.code() != 410:
		return failUnlessUnreachable(WatchExpired, in.compacted.err, fmt.Sprintf("an exact list at resourceVersion 1 (to learn whether it is compacted) failed: %v", in.compacted.err), "from", expiredRV)
	case in.compacted.err == nil && len(w.events) > 0:
		return skip(WatchExpired, fmt.Sprintf("a watch from resourceVersion 1 was served from history the server still holds (first event %s): nothing has expired for watches yet", w.events[0].typ),
			"from", expiredRV, "first", string(w.events[0].typ))
	case in.compacted.err == nil:
		return skip(WatchExpired, "a watch from resourceVersion 1 opened and closed with no event, and the store still holds that version: nothing has expired yet", "from", expiredRV, "code", "200")
	}
	missing := missingFrom(w, in.listed)
	if len(missing) > 0 && in.still.err == nil && in.still.list != nil {
		missing = stillThere(missing, in.still.list.Items)
	}
	switch {
	case len(missing) > 0:
		m := missing[0]
		return fail(WatchExpired, fmt.Sprintf("the store has compacted resourceVersion 1 (an exact list answers 410), yet a watch from it opened and closed without a 410 Gone, and %d of %d listed objects never arrived (e.g. %s at resourceVersion %s): a client that resumes from an old version silently misses them",
			len(missing), len(in.listed), objectName(m), m.ResourceVersion), "from", expiredRV, "code", "200", "events", events, "listed", strconv.Itoa(len(in.listed)), "missing", strconv.Itoa(len(missing)))
	case len(w.events) == 0 && len(in.listed) == 0:
		return skip(WatchExpired, "a watch from the compacted resourceVersion 1 closed cleanly with no event and the type holds no objects: nothing to replay and nothing lost (the server may answer 410 here, but need not)",
			"from", expiredRV, "code", "200", "events", "0", "listed", "0")
	}
	return pass(WatchExpired, fmt.Sprintf("a watch from the compacted resourceVersion 1 was served from the history the server still holds: %s, with every listed object that still exists (%d listed); nothing lost",
		text.Plural(len(w.events), "event"), len(in.listed)), "from", expiredRV, "code", "200", "events", events, "listed", strconv.Itoa(len(in.listed)), "missing", "0")
}

// allArrived returns a stop function for a watch that is done once every
// listed object has arrived at its listed version or later.
func allArrived(listed []metav1.PartialObjectMetadata) func(seenEvent) bool {
	pending := make(map[string]string, len(listed))
	for _, it := range listed {
		pending[objectName(it)] = it.ResourceVersion
	}
	return func(e seenEvent) bool {
		if want, ok := pending[e.name]; ok && compareOrZero(e.rv, want) >= 0 {
			delete(pending, e.name)
		}
		return len(pending) == 0
	}
}

// missingFrom returns the listed objects that a watch from before them
// never delivered at their listed version or later.
func missingFrom(w *watched, listed []metav1.PartialObjectMetadata) []metav1.PartialObjectMetadata {
	// An event at the listed version or later (a later DELETED too: the
	// object went away after the list) is the object arriving; a DELETED of
	// an earlier incarnation, replayed from history, is not.
	newest := map[string]string{}
	for _, e := range w.events {
		if cur, ok := newest[e.name]; !ok || compareOrZero(e.rv, cur) > 0 {
			newest[e.name] = e.rv
		}
	}
	var out []metav1.PartialObjectMetadata
	for _, it := range listed {
		got, ok := newest[objectName(it)]
		if !ok || (got != "" && compareOrZero(got, it.ResourceVersion) < 0) {
			out = append(out, it)
		}
	}
	return out
}

// stillThere keeps the objects of missing that now has with the same uid.
func stillThere(missing, now []metav1.PartialObjectMetadata) []metav1.PartialObjectMetadata {
	uids := make(map[string]bool, len(now))
	for _, it := range now {
		uids[objectName(it)+"\x00"+string(it.UID)] = true
	}
	var out []metav1.PartialObjectMetadata
	for _, it := range missing {
		if uids[objectName(it)+"\x00"+string(it.UID)] {
			out = append(out, it)
		}
	}
	return out
}

func reasonOf(err error) string { return string(apierrors.ReasonForError(err)) }
