package simulate

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
)

// watchState is an informer's reflector: LIST, then WATCH from the list's
// resourceVersion; on 410 Expired, relist with resourceVersion "".
type watchState struct {
	w         *apiserver.Watch
	connected bool
	lastRV    int64
}

func (a *actor) watchStart() {
	a.relist("initial list")
}

func (a *actor) relist(why string) {
	t := a.g.target
	var list *unstructured.UnstructuredList
	var err error
	a.e.request(a.rng, func() {
		list, err = a.e.srv.List(a.e.ctx, t.gvk, t.namespace, apiserver.ListOptions{})
		code, reason, msg := statusOf(err)
		st := Step{Actor: a.name, Verb: "LIST", Target: t.String(), Code: code, Reason: reason, Message: msg, Outcome: "read", Note: why}
		if list != nil {
			st.RV = list.GetResourceVersion()
		}
		a.e.step(st)
	}, func() {
		a.g.lists++
		if err != nil {
			a.g.errors++
			return
		}
		a.w.lastRV, _ = strconv.ParseInt(list.GetResourceVersion(), 10, 64)
		a.g.lastRV = a.w.lastRV
		a.startWatch()
	})
}

func (a *actor) startWatch() {
	t := a.g.target
	rv := strconv.FormatInt(a.w.lastRV, 10)
	a.e.request(a.rng, func() {
		w, err := a.e.srv.Watch(a.e.ctx, t.gvk, t.namespace, rv)
		code, reason, msg := statusOf(err)
		a.e.step(Step{Actor: a.name, Verb: "WATCH", Target: t.String(), SentRV: rv, Code: code, Reason: reason, Message: msg, Outcome: "read"})
		if err != nil {
			a.g.errors++
			return
		}
		a.w.w = w
		a.w.connected = true
		a.pollWatch()
	}, func() {})
}

func (a *actor) disconnect() {
	if a.w.w != nil {
		a.w.w.Stop()
		a.w.w = nil
	}
	a.w.connected = false
	d := a.g.spec.Watch.Downtime.D()
	a.e.step(Step{Actor: a.name, Verb: "DISCONNECT", Outcome: "info",
		Note: fmt.Sprintf("the watch is cut at resourceVersion %d; the client reconnects in %s", a.w.lastRV, fmtDur(d))})
	a.e.at(d, a.startWatch)
}

// pollWatch takes the events the watch has for the informer.
func (a *actor) pollWatch() {
	if !a.w.connected || a.w.w == nil {
		return
	}
	for _, ev := range a.w.w.Next() {
		if ev.Type == watch.Error {
			st, _ := ev.Object.(*metav1.Status)
			a.g.expired++
			msg := ""
			if st != nil {
				msg = st.Message
			}
			a.e.step(Step{Actor: a.name, Verb: "WATCH", SentRV: strconv.FormatInt(a.w.lastRV, 10), Code: 410, Reason: string(metav1.StatusReasonExpired), Message: msg, Outcome: "conflict",
				Note: "the watch is too old: the reflector relists"})
			a.w.w.Stop()
			a.w.w = nil
			a.w.connected = false
			a.e.at(0, func() { a.relist("relist after 410 Gone") })
			return
		}
		a.g.events++
		if o, ok := ev.Object.(*unstructured.Unstructured); ok {
			if rv, err := strconv.ParseInt(o.GetResourceVersion(), 10, 64); err == nil {
				a.w.lastRV = rv
				a.g.lastRV = rv
			}
		}
	}
	_ = apierrors.IsGone
}
