package simulate

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/apiserver"
	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// candidate is a leader-election client: client-go's LeaderElector reduced
// to its timing. Every RetryPeriod (jittered by 1.2 while not leading) it
// reads the Lease; it takes the lease when it is free or when the holder's
// record has not changed for LeaseDuration on its own clock (observedTime),
// and the leader renews every RetryPeriod until RenewDeadline passes
// without a renewal.
type candidate struct {
	client
	// leading says whether the candidate holds the lease; crashed that it
	// died (crashAt) and does nothing more.
	leading bool
	crashed bool
	// observed is the holder and renewTime of the last record seen,
	// observedTime when it last changed.
	observed     string
	observedTime time.Duration
	// lastRenew is when the candidate last wrote the lease successfully.
	lastRenew time.Duration
}

// leaderState collects the leadership terms and crashes of a run.
type leaderState struct {
	terms   []Term
	crashes []Failover
}

const leJitter = 1.2

func (c *candidate) begin() {
	s := c.group.spec
	c.eng.at(s.Start.D(), c.tick)
	if s.Lease.CrashAt != nil {
		c.eng.at(s.Lease.CrashAt.D(), c.crash)
	}
}

// tick reads the lease and decides.
func (c *candidate) tick(context.Context) {
	if c.crashed || c.eng.now >= c.stopAt() {
		c.done = true
		return
	}
	t := c.group.target
	var got *unstructured.Unstructured
	var err error
	c.eng.request(c.rng, func(ctx context.Context) {
		got, err = c.eng.srv.Get(ctx, t.gvk, t.namespace, t.name)
		code, reason, msg := statusOf(err)
		st := Step{Actor: c.name, Verb: "GET", Target: t.String(), Code: code, Reason: reason, Message: msg, Outcome: "read"}
		if got != nil {
			st.RV = got.GetResourceVersion()
		}
		c.eng.step(st)
	}, func(context.Context) {
		if c.crashed {
			return
		}
		if err != nil && !apierrors.IsNotFound(err) {
			c.group.errors++
			c.next()
			return
		}
		c.decide(got)
	})
}

// next schedules the next tick.
func (c *candidate) next() {
	rp := c.group.spec.Lease.RetryPeriod.D()
	if c.leading {
		c.eng.at(rp, c.tick)
		return
	}
	// wait.JitterUntil(retryPeriod, 1.2): sleep in [rp, rp*2.2).
	c.eng.at(rp+time.Duration(c.rng.Float64()*leJitter*float64(rp)), c.tick)
}

// decide follows the lease record read: wait while another holder's lease
// is fresh, step down past the renew deadline, else acquire or renew.
func (c *candidate) decide(got *unstructured.Unstructured) {
	le := c.group.spec.Lease
	now := c.eng.now
	holder, renew := "", ""
	if got != nil {
		holder, _, _ = unstructured.NestedString(got.Object, "spec", "holderIdentity")
		renew, _, _ = unstructured.NestedString(got.Object, "spec", "renewTime")
	}
	if rec := holder + "|" + renew; rec != c.observed {
		c.observed = rec
		c.observedTime = now
	}
	if c.leading && holder != c.name {
		c.loseLead("lost")
	}
	if !c.leading && holder != "" && holder != c.name && c.observedTime+le.LeaseDuration.D() > now {
		c.next()
		return
	}
	if c.leading && now-c.lastRenew > le.RenewDeadline.D() {
		c.loseLead("lost")
		c.next()
		return
	}
	c.writeLease(got, holder != c.name)
}

// leaseRecord returns the Lease to write: the one read (or a new one) with
// this candidate as the holder.
func (c *candidate) leaseRecord(got *unstructured.Unstructured, acquiring bool) *unstructured.Unstructured {
	le := c.group.spec.Lease
	ts := Epoch.Add(c.eng.now).Format("2006-01-02T15:04:05.000000Z07:00")
	obj := got
	if obj == nil {
		obj = &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetGroupVersionKind(c.group.target.gvk)
		obj.SetName(c.group.target.name)
		obj.SetNamespace(c.group.target.namespace)
	} else {
		obj = obj.DeepCopy()
	}
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	if acquiring {
		trans, _, _ := unstructured.NestedInt64(obj.Object, "spec", "leaseTransitions")
		if holder, _, _ := unstructured.NestedString(obj.Object, "spec", "holderIdentity"); holder != "" {
			trans++
		}
		spec["leaseTransitions"] = trans
		spec["acquireTime"] = ts
	}
	spec["holderIdentity"] = c.name
	spec["leaseDurationSeconds"] = int64(le.LeaseDuration.D() / time.Second)
	spec["renewTime"] = ts
	obj.Object["spec"] = spec
	return obj
}

// writeLease creates or updates the lease to acquire or renew it.
func (c *candidate) writeLease(got *unstructured.Unstructured, acquiring bool) {
	obj := c.leaseRecord(got, acquiring)
	now := c.eng.now
	var werr error
	verb := "PUT"
	if got == nil {
		verb = "POST"
	}
	sent := obj.GetResourceVersion()
	c.eng.request(c.rng, func(ctx context.Context) {
		if got == nil {
			_, werr = c.eng.srv.Create(ctx, obj, apiserver.WriteOptions{FieldManager: c.manager})
		} else {
			_, werr = c.eng.srv.Update(ctx, obj, apiserver.WriteOptions{FieldManager: c.manager})
		}
		code, reason, msg := statusOf(werr)
		st := Step{Actor: c.name, Verb: verb, Target: c.group.target.String(), SentRV: sent, Code: code, Reason: reason, Message: msg, Outcome: "ok"}
		if acquiring {
			st.Note = "acquire the lease"
		} else {
			st.Note = "renew the lease"
		}
		if werr != nil {
			st.Outcome = "conflict"
		} else {
			st.RV = fmt.Sprint(c.eng.rev(ctx))
			if !c.eng.srv.LastWriteWasNoOp() {
				c.group.revisions++
			}
		}
		c.eng.step(st)
		c.eng.afterWrite()
	}, func(context.Context) {
		c.leaseWritten(werr, now, acquiring)
	})
}

// leaseWritten is the candidate receiving the answer to its lease write,
// sent at virtual time sentAt.
func (c *candidate) leaseWritten(werr error, sentAt time.Duration, acquiring bool) {
	if c.crashed {
		return
	}
	// Each lease write is one operation of one attempt: a candidate that
	// loses does not retry, it reads again on its next tick.
	c.group.operations++
	c.group.attempts++
	if werr != nil {
		if apierrors.IsConflict(werr) || apierrors.IsAlreadyExists(werr) {
			c.group.conflicts++
		} else {
			c.group.errors++
		}
		c.next()
		return
	}
	c.group.successes++
	c.lastRenew = sentAt
	if acquiring {
		c.leading = true
		c.group.acquisitions++
		c.eng.leader.terms = append(c.eng.leader.terms, Term{Holder: c.name, From: scenario.Duration(c.eng.now), Ended: "end"})
	} else {
		c.group.renewals++
	}
	c.next()
}

func (c *candidate) loseLead(how string) {
	if !c.leading {
		return
	}
	c.leading = false
	ts := c.eng.leader.terms
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Holder == c.name && ts[i].Ended == "end" {
			ts[i].To = scenario.Duration(c.eng.now)
			ts[i].Ended = how
			break
		}
	}
	c.eng.step(Step{Actor: c.name, Verb: "LEADER", Outcome: "info", Note: "stopped leading (" + how + ")"})
}

// crash stops the candidate without releasing the lease.
func (c *candidate) crash(context.Context) {
	if c.crashed {
		return
	}
	wasLeading := c.leading
	c.loseLead("crashed")
	c.crashed = true
	c.done = true
	c.eng.step(Step{Actor: c.name, Verb: "CRASH", Outcome: "giveup", Note: "the process dies without releasing the lease"})
	if wasLeading {
		c.eng.leader.crashes = append(c.eng.leader.crashes, Failover{Crashed: c.name, CrashedAt: scenario.Duration(c.eng.now)})
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
