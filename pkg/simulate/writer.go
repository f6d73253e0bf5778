package simulate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"

	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// writer is a client that changes its target with the actor's method, the
// way client-go's retry.RetryOnConflict does: an operation is a read and a
// write, repeated on 409 as the retry policy allows. It has one request in
// flight at a time.
type writer struct {
	client
	// writes counts successful writes; it also picks the next value of a
	// set or insert.
	writes int

	// The operation in flight: opStart is when it began, attempt the
	// pass of the retry loop, retry what is left of the retry policy.
	opStart time.Duration
	attempt int
	retry   backoff
	// read is the object the last read returned. The writer owns its top
	// level only (see apiserver.Server.GetShared): changes copy on write.
	read *unstructured.Unstructured
	// readVectors hold, per counter on the target, the vector of the
	// state read (see counter).
	readVectors [][]int64

	// The request in flight. fetched and fetchErr are the server's
	// answer to the read until the client receives it; req is the write
	// sent; patched (a patch) or updatedRV (an update) and writeErr are
	// the server's answer to it, and consumed says whether it took a
	// revision (false for a no-op).
	fetched   *unstructured.Unstructured
	fetchErr  error
	req       writeReq
	patched   *unstructured.Unstructured
	updatedRV int64
	writeErr  error
	consumed  bool

	// Method values bound once, so scheduling allocates no closures.
	fnServeGet, fnRespondGet, fnWrite, fnServeWrite, fnRespondWrite, fnTryOnce, fnStartOp func(context.Context)
}

func newWriter(c client) *writer {
	w := &writer{client: c}
	w.fnServeGet, w.fnRespondGet, w.fnWrite = w.serveGet, w.respondGet, w.write
	w.fnServeWrite, w.fnRespondWrite, w.fnTryOnce, w.fnStartOp = w.serveWrite, w.respondWrite, w.tryOnce, w.startOp
	return w
}

func (w *writer) begin() {
	s := w.group.spec
	first := s.Start.D()
	if s.Rate > 0 {
		first += w.think()
	}
	w.eng.at(first, w.fnStartOp)
}

// think returns the pause before the next operation.
func (w *writer) think() time.Duration {
	s := w.group.spec
	if s.ThinkTime != nil {
		return s.ThinkTime.D()
	}
	return time.Duration(w.rng.ExpFloat64() / s.Rate * float64(time.Second))
}

func (w *writer) startOp(ctx context.Context) {
	s := w.group.spec
	if w.done || w.eng.now >= w.stopAt() || (s.Writes > 0 && w.writes >= s.Writes) {
		w.done = true
		return
	}
	w.group.operations++
	w.opStart = w.eng.now
	w.attempt = 0
	w.retry = newBackoff(s.Retry)
	w.tryOnce(ctx)
}

// tryOnce is one pass of the RetryOnConflict function: read, then write.
func (w *writer) tryOnce(context.Context) {
	w.attempt++
	w.eng.request(w.rng, w.fnServeGet, w.fnRespondGet)
}

// serveGet is the server side of the read.
func (w *writer) serveGet(ctx context.Context) {
	t := w.group.target
	// The writer changes what it read only through managedfields.SetPath,
	// which copies on write, so the server's cache can be shared.
	w.fetched, w.fetchErr = w.eng.srv.GetShared(ctx, t.gvk, t.namespace, t.name)
	if w.eng.trace {
		code, reason, msg := statusOf(w.fetchErr)
		st := Step{Actor: w.name, Verb: "GET", Target: w.group.ref, Code: code, Reason: reason, Message: msg, Outcome: "read"}
		if w.fetched != nil {
			st.RV = w.fetched.GetResourceVersion()
		}
		w.eng.step(st)
	}
	w.snapshot()
}

// respondGet is the client receiving the read.
func (w *writer) respondGet(context.Context) {
	if w.fetchErr != nil {
		w.group.errors++
		w.endOp(false)
		return
	}
	w.read, w.fetched = w.fetched, nil
	w.eng.at(w.group.spec.Work.D(), w.fnWrite)
}

// snapshot records, for each counter on the target, which increments the
// state just read contains.
func (w *writer) snapshot() {
	cs := w.group.onTarget
	if len(cs) == 0 {
		return
	}
	for len(w.readVectors) < len(cs) {
		w.readVectors = append(w.readVectors, nil)
	}
	w.readVectors = w.readVectors[:len(cs)]
	for i, c := range cs {
		w.readVectors[i] = append(w.readVectors[i][:0], c.vec...)
	}
}

// write sends the write request of the actor's method.
func (w *writer) write(context.Context) {
	req, err := w.buildWrite()
	if err != nil {
		w.eng.err = fmt.Errorf("%w: actor %q: %v", ErrScenario, w.name, err)
		return
	}
	w.req = req
	w.patched, w.updatedRV, w.writeErr, w.consumed = nil, 0, nil, false
	w.eng.request(w.rng, w.fnServeWrite, w.fnRespondWrite)
}

// serveWrite is the server side of the write.
func (w *writer) serveWrite(ctx context.Context) {
	s := w.group.spec
	t := w.group.target
	req := &w.req
	wo := apiserver.WriteOptions{FieldManager: w.manager}
	switch {
	case req.obj != nil:
		if s.Write() == writepath.UpdateStatus {
			wo.Subresource = "status"
		}
		w.updatedRV, w.writeErr = w.eng.srv.UpdateRV(ctx, req.obj, wo)
	default:
		w.patched, w.writeErr = w.eng.srv.Patch(ctx, t.gvk, t.namespace, t.name, req.pt, req.patch, apiserver.PatchOptions{WriteOptions: wo, Force: s.Write() == writepath.ApplyForce})
	}
	w.consumed = w.writeErr == nil && !w.eng.srv.LastWriteWasNoOp()
	switch {
	case w.writeErr == nil && w.consumed:
		w.group.revisions++
		w.commitCounters(req.carries, true)
	case w.writeErr == nil:
		w.commitCounters(req.carries, false)
	}
	if w.eng.trace {
		w.eng.step(w.writeStep())
	}
	if w.consumed {
		w.eng.afterWrite()
	}
}

// writeStep is the trace step of the write just served.
func (w *writer) writeStep() Step {
	req, werr := &w.req, w.writeErr
	code, reason, msg := statusOf(werr)
	st := Step{Actor: w.name, Verb: req.verb, Target: w.group.ref, SentRV: req.sentRV, Code: code, Reason: reason, Message: msg, Note: req.note}
	switch {
	case werr == nil && w.consumed:
		st.Outcome = "ok"
	case werr == nil:
		st.Outcome = "noop"
		st.Note = joinNote(st.Note, "no-op: the object did not change, so the resourceVersion stayed")
	case apierrors.IsConflict(werr):
		st.Outcome = "conflict"
	case apierrors.IsInvalid(werr) || code == 422:
		st.Outcome = "invalid"
	default:
		st.Outcome = "error"
	}
	if werr == nil {
		if w.patched != nil {
			st.RV = w.patched.GetResourceVersion()
		} else {
			st.RV = strconv.FormatInt(w.updatedRV, 10)
		}
	}
	return st
}

// respondWrite is the client receiving the write's answer: done, retry or
// give up.
func (w *writer) respondWrite(context.Context) {
	s := w.group.spec
	werr := w.writeErr
	w.req = writeReq{}
	w.group.attempts++
	if werr == nil {
		w.group.successes++
		if !w.consumed {
			w.group.noops++
		}
		w.writes++
		w.endOp(true)
		return
	}
	isApply := s.Write().IsApply()
	code, _, _ := statusOf(werr)
	switch {
	case apierrors.IsConflict(werr) && isApply:
		w.group.applyConflicts++
	case apierrors.IsConflict(werr):
		w.group.conflicts++
	case code == 422:
		w.group.invalid++
		w.endOp(false)
		return
	default:
		w.group.errors++
		w.endOp(false)
		return
	}
	w.retryOrGiveUp()
}

// retryOrGiveUp follows a 409: client-go's retry.RetryOnConflict retries
// 409s only, while the policy has steps left.
func (w *writer) retryOrGiveUp() {
	s := w.group.spec
	if d, ok := w.retry.step(w.rng); ok {
		if w.eng.trace {
			w.eng.step(Step{Actor: w.name, Verb: "RETRY", Outcome: "info", Note: fmt.Sprintf("conflict: retrying in %s (%s, attempt %d of %d)", fmtDur(d), s.Retry.Policy, w.attempt+1, w.retry.steps())})
		}
		w.eng.at(d, w.fnTryOnce)
		return
	}
	w.group.giveUps++
	if w.eng.trace {
		note := "gave up: no retry policy"
		if s.Retry.Policy != scenario.RetryNone {
			note = fmt.Sprintf("gave up after %d attempts (%s): RetryOnConflict returns the last 409", w.attempt, s.Retry.Policy)
		}
		w.eng.step(Step{Actor: w.name, Verb: "GIVE-UP", Outcome: "giveup", Note: note})
	}
	w.endOp(false)
}

func (w *writer) endOp(success bool) {
	g := w.group
	retries := w.attempt - 1
	for len(g.retries) <= retries {
		g.retries = append(g.retries, 0)
	}
	g.retries[retries]++
	if success {
		g.latencies = append(g.latencies, w.eng.now-w.opStart)
	}
	w.read = nil
	w.eng.at(w.think(), w.fnStartOp)
}
