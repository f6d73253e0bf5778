package doctor

import (
	"context"
	"fmt"
	"strconv"
	"time"

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
		out = append(out, p.checkWatchExpired(ctx))
	}
	return out
}

// watchFor opens a watch that the server ends after timeout and that doctor
// gives up on Grace later.
func (p *prober) watchFor(ctx context.Context, opts metav1.ListOptions, timeout time.Duration) (watch.Interface, context.CancelFunc, error) {
	secs := int64(timeout / time.Second)
	if secs < 1 {
		secs = 1
	}
	opts.TimeoutSeconds = &secs
	ctx, cancel := context.WithTimeout(ctx, timeout+p.cfg.Grace)
	w, err := p.ri.Watch(ctx, opts)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return w, func() { w.Stop(); cancel() }, nil
}

// checkBookmarks watches from the version just before the list's. The watch
// cache sends a bookmark only when its newest version is past the watch's
// start, and after a consistent list of a quiet type it may be exactly the
// list's version: a watch from there may rightly see no bookmark at all.
func (p *prober) checkBookmarks(ctx context.Context, listRV string) Check {
	rv := listRV
	if n, err := strconv.ParseUint(listRV, 10, 64); err == nil && n > 1 {
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
	w, stop, err := p.watchFor(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}, p.cfg.WatchTimeout)
	if err != nil {
		return fail(WatchBookmarks, fmt.Sprintf("a watch from %s could not be opened: %v", rv, err), "from", rv, "code", itoa(statusCode(err)))
	}
	defer stop()
	start, events := time.Now(), 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Bookmark:
			at := resourceVersionOf(ev.Object)
			return pass(WatchBookmarks, fmt.Sprintf("first BOOKMARK after %s at resourceVersion %s, %d event(s) before it", ms(time.Since(start)), at, events),
				"from", rv, "events", strconv.Itoa(events), "bookmark", at, "firstBookmarkMs", msValue(time.Since(start)))
		case watch.Error:
			err := apierrors.FromObject(ev.Object)
			return fail(WatchBookmarks, fmt.Sprintf("the watch from %s ended with an error: %v", rv, err), "from", rv, "code", itoa(statusCode(err)))
		default:
			events++
		}
	}
	// Bookmarks are best effort: a server may send none (kube-apiserver
	// sends them from its watch cache only), and informers then relist
	// where they could have resumed.
	return warn(WatchBookmarks, fmt.Sprintf("no BOOKMARK in a watch of %s with allowWatchBookmarks (%d event(s)): informers that restart will relist instead of resuming", ms(time.Since(start)), events),
		"from", rv, "events", strconv.Itoa(events))
}

func (p *prober) checkInitialEventsEnd(ctx context.Context, listed int) Check {
	yes := true
	opts := metav1.ListOptions{SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	w, stop, err := p.watchFor(ctx, opts, p.cfg.Grace)
	if err != nil {
		return warn(InitialEventsEnd, fmt.Sprintf("the server refused a streaming list (%v); client-go falls back to list and watch", err), "code", itoa(statusCode(err)))
	}
	defer stop()
	start, added := time.Now(), 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added:
			added++
		case watch.Bookmark:
			if isInitialEventsEnd(ev.Object) {
				at := resourceVersionOf(ev.Object)
				return pass(InitialEventsEnd, fmt.Sprintf("%d initial ADDED events, then the initial-events-end BOOKMARK at resourceVersion %s after %s", added, at, ms(time.Since(start))),
					"added", strconv.Itoa(added), "listed", strconv.Itoa(listed), "bookmark", at, "ms", msValue(time.Since(start)))
			}
		case watch.Error:
			err := apierrors.FromObject(ev.Object)
			return fail(InitialEventsEnd, fmt.Sprintf("the streaming list ended with an error after %d ADDED events: %v", added, err), "added", strconv.Itoa(added), "code", itoa(statusCode(err)))
		}
	}
	return fail(InitialEventsEnd, fmt.Sprintf("%d initial ADDED events (the list has %d) and no BOOKMARK annotated %s within %s: client-go informers wait for it forever", added, listed, InitialEventsEndAnnotation, ms(time.Since(start))),
		"added", strconv.Itoa(added), "listed", strconv.Itoa(listed))
}

func (p *prober) checkWatchExpired(ctx context.Context) Check {
	w, stop, err := p.watchFor(ctx, metav1.ListOptions{ResourceVersion: expiredRV}, p.cfg.WatchTimeout)
	if err != nil {
		if code := statusCode(err); code == 410 {
			return pass(WatchExpired, fmt.Sprintf("opening a watch from resourceVersion 1 answered 410: %v", err), "from", expiredRV, "code", "410")
		}
		return fail(WatchExpired, fmt.Sprintf("opening a watch from resourceVersion 1 failed with %d, not 410 Gone: %v", statusCode(err), err), "from", expiredRV, "code", itoa(statusCode(err)))
	}
	defer stop()
	for ev := range w.ResultChan() {
		if ev.Type != watch.Error {
			// The watch cache replays what it still holds: until it drops an
			// event or restarts, that reaches back to its first list, even
			// after etcd compacted those versions.
			return skip(WatchExpired, fmt.Sprintf("a watch from resourceVersion 1 was served from history the server still holds (first event %s): nothing has expired for watches yet", ev.Type),
				"from", expiredRV, "first", string(ev.Type))
		}
		err := apierrors.FromObject(ev.Object)
		if code := statusCode(err); code != 410 {
			return fail(WatchExpired, fmt.Sprintf("a watch from resourceVersion 1 sent an error %d, not 410 Gone: %v", code, err), "from", expiredRV, "code", itoa(code))
		}
		return pass(WatchExpired, fmt.Sprintf("an ERROR event with 410: %v", err), "from", expiredRV, "code", "410", "reason", string(apierrors.ReasonForError(err)))
	}
	if p.exactAtExpired(ctx).code() != 410 {
		return skip(WatchExpired, "a watch from resourceVersion 1 opened and closed with no event, and the store still holds that version: nothing has expired yet", "from", expiredRV, "code", "200")
	}
	return fail(WatchExpired, "the store has compacted resourceVersion 1 (an exact list answers 410), yet a watch from it opened and closed without a 410 Gone: a client never learns it must relist",
		"from", expiredRV, "code", "200")
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

// isForbidden reports whether err says the user may not make the request.
func isForbidden(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}
