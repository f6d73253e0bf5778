package apiserver

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-rv/kubectl-rv/pkg/mvcc"
)

// Watch is one watch request. It is pull-based, like the store's watcher:
// the simulator calls Next when the watching actor gets to run.
type Watch struct {
	w       mvcc.Watcher
	pending []watch.Event
}

// Watch starts a watch of gvk in namespace ("" = all) from resourceVersion
// rv. rv "" or "0" first delivers an ADDED event per existing object (the
// "get state and start at most recent" semantics); rv N delivers every
// change after N, or, when N is older than the compacted history, one
// ERROR event carrying the 410 Expired status, as the watch cache does.
func (s *Server) Watch(ctx context.Context, gvk schema.GroupVersionKind, namespace, rv string) (*Watch, error) {
	t, err := s.Type(gvk)
	if err != nil {
		return nil, err
	}
	w := &Watch{}
	var from int64
	if rv == "" || rv == "0" {
		list, err := s.List(ctx, gvk, namespace, ListOptions{})
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			w.pending = append(w.pending, watch.Event{Type: watch.Added, Object: &list.Items[i]})
		}
		from, _ = strconv.ParseInt(list.GetResourceVersion(), 10, 64)
	} else {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= 0 {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %q", rv))
		}
		_, compacted, err := s.kv.Rev(ctx)
		if err != nil {
			return nil, storageError(t, "", err)
		}
		if n < compacted {
			st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", n, compacted)).ErrStatus
			w.pending = append(w.pending, watch.Event{Type: watch.Error, Object: &st})
			return w, nil
		}
		from = n
	}
	prefix := s.prefix + t.ListPrefix(namespace)
	mw, err := s.kv.Watch(ctx, prefix, mvcc.WatchOptions{End: mvcc.PrefixEnd(prefix), Rev: from + 1, PrevKV: true})
	if err != nil {
		return nil, storageError(t, "", err)
	}
	w.w = mw
	return w, nil
}

// Next returns the events delivered since the last call, oldest first.
func (w *Watch) Next() []watch.Event {
	out := w.pending
	w.pending = nil
	if w.w == nil {
		return out
	}
	for _, r := range w.w.Drain() {
		if r.CompactRevision != 0 {
			st := apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", r.CompactRevision-1, r.CompactRevision)).ErrStatus
			out = append(out, watch.Event{Type: watch.Error, Object: &st})
			w.Stop()
			return out
		}
		for _, e := range r.Events {
			out = append(out, convertEvent(e))
		}
	}
	return out
}

func convertEvent(e mvcc.Event) watch.Event {
	if e.Type == mvcc.EventDelete {
		var m map[string]any
		if e.PrevKV != nil {
			m, _ = decode(e.PrevKV.Value)
		}
		return watch.Event{Type: watch.Deleted, Object: withRV(m, e.KV.ModRevision)}
	}
	m, _ := decode(e.KV.Value)
	typ := watch.Modified
	if e.KV.Version == 1 {
		typ = watch.Added
	}
	return watch.Event{Type: typ, Object: withRV(m, e.KV.ModRevision)}
}

// Stop ends the watch.
func (w *Watch) Stop() {
	if w.w != nil {
		_ = w.w.Close()
		w.w = nil
	}
}

// Compact compacts the store at rev, as kube-apiserver's compactor does
// every --etcd-compaction-interval.
func (s *Server) Compact(ctx context.Context, rev int64) error {
	_, err := s.kv.Compact(ctx, rev)
	return err
}
