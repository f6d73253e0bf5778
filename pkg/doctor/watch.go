package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// InitialEventsEndAnnotation marks the bookmark that ends a streaming
// list's initial events.
const InitialEventsEndAnnotation = metav1.InitialEventsAnnotationKey

// probeWatches runs the watch checks from the consistent list's version.
func (p *prober) probeWatches(ctx context.Context, base *metav1.PartialObjectMetadataList) []Check {
	var out []Check
	if p.on(WatchBookmarks) {
		out = append(out, p.checkBookmarks(ctx, base.ResourceVersion))
	}
	if p.on(InitialEventsEnd) {
		out = append(out, p.checkInitialEventsEnd(ctx, len(base.Items)))
	}
	if p.on(WatchExpired) {
		out = append(out, p.checkWatchExpired(ctx, base))
	}
	if p.on(WatchStorageCompacted) && (p.storageServed || p.asked(WatchStorageCompacted)) {
		out = append(out, p.checkStorageWatch(ctx))
	}
	if p.on(WatchEventsHaveRV) {
		out = append(out, judgeEventRVs(p.watches))
	}
	return out
}

// seenEvent is one event a watch delivered.
type seenEvent struct {
	typ  watch.EventType
	rv   string
	name string
	// initialEventsEnd marks a streaming list's closing bookmark.
	initialEventsEnd bool
}

// watched is what one watch delivered, in order.
type watched struct {
	// from is the resourceVersion the watch started at ("" for a streaming
	// list).
	from string
	// initial marks a streaming list, whose initial events come in key
	// order, not resourceVersion order.
	initial bool
	// events are the ADDED, MODIFIED and DELETED events.
	events []seenEvent
	// bookmark is the first BOOKMARK, when one came.
	bookmark *seenEvent
	// err is an ERROR event's status.
	err error
	// stalled says the watch neither ended nor was ended by the server
	// within its timeout and Grace: doctor gave up on it.
	stalled bool
	elapsed time.Duration
}

// reached is the newest resourceVersion the watch stood at: its start, or
// the last event's.
func (w *watched) reached() string {
	at := w.from
	for _, e := range w.events {
		if compareOrZero(e.rv, at) > 0 {
			at = e.rv
		}
	}
	return at
}

// watch opens a watch that the server ends after timeout, reads it until it
// closes, an ERROR arrives or stop says so, and records what came. Every
// watch a prober makes is kept for watch-events-have-rv.
func (p *prober) watch(ctx context.Context, opts metav1.ListOptions, timeout time.Duration, stop func(seenEvent) bool) (*watched, error) {
	secs := int64(max(timeout/time.Second, 1))
	opts.TimeoutSeconds = &secs
	wctx, cancel := context.WithTimeout(ctx, timeout+p.cfg.Grace)
	defer cancel()
	w, err := p.ri.Watch(wctx, opts)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	rec := &watched{from: opts.ResourceVersion, initial: opts.SendInitialEvents != nil && *opts.SendInitialEvents}
	p.watches = append(p.watches, rec)
	start := time.Now()
	defer func() { rec.elapsed = time.Since(start) }()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			rec.err = apierrors.FromObject(ev.Object)
			return rec, nil
		}
		e := seenEvent{typ: ev.Type, rv: resourceVersionOf(ev.Object), name: nameOf(ev.Object), initialEventsEnd: isInitialEventsEnd(ev.Object)}
		if ev.Type == watch.Bookmark {
			if rec.bookmark == nil {
				rec.bookmark = &e
			}
		} else {
			rec.events = append(rec.events, e)
		}
		if stop != nil && stop(e) {
			return rec, nil
		}
	}
	// The result channel also closes when doctor's own deadline ends the
	// request: that is a server that did not answer, not one that closed.
	rec.stalled = wctx.Err() != nil && ctx.Err() == nil
	return rec, nil
}

func isBookmark(e seenEvent) bool { return e.typ == watch.Bookmark }

// checkBookmarks watches from the version just before the list's, so that
// the watch cache, whose newest version is then past the watch's start,
// owes it a bookmark. A consistent list at the watch's start brings the
// cache up to the store's newest revision (since 1.34 consistent reads are
// served from the cache after a progress notification), so that "no
// bookmark" can be told from "nothing newer to bookmark": when the list's
// version is the type's own latest write, the replayed event moves the
// watch to it, and a bookmark then waits for a newer write anywhere.
//
// A storage-served type (no watch cache, so no bookmark either way) is
// watched from the list's own version, as an informer does: replaying the
// write before it would be checking the store's history, which
// watch-storage-compacted does.
func (p *prober) checkBookmarks(ctx context.Context, listRV string) Check {
	rv := listRV
	if n, err := strconv.ParseUint(listRV, 10, 64); err == nil && n > 1 && !p.storageServed {
		rv = strconv.FormatUint(n-1, 10)
	}
	c := p.watchBookmark(ctx, rv)
	if rv != listRV && c.Values["code"] == "410" {
		// Just after the watch cache (re)listed, the version before the
		// list's may be older than anything it holds.
		return p.watchBookmark(ctx, listRV)
	}
	return c
}

func (p *prober) watchBookmark(ctx context.Context, rv string) Check {
	latest := make(chan string, 1)
	go func() {
		l := list(ctx, p.ri, metav1.ListOptions{Limit: 1})
		if l.err != nil {
			latest <- ""
			return
		}
		latest <- l.list.ResourceVersion
	}()
	w, err := p.watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}, p.cfg.WatchTimeout, isBookmark)
	newest := <-latest
	if err != nil {
		return failUnlessUnreachable(WatchBookmarks, err, fmt.Sprintf("a watch from %s could not be opened: %v", rv, err), "from", rv, "code", itoa(statusCode(err)))
	}
	return judgeBookmarks(w, newest, p.storageServed)
}

// judgeBookmarks says what a watch with allowWatchBookmarks showed. newest
// is the store's newest revision when the watch began ("" if unknown).
func judgeBookmarks(w *watched, newest string, storageServed bool) Check {
	rv, events := w.from, len(w.events)
	switch {
	case w.bookmark != nil:
		return pass(WatchBookmarks, fmt.Sprintf("first BOOKMARK after %s at resourceVersion %s, %s before it", ms(w.elapsed), w.bookmark.rv, text.Plural(events, "event")),
			"from", rv, "events", strconv.Itoa(events), "bookmark", w.bookmark.rv, "firstBookmarkMs", msValue(w.elapsed))
	case w.err != nil:
		return failUnlessUnreachable(WatchBookmarks, w.err, fmt.Sprintf("the watch from %s ended with an error: %v", rv, w.err), "from", rv, "code", itoa(statusCode(w.err)))
	case w.stalled:
		return warn(WatchBookmarks, fmt.Sprintf("unreachable: the watch from %s neither sent a BOOKMARK nor closed within %s", rv, ms(w.elapsed)), "from", rv, "unreachable", "true")
	case storageServed:
		return warn(WatchBookmarks, fmt.Sprintf("no BOOKMARK in %s: kube-apiserver serves %s from storage, not from a watch cache, and only the watch cache sends bookmarks; informers of this type relist instead of resuming", ms(w.elapsed), storageServedWhy),
			"from", rv, "events", strconv.Itoa(events), "cause", "no-watch-cache")
	}
	reached := w.reached()
	if newest != "" && compareOrZero(newest, reached) <= 0 {
		return skip(WatchBookmarks, fmt.Sprintf("no BOOKMARK in %s, and none was owed: nothing newer than resourceVersion %s (where the watch stood after %s) existed when it began, and a bookmark needs a newer version",
			ms(w.elapsed), reached, text.Plural(events, "replayed event")), "from", rv, "events", strconv.Itoa(events), "reached", reached, "newest", newest)
	}
	// Bookmarks are best effort: informers then relist where they could
	// have resumed.
	return warn(WatchBookmarks, fmt.Sprintf("no BOOKMARK in a watch of %s with allowWatchBookmarks (%s), although resourceVersion %s was newer than where the watch stood (%s): informers that restart will relist instead of resuming",
		ms(w.elapsed), text.Plural(events, "event"), newest, reached), "from", rv, "events", strconv.Itoa(events), "reached", reached, "newest", newest)
}

func (p *prober) checkInitialEventsEnd(ctx context.Context, listed int) Check {
	yes := true
	opts := metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	var w *watched
	var err error
	for try := 1; ; try++ {
		w, err = p.watch(ctx, opts, p.cfg.Grace, func(e seenEvent) bool { return e.initialEventsEnd })
		if try == streamTries || !cacheBehind(err) && (w == nil || !cacheBehind(w.err)) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	if behind := err; cacheBehind(behind) || w != nil && cacheBehind(w.err) {
		if behind == nil {
			behind = w.err
		}
		return warn(InitialEventsEnd, fmt.Sprintf("unreachable: %d streaming lists in a row answered %v: the watch cache did not reach storage's newest version in time (a lagging cache, not a broken contract: ask again later)", streamTries, behind), "unreachable", "true", "code", itoa(statusCode(behind)))
	}
	if err != nil {
		if unreachable(err) {
			return failUnlessUnreachable(InitialEventsEnd, err, fmt.Sprintf("a streaming list could not be opened: %v", err))
		}
		return warn(InitialEventsEnd, fmt.Sprintf("the server refused a streaming list (%v); client-go falls back to list and watch", err), "code", itoa(statusCode(err)))
	}
	added := 0
	for _, e := range w.events {
		if e.typ == watch.Added {
			added++
		}
	}
	switch {
	case w.bookmark != nil && w.bookmark.initialEventsEnd:
		return pass(InitialEventsEnd, fmt.Sprintf("%s, then the initial-events-end BOOKMARK at resourceVersion %s after %s", text.Plural(added, "initial ADDED event"), w.bookmark.rv, ms(w.elapsed)),
			"added", strconv.Itoa(added), "listed", strconv.Itoa(listed), "bookmark", w.bookmark.rv, "ms", msValue(w.elapsed))
	case w.err != nil:
		return failUnlessUnreachable(InitialEventsEnd, w.err, fmt.Sprintf("the streaming list ended with an error after %s: %v", text.Plural(added, "ADDED event"), w.err), "added", strconv.Itoa(added), "code", itoa(statusCode(w.err)))
	case w.stalled && added == 0:
		return warn(InitialEventsEnd, fmt.Sprintf("unreachable: the streaming list sent nothing within %s", ms(w.elapsed)), "added", "0", "listed", strconv.Itoa(listed), "unreachable", "true")
	}
	return fail(InitialEventsEnd, fmt.Sprintf("%s (the list has %d) and no BOOKMARK annotated %s within %s: client-go informers wait for it forever", text.Plural(added, "initial ADDED event"), listed, InitialEventsEndAnnotation, ms(w.elapsed)),
		"added", strconv.Itoa(added), "listed", strconv.Itoa(listed))
}

// streamTries is how many streaming lists checkInitialEventsEnd opens
// while the watch cache is behind (cacheBehind), a second apart.
const streamTries = 3

// cacheBehind says err is the API server's "Too large resource version"
// to a request that named no version: the newest version in storage,
// which the server waits for its watch cache to reach (3 s), was not
// reached. The server is catching up, as kine does under load; unlike
// list-future's, this version was not the client's to choose.
func cacheBehind(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Too large resource version")
}

func isInitialEventsEnd(obj runtime.Object) bool {
	a, err := meta.Accessor(obj)
	return err == nil && a.GetAnnotations()[InitialEventsEndAnnotation] == "true"
}

func resourceVersionOf(obj runtime.Object) string {
	a, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return a.GetResourceVersion()
}

func nameOf(obj runtime.Object) string {
	a, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	if a.GetNamespace() != "" {
		return a.GetNamespace() + "/" + a.GetName()
	}
	return a.GetName()
}

// isForbidden reports whether err says the user may not make the request.
func isForbidden(err error) bool {
	return exitcode.IsForbidden(err) || apierrors.IsUnauthorized(err)
}
