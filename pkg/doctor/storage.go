package doctor

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-rv/kubectl-rv/pkg/apitypes"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// storageServedWhy names the types kube-apiserver serves without a watch
// cache, for messages.
const storageServedWhy = "Events (core/v1 and events.k8s.io)"

// servedByStorage reports whether kube-apiserver serves t's watches from
// storage (etcd, or whatever speaks its API) rather than from a watch
// cache. kube-apiserver keeps no watch cache for Events; an administrator
// can switch the cache off for other types (--watch-cache-sizes), which
// cannot be seen from outside.
func servedByStorage(t apitypes.Type) bool {
	return t.Resource.Resource == "events" && (t.Resource.Group == "" || t.Resource.Group == "events.k8s.io")
}

// checkStorageWatch watches a storage-served type from the oldest revision
// the store still holds (its compact revision, found with exact lists),
// where a watch replays history straight from the store: every change
// since must arrive, and the store must carry what the API server needs to
// decode it (kine after compaction sends events without their previous
// value, and kube-apiserver then answers 500 "etcd event received with
// PrevKv=nil").
//
// Each attempt starts from a consistent list of its own, made then: the
// list the other checks start from is as old as they took (a watch check
// waits seconds for a bookmark), and a store that has compacted past its
// version since holds none of the versions below it that the search
// looks among, so every attempt from it would race and lose.
func (p *prober) checkStorageWatch(ctx context.Context) Check {
	if !p.storageServed {
		return skip(WatchStorageCompacted, "served from the watch cache: the storage-served watch is checked on "+storageServedWhy)
	}
	if exp := p.exactAtExpired(ctx); exp.err == nil {
		return skip(WatchStorageCompacted, "resourceVersion 1 is still readable: the store was never compacted, so there is no compact revision to watch from", "code", "200")
	} else if exp.code() != 410 {
		return failUnlessUnreachable(WatchStorageCompacted, exp.err, fmt.Sprintf("an exact list at resourceVersion 1 failed: %v", exp.err))
	}
	var in storageWatch
	for attempt := 1; ; attempt++ {
		base := list(ctx, p.ri, metav1.ListOptions{})
		if base.err != nil {
			return failUnlessUnreachable(WatchStorageCompacted, base.err, fmt.Sprintf("a consistent list failed: %v", base.err), "code", itoa(base.code()))
		}
		var failed *Check
		if in, failed = p.watchFromCompactRevision(ctx, base.list); failed != nil {
			return *failed
		}
		if w := in.watch; w.err == nil || statusCode(w.err) != 410 || !p.compactedPast(ctx, w.from) {
			break
		}
		// The store compacted past the revision while doctor found it and
		// opened the watch (an API server compacts every
		// --etcd-compaction-interval): its 410 is the contract kept.
		if attempt == storageWatchAttempts {
			return skip(WatchStorageCompacted, fmt.Sprintf("on each of %d attempts the store compacted past its compact revision (the last: %s) before doctor's watch from there opened, and answered 410 as it should: no watch from the oldest revision it holds was left to check",
				attempt, in.watch.from), "from", in.watch.from, "code", "410", "attempts", strconv.Itoa(attempt))
		}
	}
	return judgeStorageWatch(in)
}

// storageWatchAttempts is how many times checkStorageWatch finds the
// compact revision and watches from it when the store compacts past it in
// between.
const storageWatchAttempts = 3

// watchFromCompactRevision finds the store's compact revision with exact
// lists and watches from it; a step that fails gives the check's verdict.
func (p *prober) watchFromCompactRevision(ctx context.Context, base *metav1.PartialObjectMetadataList) (in storageWatch, failed *Check) {
	oldest, err := p.oldestReadable(ctx, base.ResourceVersion)
	if err != nil {
		c := failUnlessUnreachable(WatchStorageCompacted, err, fmt.Sprintf("finding the compact revision with exact lists failed: %v", err))
		return in, &c
	}
	w, err := p.watch(ctx, metav1.ListOptions{ResourceVersion: oldest}, p.cfg.WatchTimeout, nil)
	if err != nil {
		c := failUnlessUnreachable(WatchStorageCompacted, err, fmt.Sprintf("a watch from the compact revision %s could not be opened: %v", oldest, err), "from", oldest, "code", itoa(statusCode(err)))
		return in, &c
	}
	in.watch = w
	for _, it := range base.Items {
		if compareOrZero(it.ResourceVersion, oldest) > 0 {
			in.owed = append(in.owed, it)
		}
	}
	if w.err == nil && !w.stalled && len(missingFrom(w, in.owed)) > 0 {
		// Objects deleted since the list are not owed by a server that
		// compacts their history away with them.
		in.still = list(ctx, p.ri, metav1.ListOptions{})
	}
	return in, nil
}

// compactedPast says whether an exact list at rv now answers 410: the
// store has compacted past rv.
func (p *prober) compactedPast(ctx context.Context, rv string) bool {
	return list(ctx, p.ri, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 1}).code() == 410
}

// storageWatch is what checkStorageWatch saw.
type storageWatch struct {
	watch *watched
	// owed are the objects of the consistent list (made before the watch)
	// newer than the watch's start: a watch from there must deliver them.
	owed []metav1.PartialObjectMetadata
	// still is a list after the watch, made only when objects are missing.
	still listed
}

// oldestReadable finds the oldest resourceVersion an exact list still
// answers, between 1 (compacted) and newest, by bisection.
func (p *prober) oldestReadable(ctx context.Context, newest string) (string, error) {
	hi, err := strconv.ParseUint(newest, 10, 64)
	if err != nil {
		return "", fmt.Errorf("resourceVersion %q is not an integer", newest)
	}
	lo := uint64(1) // compacted
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		l := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: strconv.FormatUint(mid, 10), ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 1})
		switch {
		case l.code() == 410:
			lo = mid
		case l.err != nil:
			return "", l.err
		default:
			hi = mid
		}
	}
	return strconv.FormatUint(hi, 10), nil
}

// judgeStorageWatch says whether a watch from the compact revision
// delivered what it owed.
func judgeStorageWatch(in storageWatch) Check {
	w := in.watch
	from := w.from
	switch {
	case w.err != nil:
		return failUnlessUnreachable(WatchStorageCompacted, w.err, fmt.Sprintf("a storage-served watch from the compact revision %s ended with an error %d: %v: clients of this type cannot resume from any version the store still holds",
			from, statusCode(w.err), w.err), "from", from, "code", itoa(statusCode(w.err)), "events", strconv.Itoa(len(w.events)))
	case w.stalled:
		return warn(WatchStorageCompacted, fmt.Sprintf("unreachable: a watch from the compact revision %s neither answered nor closed within %s", from, ms(w.elapsed)), "from", from, "unreachable", "true")
	}
	missing := missingFrom(w, in.owed)
	if len(missing) > 0 && in.still.err == nil && in.still.list != nil {
		missing = stillThere(missing, in.still.list.Items)
	}
	if len(missing) > 0 {
		m := missing[0]
		return fail(WatchStorageCompacted, fmt.Sprintf("a storage-served watch from the compact revision %s delivered %s but missed %d of the %d listed objects written since (e.g. %s at resourceVersion %s)",
			from, text.Plural(len(w.events), "event"), len(missing), len(in.owed), objectName(m), m.ResourceVersion),
			"from", from, "code", "200", "events", strconv.Itoa(len(w.events)), "missing", strconv.Itoa(len(missing)))
	}
	return pass(WatchStorageCompacted, fmt.Sprintf("a storage-served watch from the compact revision %s delivered %s, every one of the %s written since among them",
		from, text.Plural(len(w.events), "event"), text.Plural(len(in.owed), "listed object")), "from", from, "code", "200", "events", strconv.Itoa(len(w.events)), "missing", "0")
}
