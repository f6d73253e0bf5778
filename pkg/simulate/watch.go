package simulate

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
)

// watcher is an informer's reflector: LIST, then WATCH from the list's
// resourceVersion; on 410 Expired, relist with resourceVersion "".
type watcher struct {
	client
	// stream is the open watch (nil while disconnected); connected says
	// whether events flow.
	stream    *apiserver.Watch
	connected bool
	// lastRV is the resourceVersion the reflector resumes from: the list's,
	// then each event's.
	lastRV int64
}

func (w *watcher) begin() {
	s := w.group.spec
	w.eng.at(s.Start.D(), w.start)
	if s.Watch.DisconnectAt != nil {
		w.eng.at(s.Watch.DisconnectAt.D(), w.disconnect)
	}
}

func (w *watcher) start(context.Context) {
	w.relist("initial list")
}

func (w *watcher) relist(why string) {
	t := w.group.target
	var list *unstructured.UnstructuredList
	var err error
	w.eng.request(w.rng, func(ctx context.Context) {
		list, err = w.eng.srv.List(ctx, t.gvk, t.namespace, apiserver.ListOptions{})
		code, reason, msg := statusOf(err)
		st := Step{Actor: w.name, Verb: "LIST", Target: t.String(), Code: code, Reason: reason, Message: msg, Outcome: "read", Note: why}
		if list != nil {
			st.RV = list.GetResourceVersion()
		}
		w.eng.step(st)
	}, func(context.Context) {
		w.group.lists++
		if err != nil {
			w.group.errors++
			return
		}
		w.lastRV, _ = strconv.ParseInt(list.GetResourceVersion(), 10, 64)
		w.group.lastRV = w.lastRV
		w.openWatch()
	})
}

// reconnect opens the watch again after a disconnect.
func (w *watcher) reconnect(context.Context) { w.openWatch() }

// openWatch watches from lastRV.
func (w *watcher) openWatch() {
	t := w.group.target
	rv := strconv.FormatInt(w.lastRV, 10)
	w.eng.request(w.rng, func(ctx context.Context) {
		stream, err := w.eng.srv.Watch(ctx, t.gvk, t.namespace, rv)
		code, reason, msg := statusOf(err)
		w.eng.step(Step{Actor: w.name, Verb: "WATCH", Target: t.String(), SentRV: rv, Code: code, Reason: reason, Message: msg, Outcome: "read"})
		if err != nil {
			w.group.errors++
			return
		}
		w.stream = stream
		w.connected = true
		w.poll()
	}, func(context.Context) {})
}

func (w *watcher) disconnect(context.Context) {
	if w.stream != nil {
		w.stream.Stop()
		w.stream = nil
	}
	w.connected = false
	d := w.group.spec.Watch.Downtime.D()
	w.eng.step(Step{Actor: w.name, Verb: "DISCONNECT", Outcome: "info",
		Note: fmt.Sprintf("the watch is cut at resourceVersion %d; the client reconnects in %s", w.lastRV, fmtDur(d))})
	w.eng.at(d, w.reconnect)
}

// poll takes the events the watch has for the informer.
func (w *watcher) poll() {
	if !w.connected || w.stream == nil {
		return
	}
	for _, ev := range w.stream.Next() {
		if ev.Type == watch.Error {
			w.expire(ev)
			return
		}
		w.group.events++
		if o, ok := ev.Object.(*unstructured.Unstructured); ok {
			if rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64); err == nil {
				w.lastRV = rv
				w.group.lastRV = rv
			}
		}
	}
}

// expire handles a watch error event (410 Expired): the reflector relists.
func (w *watcher) expire(ev watch.Event) {
	st, _ := ev.Object.(*metav1.Status)
	w.group.expired++
	msg := ""
	if st != nil {
		msg = st.Message
	}
	w.eng.step(Step{Actor: w.name, Verb: "WATCH", SentRV: strconv.FormatInt(w.lastRV, 10), Code: 410, Reason: string(metav1.StatusReasonExpired), Message: msg, Outcome: "conflict",
		Note: "the watch is too old: the reflector relists"})
	w.stream.Stop()
	w.stream = nil
	w.connected = false
	w.eng.at(0, func(context.Context) { w.relist("relist after 410 Gone") })
}
