package follow

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

// Config says what to list and watch, and how to retry. NewConfig fills
// the defaults.
type Config struct {
	// Targets are what Stream follows (Follow is given its one target).
	Targets       []Target
	LabelSelector string
	FieldSelector string
	// Since starts the watch at this resourceVersion without a list.
	Since string
	// ShowSecrets turns off the redaction of Secret values.
	ShowSecrets bool
	// ChunkSize is the page size of lists; 0 lists in one page.
	ChunkSize int64
	// RequireNames ends Stream with a *NotFoundError when the initial list
	// of a target with Names lacks one of them. The named targets' initial
	// lists wait for each other, so that no object of any is sent before.
	// Without it, a named object that does not exist yet is waited for. It
	// does nothing with Since (no list).
	RequireNames bool
	// MinBackoff and MaxBackoff bound the wait before a retry; each wait
	// doubles up to MaxBackoff, with up to 50% jitter, and falls back to
	// MinBackoff once a watch delivers events again.
	MinBackoff, MaxBackoff time.Duration
	// Now stamps received events and the recording's header.
	Now func() time.Time
}

// NewConfig returns a Config with the default backoff (250ms to 5s), pages
// of 500 and the wall clock.
func NewConfig() Config {
	return Config{ChunkSize: 500, MinBackoff: 250 * time.Millisecond, MaxBackoff: 5 * time.Second, Now: time.Now}
}

// ErrInitialContact wraps the error of the first request of a target: a
// failure there (unreachable cluster, no RBAC rights, unknown resource) ends
// the watch, while every later error is retried. A target that is only
// forbidden is left out with a warning while another target can be watched.
var ErrInitialContact = errors.New("starting the watch")

// NotFoundError says that objects a target names were not in its initial
// list (Config.RequireNames): `configmaps "web" not found in namespace shop`.
type NotFoundError struct {
	Resource schema.GroupResource
	// Namespace is the target's; "" for all namespaces or a
	// cluster-scoped resource.
	Namespace string
	// Names are the missing names, in the target's order.
	Names []string
	// Selected is set when a label or field selector took part in the list:
	// the object may exist and not match.
	Selected bool
}

func (e *NotFoundError) Error() string {
	names := make([]string, len(e.Names))
	for i, n := range e.Names {
		names[i] = strconv.Quote(n)
	}
	msg := fmt.Sprintf("%s %s not found", e.Resource, strings.Join(names, ", "))
	if e.Namespace != "" {
		msg += " in namespace " + e.Namespace
	}
	if e.Selected {
		msg += " matching the selectors"
	}
	return msg
}

// Stream lists each of cfg.Targets through src (unless Since is set), then
// watches it from the list's resourceVersion with bookmarks, sending every
// event to out, until ctx is done. It never gives up after the first
// successful contact: a dropped connection or an API server restart resumes
// the watch from the last resourceVersion seen, after a backoff with jitter,
// so no event is seen twice; a 410 Gone relists and sends the relist as LIST
// events ended by a SYNCED event naming the lost range. Retries and targets
// left out are reported to warnf, from the targets' goroutines. Stream
// returns nil when ctx is done, or an error wrapping ErrInitialContact.
func Stream(ctx context.Context, src Source, cfg Config, warnf func(format string, args ...any), out chan<- Event) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg sync.WaitGroup
		// mu guards first and forbidden.
		mu        sync.Mutex
		first     error
		forbidden int
	)
	named := newNamedBarrier(cfg)
	for _, tgt := range cfg.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &streamer{src: src, cfg: cfg, warnf: warnf, tgt: tgt}
			if s.requireNames() {
				var arrive func()
				arrive, s.ready = named.join()
				// Runs after a failure has cancelled ctx, so that the
				// other targets see it.
				defer arrive()
			}
			s.list = s.listPages(src, out)
			s.emit = func(ctx context.Context, ev Event) { send(ctx, out, ev) }
			err := s.run(ctx)
			if err == nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			// A target the user may not read is left out with a warning, as
			// long as another target can be watched.
			if apierrors.IsForbidden(err) {
				forbidden++
				if forbidden < len(cfg.Targets) {
					warnf("leaving %s out: %v", tgt, err)
					return
				}
			}
			if first == nil {
				first = err
			}
			cancel()
		}()
	}
	wg.Wait()
	return first
}

// Handler is what Follow does with one target: its own listing, and the
// watch's events.
type Handler struct {
	// List lists the target and returns the list's resourceVersion. Follow
	// calls it at the start when cfg.Since is empty (reason SyncInitial),
	// and after a 410 Gone (SyncRelist, with the last resourceVersion seen
	// and the server's message: the events in between are lost). An error
	// of the initial list ends Follow; a relist is retried with backoff.
	List func(ctx context.Context, reason SyncReason, gapFrom, gapError string) (string, error)
	// Event receives every ADDED, MODIFIED, DELETED and BOOKMARK event, in
	// order, from Follow's goroutine.
	Event func(ctx context.Context, ev Event)
}

// Follow follows one target as Stream does, but hands the watch's events to
// h and lets h list: for engines that read lists their own way. It returns
// nil when ctx is done, or an error wrapping ErrInitialContact when the
// first list or watch fails for a reason other than a server busy or
// restarting (a 403, a 404, a bad selector).
func Follow(ctx context.Context, src Watcher, cfg Config, tgt Target, warnf func(format string, args ...any), h Handler) error {
	s := &streamer{src: src, cfg: cfg, warnf: warnf, tgt: tgt, list: h.List, emit: h.Event}
	return s.run(ctx)
}

// streamer follows one target; its fields are set before run and only
// run's goroutine touches them after.
type streamer struct {
	src   Watcher
	cfg   Config
	warnf func(format string, args ...any)
	tgt   Target
	// list lists the target and returns the list's resourceVersion.
	list func(ctx context.Context, reason SyncReason, gapFrom, gapError string) (string, error)
	// emit delivers a watch event.
	emit func(ctx context.Context, ev Event)
	// wait is the current backoff, 0 after a healthy watch.
	wait time.Duration
	// ready, with RequireNames, is called once the target's initial list
	// has found every name: it waits for the other named targets' lists
	// and says whether to send the items (false: the stream is ending).
	ready func(ctx context.Context) bool
}

// namedBarrier holds the initial lists of the named targets of a Stream
// with RequireNames until every one is complete: a missing object ends
// the stream before any target's object is sent.
type namedBarrier struct{ wg sync.WaitGroup }

func newNamedBarrier(cfg Config) *namedBarrier {
	b := &namedBarrier{}
	for _, t := range cfg.Targets {
		if (&streamer{cfg: cfg, tgt: t}).requireNames() {
			b.wg.Add(1)
		}
	}
	return b
}

// join returns a target's two calls: arrive, once its initial list is
// complete or has failed (later calls do nothing), and ready (see
// streamer.ready).
func (b *namedBarrier) join() (arrive func(), ready func(context.Context) bool) {
	arrive = sync.OnceFunc(b.wg.Done)
	return arrive, func(ctx context.Context) bool {
		arrive()
		b.wg.Wait()
		return ctx.Err() == nil
	}
}

// options are the selectors of the target's lists and watches; a target of
// one name selects it by metadata.name.
func (s *streamer) options() metav1.ListOptions {
	opts := metav1.ListOptions{LabelSelector: s.cfg.LabelSelector, FieldSelector: s.cfg.FieldSelector}
	if len(s.tgt.Names) == 1 {
		sel := "metadata.name=" + s.tgt.Names[0]
		if opts.FieldSelector != "" {
			sel += "," + opts.FieldSelector
		}
		opts.FieldSelector = sel
	}
	return opts
}

func (s *streamer) run(ctx context.Context) error {
	rv := s.cfg.Since
	if rv == "" {
		listRV, err := s.list(ctx, SyncInitial, "", "")
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if nf := (*NotFoundError)(nil); errors.As(err, &nf) {
				return err
			}
			return fmt.Errorf("%w: listing %s: %w", ErrInitialContact, s.tgt, err)
		}
		rv = listRV
	}
	contacted := s.cfg.Since == ""
	for ctx.Err() == nil {
		opts := s.options()
		opts.ResourceVersion = rv
		opts.AllowWatchBookmarks = true
		// Like client-go's reflector: end the watch now and then, so that a
		// half-dead connection is not kept forever.
		timeout := int64(300 + rand.IntN(300))
		opts.TimeoutSeconds = &timeout
		w, err := s.src.Watch(ctx, s.tgt, opts)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if isGone(err) {
				rv = s.relist(ctx, rv, err)
				continue
			}
			if !contacted && !apierrors.IsTooManyRequests(err) && !apierrors.IsServiceUnavailable(err) && !apierrors.IsInternalError(err) {
				return fmt.Errorf("%w: watching %s from resourceVersion %s: %w", ErrInitialContact, s.tgt, rv, err)
			}
			s.backoff(ctx, fmt.Sprintf("watch %s: %v; retrying from resourceVersion %s", s.tgt, short(err), rv))
			continue
		}
		contacted = true
		started := s.cfg.Now()
		newRV, n, err := s.consume(ctx, w, rv)
		w.Stop()
		rv = newRV
		if ctx.Err() != nil {
			return nil
		}
		if n > 0 || s.cfg.Now().Sub(started) > 30*time.Second {
			s.wait = 0
		}
		switch {
		case isGone(err):
			rv = s.relist(ctx, rv, err)
		case err != nil:
			s.backoff(ctx, fmt.Sprintf("watch %s: %v; resuming from resourceVersion %s", s.tgt, short(err), rv))
		case n == 0:
			// Closed without events: likely the server going away.
			s.backoff(ctx, "")
		}
	}
	return nil
}

// consume reads one watch until it ends, returning the last resourceVersion
// seen and how many events came.
func (s *streamer) consume(ctx context.Context, w watch.Interface, rv string) (string, int, error) {
	n := 0
	for {
		select {
		case <-ctx.Done():
			return rv, n, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, n, nil
			}
			n++
			switch ev.Type {
			case watch.Error:
				err := apierrors.FromObject(ev.Object)
				return rv, n, err
			case watch.Bookmark:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				if u.GetResourceVersion() == "" {
					continue
				}
				rv = u.GetResourceVersion()
				s.emit(ctx, Event{Type: Bookmark, Time: s.cfg.Now(), Resource: s.tgt.ResourceKey(), ResourceVersion: rv})
			case watch.Added, watch.Modified, watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = u.GetResourceVersion()
				if !wanted(s.tgt, u) {
					continue
				}
				prepare(s.cfg, s.tgt, u)
				s.emit(ctx, Event{Type: EventType(ev.Type), Time: s.cfg.Now(), Resource: s.tgt.ResourceKey(), Object: u})
			}
		}
	}
}

// relist lists again after a 410 Gone, retrying until it succeeds or ctx is
// done, and returns the list's resourceVersion.
func (s *streamer) relist(ctx context.Context, lastRV string, gone error) string {
	msg := ""
	var st apierrors.APIStatus
	if errors.As(gone, &st) {
		msg = st.Status().Message
	}
	s.warnf("watch %s: history after resourceVersion %s is gone (%s); relisting", s.tgt, lastRV, msg)
	for ctx.Err() == nil {
		rv, err := s.list(ctx, SyncRelist, lastRV, msg)
		if err == nil {
			return rv
		}
		if ctx.Err() != nil {
			break
		}
		s.backoff(ctx, fmt.Sprintf("relisting %s: %v", s.tgt, short(err)))
	}
	return lastRV
}

// listPages returns the list function of Stream: it lists the target page
// by page through src, sends the items as LIST events and a SYNCED event to
// out, and returns the list's resourceVersion. The items of an initial list
// are sent page by page, so that only a page or so of decoded objects is
// alive at once: if it fails, the watch ends. A relist is sent only once it
// is complete, so that a retried relist never sends an item twice.
func (s *streamer) listPages(src Source, out chan<- Event) func(context.Context, SyncReason, string, string) (string, error) {
	return func(ctx context.Context, reason SyncReason, gapFrom, gapErr string) (string, error) {
		opts := s.options()
		opts.Limit = s.cfg.ChunkSize
		var held []unstructured.Unstructured
		rv := ""
		now := s.cfg.Now()
		for {
			l, err := src.List(ctx, s.tgt, opts)
			if err != nil {
				return "", err
			}
			if rv == "" {
				rv = l.GetResourceVersion()
			}
			if reason == SyncInitial && !s.requireNames() {
				s.sendItems(ctx, out, now, reason, l.Items)
			} else {
				held = appendWanted(held, s.tgt, l.Items)
			}
			if l.GetContinue() == "" {
				break
			}
			opts.Continue = l.GetContinue()
		}
		if reason == SyncInitial && s.requireNames() {
			if err := s.checkNames(held); err != nil {
				return "", err
			}
			if s.ready != nil && !s.ready(ctx) {
				return "", ctx.Err()
			}
		}
		s.sendItems(ctx, out, now, reason, held)
		send(ctx, out, Event{Type: Synced, Time: now, Resource: s.tgt.ResourceKey(), Reason: reason, ResourceVersion: rv, GapFrom: gapFrom, GapError: gapErr})
		return rv, nil
	}
}

// requireNames says whether the initial list must find each of the
// target's names (Config.RequireNames); its items are then held until the
// list is complete.
func (s *streamer) requireNames() bool {
	return s.cfg.RequireNames && s.cfg.Since == "" && len(s.tgt.Names) > 0
}

// checkNames returns a *NotFoundError naming the target's names that
// items lacks, or nil.
func (s *streamer) checkNames(items []unstructured.Unstructured) error {
	var missing []string
	for _, n := range s.tgt.Names {
		if !slices.ContainsFunc(items, func(u unstructured.Unstructured) bool { return u.GetName() == n }) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &NotFoundError{Resource: s.tgt.Resource.GroupResource(), Namespace: s.tgt.Namespace, Names: missing,
		Selected: s.cfg.LabelSelector != "" || s.cfg.FieldSelector != ""}
}

// appendWanted appends the items that are among the target's names.
func appendWanted(held []unstructured.Unstructured, t Target, items []unstructured.Unstructured) []unstructured.Unstructured {
	for _, u := range items {
		if wanted(t, &u) {
			held = append(held, u)
		}
	}
	return held
}

// sendItems sends the wanted items as LIST events.
func (s *streamer) sendItems(ctx context.Context, out chan<- Event, now time.Time, reason SyncReason, items []unstructured.Unstructured) {
	for i := range items {
		u := &items[i]
		if !wanted(s.tgt, u) {
			continue
		}
		prepare(s.cfg, s.tgt, u)
		send(ctx, out, Event{Type: List, Time: now, Resource: s.tgt.ResourceKey(), Reason: reason, Object: u})
	}
}

// wanted says whether u is one of the target's names (a target of one name
// is selected by the server).
func wanted(t Target, u *unstructured.Unstructured) bool {
	return len(t.Names) <= 1 || slices.Contains(t.Names, u.GetName())
}

// prepare redacts Secret values unless cfg.ShowSecrets.
func prepare(cfg Config, t Target, u *unstructured.Unstructured) {
	if !cfg.ShowSecrets && t.Resource.Group == "" && t.Resource.Resource == "secrets" {
		u.Object = redact.Secret(u.Object, redact.Hash)
	}
}

func send(ctx context.Context, out chan<- Event, ev Event) {
	select {
	case out <- ev:
	case <-ctx.Done():
	}
}

// backoff waits before a retry: doubling from MinBackoff to MaxBackoff, plus
// up to 50% jitter so that many clients do not retry in step.
func (s *streamer) backoff(ctx context.Context, warning string) {
	switch {
	case s.wait == 0:
		s.wait = s.cfg.MinBackoff
	default:
		s.wait = min(2*s.wait, s.cfg.MaxBackoff)
	}
	d := s.wait + time.Duration(rand.Float64()*0.5*float64(s.wait))
	if warning != "" {
		s.warnf("%s in %s", warning, d.Round(time.Millisecond))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func isGone(err error) bool {
	return err != nil && (apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
}

// short drops the request URL from transport errors: the warning already
// names the target and the resourceVersion.
func short(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		return u.Err
	}
	return err
}
