package simulate

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// leaderCandidate is client-go's LeaderElector reduced to its timing: every
// RetryPeriod (jittered by 1.2 while not leading) it reads the Lease; it
// takes the lease when it is free or when the holder's record has not
// changed for LeaseDuration on its own clock (observedTime), and the leader
// renews every RetryPeriod until RenewDeadline passes without a renewal.
type leaderCandidate struct {
	leading      bool
	crashed      bool
	observed     string // holder + renewTime of the last record seen
	observedTime time.Duration
	lastRenew    time.Duration
}

type leaderState struct {
	terms   []Term
	crashes []Failover
}

const leJitter = 1.2

func (a *actor) leTick() {
	if a.le.crashed || a.e.now >= a.stopAt() {
		a.done = true
		return
	}
	t := a.g.target
	var got *unstructured.Unstructured
	var err error
	a.e.request(a.rng, func() {
		got, err = a.e.srv.Get(a.e.ctx, t.gvk, t.namespace, t.name)
		code, reason, msg := statusOf(err)
		st := Step{Actor: a.name, Verb: "GET", Target: t.String(), Code: code, Reason: reason, Message: msg, Outcome: "read"}
		if got != nil {
			st.RV = got.GetResourceVersion()
		}
		a.e.step(st)
	}, func() {
		if a.le.crashed {
			return
		}
		if err != nil && !apierrors.IsNotFound(err) {
			a.g.errors++
			a.leNext()
			return
		}
		a.leDecide(got)
	})
}

func (a *actor) leNext() {
	rp := a.g.spec.Lease.RetryPeriod.D()
	if a.le.leading {
		a.e.at(rp, a.leTick)
		return
	}
	// wait.JitterUntil(retryPeriod, 1.2): sleep in [rp, rp*2.2).
	a.e.at(rp+time.Duration(a.rng.Float64()*leJitter*float64(rp)), a.leTick)
}

func (a *actor) leDecide(got *unstructured.Unstructured) {
	le := a.g.spec.Lease
	now := a.e.now
	holder, renew := "", ""
	if got != nil {
		holder, _, _ = unstructured.NestedString(got.Object, "spec", "holderIdentity")
		renew, _, _ = unstructured.NestedString(got.Object, "spec", "renewTime")
	}
	if rec := holder + "|" + renew; rec != a.le.observed {
		a.le.observed = rec
		a.le.observedTime = now
	}
	if a.le.leading && holder != a.name {
		a.loseLead("lost")
	}
	if !a.le.leading && holder != "" && holder != a.name && a.le.observedTime+le.LeaseDuration.D() > now {
		a.leNext()
		return
	}
	if a.le.leading && now-a.le.lastRenew > le.RenewDeadline.D() {
		a.loseLead("lost")
		a.leNext()
		return
	}
	obj := got
	ts := Epoch.Add(now).Format("2006-01-02T15:04:05.000000Z07:00")
	if obj == nil {
		obj = &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetGroupVersionKind(a.g.target.gvk)
		obj.SetName(a.g.target.name)
		obj.SetNamespace(a.g.target.namespace)
	} else {
		obj = obj.DeepCopy()
	}
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	acquiring := holder != a.name
	if acquiring {
		trans, _, _ := unstructured.NestedInt64(obj.Object, "spec", "leaseTransitions")
		if holder != "" {
			trans++
		}
		spec["leaseTransitions"] = trans
		spec["acquireTime"] = ts
	}
	spec["holderIdentity"] = a.name
	spec["leaseDurationSeconds"] = int64(le.LeaseDuration.D() / time.Second)
	spec["renewTime"] = ts
	obj.Object["spec"] = spec
	var werr error
	verb := "PUT"
	if got == nil {
		verb = "POST"
	}
	sent := obj.GetResourceVersion()
	a.e.request(a.rng, func() {
		if got == nil {
			_, werr = a.e.srv.Create(a.e.ctx, obj, apiserver.WriteOptions{FieldManager: a.manager})
		} else {
			_, werr = a.e.srv.Update(a.e.ctx, obj, apiserver.WriteOptions{FieldManager: a.manager})
		}
		code, reason, msg := statusOf(werr)
		st := Step{Actor: a.name, Verb: verb, Target: a.g.target.String(), SentRV: sent, Code: code, Reason: reason, Message: msg, Outcome: "ok"}
		if acquiring {
			st.Note = "acquire the lease"
		} else {
			st.Note = "renew the lease"
		}
		if werr != nil {
			st.Outcome = "conflict"
		} else {
			st.RV = fmt.Sprint(a.e.rev())
			if !a.e.srv.LastWriteWasNoOp() {
				a.g.revisions++
			}
		}
		a.e.step(st)
		a.e.afterWrite()
	}, func() {
		if a.le.crashed {
			return
		}
		a.g.attempts++
		if werr != nil {
			if apierrors.IsConflict(werr) || apierrors.IsAlreadyExists(werr) {
				a.g.conflicts++
			} else {
				a.g.errors++
			}
			a.leNext()
			return
		}
		a.g.successes++
		a.le.lastRenew = now
		if acquiring {
			a.le.leading = true
			a.g.acquisitions++
			a.e.leader.terms = append(a.e.leader.terms, Term{Holder: a.name, From: scenario.Duration(a.e.now), Ended: "end"})
		} else {
			a.g.renewals++
		}
		a.leNext()
	})
}

func (a *actor) loseLead(how string) {
	if !a.le.leading {
		return
	}
	a.le.leading = false
	ts := a.e.leader.terms
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Holder == a.name && ts[i].Ended == "end" {
			ts[i].To = scenario.Duration(a.e.now)
			ts[i].Ended = how
			break
		}
	}
	a.e.step(Step{Actor: a.name, Verb: "LEADER", Outcome: "info", Note: "stopped leading (" + how + ")"})
}

// crash stops the candidate without releasing the lease.
func (a *actor) crash() {
	if a.le.crashed {
		return
	}
	wasLeading := a.le.leading
	a.loseLead("crashed")
	a.le.crashed = true
	a.done = true
	a.e.step(Step{Actor: a.name, Verb: "CRASH", Outcome: "giveup", Note: "the process dies without releasing the lease"})
	if wasLeading {
		a.e.leader.crashes = append(a.e.leader.crashes, Failover{Crashed: a.name, CrashedAt: scenario.Duration(a.e.now)})
	}
}

func (l *leaderState) report(e *engine) *Leadership {
	out := &Leadership{}
	for _, t := range l.terms {
		if t.Ended == "end" {
			t.To = scenario.Duration(e.now)
		}
		out.Terms = append(out.Terms, t)
	}
	for _, f := range l.crashes {
		for _, t := range l.terms {
			if t.From > f.CrashedAt && t.Holder != f.Crashed {
				f.NewLeader, f.AcquiredAt, f.Gap = t.Holder, t.From, t.From-f.CrashedAt
				break
			}
		}
		out.Failovers = append(out.Failovers, f)
	}
	return out
}
