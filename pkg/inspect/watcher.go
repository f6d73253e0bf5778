package inspect

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
)

// Target is one resource to watch.
type Target struct {
	Resource schema.GroupVersionResource
	// Namespace limits a namespaced resource to one namespace; "" means all
	// namespaces (and is required for cluster-scoped resources).
	Namespace string
	// Names, when set, limits the watch to these objects.
	Names []string
}

// ResourceKey returns the target's resource as group/version/resource, the
// form recordings use.
func (t Target) ResourceKey() string { return ResourceKey(t.Resource) }

// ResourceKey returns group/version/resource ("v1/pods" in the core group).
func ResourceKey(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Version + "/" + gvr.Resource
	}
	return gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
}

// String describes the target for people: "deployments.apps/web -n shop".
func (t Target) String() string {
	s := t.Resource.Resource
	if t.Resource.Group != "" {
		s += "." + t.Resource.Group
	}
	if len(t.Names) > 0 {
		s += "/" + strings.Join(t.Names, ",")
	}
	if t.Namespace != "" {
		s += " -n " + t.Namespace
	}
	return s
}

// Source lists and watches the objects of one target: the seam between the
// watch engine and the API server. NewDynamicSource implements it over a
// dynamic client; unit tests implement it with scripted answers.
type Source interface {
	// List returns one page of the target's objects.
	List(ctx context.Context, t Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error)
	// Watch watches the target's objects from opts.ResourceVersion.
	Watch(ctx context.Context, t Target, opts metav1.ListOptions) (watch.Interface, error)
}

// NewDynamicSource returns a Source over a dynamic client.
func NewDynamicSource(client dynamic.Interface) Source { return dynamicSource{client: client} }

type dynamicSource struct{ client dynamic.Interface }

var _ Source = dynamicSource{}

func (d dynamicSource) resource(t Target) dynamic.ResourceInterface {
	r := d.client.Resource(t.Resource)
	if t.Namespace != "" {
		return r.Namespace(t.Namespace)
	}
	return r
}

func (d dynamicSource) List(ctx context.Context, t Target, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return d.resource(t).List(ctx, opts)
}

func (d dynamicSource) Watch(ctx context.Context, t Target, opts metav1.ListOptions) (watch.Interface, error) {
	return d.resource(t).Watch(ctx, opts)
}

// StreamConfig says what a watch lists and watches, and how it retries.
// NewStreamConfig fills the defaults.
type StreamConfig struct {
	Targets       []Target
	LabelSelector string
	FieldSelector string
	// Since starts the watch at this resourceVersion without a list.
	Since string
	// ShowSecrets turns off the redaction of Secret values.
	ShowSecrets bool
	// ChunkSize is the page size of lists; 0 lists in one page.
	ChunkSize int64
	// MinBackoff and MaxBackoff bound the wait before a retry; each wait
	// doubles up to MaxBackoff, with up to 50% jitter, and falls back to
	// MinBackoff once a watch delivers events again.
	MinBackoff, MaxBackoff time.Duration
	// Now stamps received events and the recording's header.
	Now func() time.Time
}

// NewStreamConfig returns a StreamConfig with the default backoff
// (250ms to 5s) and the wall clock.
func NewStreamConfig() StreamConfig {
	return StreamConfig{ChunkSize: 500, MinBackoff: 250 * time.Millisecond, MaxBackoff: 5 * time.Second, Now: time.Now}
}

// ErrInitialContact wraps the error of the first request of a target: a
// failure there (unreachable cluster, no RBAC rights, unknown resource) ends
// the watch, while every later error is retried. A target that is only
// forbidden is left out with a warning while another target can be watched.
var ErrInitialContact = errors.New("starting the watch")

// stream lists each target (unless Since is set), then watches it from the
// list's resourceVersion with bookmarks, sending every event to out, until
// ctx is done. It never gives up after the first successful contact: a
// dropped connection or an API server restart resumes the watch from the
// last resourceVersion seen, after a backoff with jitter, so no event is
// seen twice; a 410 Gone relists and sends the relist as LIST events ended
// by a SYNCED event naming the lost range. Retries and targets left out are
// reported to warnf, from the targets' goroutines. stream returns nil when
// ctx is done, or an error wrapping ErrInitialContact.
func stream(ctx context.Context, src Source, cfg StreamConfig, warnf func(format string, args ...any), out chan<- RecordedEvent) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg sync.WaitGroup
		// mu guards first and forbidden.
		mu        sync.Mutex
		first     error
		forbidden int
	)
	for _, tgt := range cfg.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &streamer{src: src, cfg: cfg, warnf: warnf, tgt: tgt, out: out}
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

// streamer follows one target; its fields are set before run and only
// run's goroutine touches them after.
type streamer struct {
	src   Source
	cfg   StreamConfig
	warnf func(format string, args ...any)
	tgt   Target
	out   chan<- RecordedEvent
	// wait is the current backoff, 0 after a healthy watch.
	wait time.Duration
}

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
				s.send(ctx, RecordedEvent{Type: RecordBookmark, Time: s.cfg.Now(), Resource: s.tgt.ResourceKey(), ResourceVersion: rv})
			case watch.Added, watch.Modified, watch.Deleted:
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				rv = u.GetResourceVersion()
				if !s.wanted(u) {
					continue
				}
				s.prepare(u)
				s.send(ctx, RecordedEvent{Type: RecordType(ev.Type), Time: s.cfg.Now(), Resource: s.tgt.ResourceKey(), Object: u})
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

// list lists the target page by page, sends the items as LIST events and a
// SYNCED event, and returns the list's resourceVersion. The items of an
// initial list are sent page by page, so that only a page or so of decoded
// objects is alive at once: if it fails, the watch ends. A relist is sent
// only once it is complete, so that a retried relist never sends an item
// twice.
func (s *streamer) list(ctx context.Context, reason SyncReason, gapFrom, gapErr string) (string, error) {
	opts := s.options()
	opts.Limit = s.cfg.ChunkSize
	var held []unstructured.Unstructured
	rv := ""
	now := s.cfg.Now()
	for {
		l, err := s.src.List(ctx, s.tgt, opts)
		if err != nil {
			return "", err
		}
		if rv == "" {
			rv = l.GetResourceVersion()
		}
		if reason == SyncInitial {
			s.sendItems(ctx, now, reason, l.Items)
		} else {
			held = append(held, l.Items...)
		}
		if l.GetContinue() == "" {
			break
		}
		opts.Continue = l.GetContinue()
	}
	s.sendItems(ctx, now, reason, held)
	s.send(ctx, RecordedEvent{Type: RecordSynced, Time: now, Resource: s.tgt.ResourceKey(), Reason: reason, ResourceVersion: rv, GapFrom: gapFrom, GapError: gapErr})
	return rv, nil
}

// sendItems sends the wanted items as LIST events.
func (s *streamer) sendItems(ctx context.Context, now time.Time, reason SyncReason, items []unstructured.Unstructured) {
	for i := range items {
		u := &items[i]
		if !s.wanted(u) {
			continue
		}
		s.prepare(u)
		s.send(ctx, RecordedEvent{Type: RecordList, Time: now, Resource: s.tgt.ResourceKey(), Reason: reason, Object: u})
	}
}

func (s *streamer) wanted(u *unstructured.Unstructured) bool {
	return len(s.tgt.Names) <= 1 || slices.Contains(s.tgt.Names, u.GetName())
}

func (s *streamer) prepare(u *unstructured.Unstructured) {
	if !s.cfg.ShowSecrets && s.tgt.Resource.Group == "" && s.tgt.Resource.Resource == "secrets" {
		u.Object = redact.Secret(u.Object, redact.Hash)
	}
}

func (s *streamer) send(ctx context.Context, ev RecordedEvent) {
	select {
	case s.out <- ev:
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
