package leases

import (
	"fmt"
	"time"
)

// holding is what the live tracker and the history keep of one lock: who
// holds it since when, its last renewal and its renewals so far. Both feed
// it the same three things (a renewal by the holder, a new holder, a
// release), so that a takeover, a late renewal and an expiry mean the same
// in both.
type holding struct {
	ref LockRef
	// holder is the current holder, "" when released; last is the last
	// non-empty one.
	holder, last string
	duration     time.Duration
	heldSince    time.Time
	lastRenew    time.Time
	// expiredFor is the lastRenew whose expiry was recorded, so that it
	// is recorded once.
	expiredFor time.Time
	deleted    bool
	rec        Record
	stats      renewStats
	spans      []Span
	// former are the former holders' losses (history only), by writer.
	former map[string]*loss
	// expiredWindow is the current holder's writes after its lease expired
	// (history only).
	expiredWindow *Acting
	tries         map[string]int
}

// loss is when a former holder stopped being the leader, and the writes
// it made since (history only).
type loss struct {
	lastRenew, lostAt time.Time
	reason            string
	window            *Acting
}

// book holds what is found over every lock.
type book struct {
	cfg       Config
	takeovers []Takeover
	expiries  []Expiry
	acting    []*Acting
	moments   []Moment
	dropped   int
}

func (b *book) moment(m Moment) {
	if len(b.moments) >= b.cfg.MaxMoments {
		b.dropped++
		return
	}
	b.moments = append(b.moments, m)
}

// start begins a holding of h by holder at from.
func (b *book) start(h *holding, holder string, from time.Time) {
	h.holder, h.heldSince, h.lastRenew = holder, from, from
	if holder == "" {
		return
	}
	h.last = holder
	if len(h.spans) >= b.cfg.MaxSpans {
		h.spans = append(h.spans[:0], h.spans[1:]...)
	}
	h.spans = append(h.spans, Span{Holder: holder, From: from, LastRenew: from})
}

// end closes the current span at t.
func (h *holding) end(t time.Time) {
	if n := len(h.spans); n > 0 && h.spans[n-1].To == nil {
		h.spans[n-1].To = &t
	}
}

// renew counts a renewal by the holder at t.
func (b *book) renew(h *holding, t time.Time) {
	if h.lastRenew.IsZero() || !t.After(h.lastRenew) {
		h.lastRenew = t
		return
	}
	late, expired := h.stats.renewal(t.Sub(h.lastRenew), h.duration)
	switch {
	case expired:
		b.expired(h, true)
	case late:
		b.moment(Moment{Time: t, Lock: h.ref, What: MomentRenewLate, Holder: h.holder,
			Detail: fmt.Sprintf("%s after the previous renewal, %s before expiry", round(t.Sub(h.lastRenew)), round(h.duration-t.Sub(h.lastRenew)))})
	}
	h.lastRenew = t
	h.expiredWindow = nil
	if n := len(h.spans); n > 0 {
		h.spans[n-1].LastRenew = t
		h.spans[n-1].Renewals++
	}
}

// expired records, once per renewal, that h's holder let it expire.
func (b *book) expired(h *holding, renewedAfter bool) {
	if h.lastRenew.IsZero() || h.expiredFor.Equal(h.lastRenew) || h.duration <= 0 {
		return
	}
	h.expiredFor = h.lastRenew
	at := h.lastRenew.Add(h.duration)
	if !renewedAfter {
		// A renewal after the expiry is counted by renewStats.
		h.stats.expiries++
	}
	b.expiries = append(b.expiries, Expiry{Lock: h.ref, Holder: h.last, LastRenew: h.lastRenew, At: at, RenewedAfter: renewedAfter})
	b.moment(Moment{Time: at, Lock: h.ref, What: MomentExpired, Holder: h.last, Detail: "last renewed " + h.lastRenew.UTC().Format(timeFormat)})
}

// checkExpiry records the expiry of a held lock not renewed by now.
func (b *book) checkExpiry(h *holding, now time.Time) {
	if h.holder != "" && h.duration > 0 && !h.lastRenew.IsZero() && now.After(h.lastRenew.Add(h.duration)) {
		b.expired(h, false)
	}
}

// takeover records that to took h over at t.
func (b *book) takeover(h *holding, to string, t time.Time) {
	tk := Takeover{Lock: h.ref, Time: t, From: h.last, To: to, Released: h.holder == "" && h.last != ""}
	if !h.lastRenew.IsZero() && h.last != "" {
		lr := h.lastRenew
		tk.FromLastRenew = &lr
		if exp := h.lastRenew.Add(h.duration); h.duration > 0 && t.After(exp) && !tk.Released {
			tk.AfterExpiry, tk.Unheld = true, dur(t.Sub(exp))
			b.expired(h, false)
		}
	}
	if h.last != "" && h.last != to {
		h.stats.takeovers++
		b.takeovers = append(b.takeovers, tk)
		b.lost(h, t)
		detail := "from " + h.last
		if tk.AfterExpiry {
			detail += fmt.Sprintf(", %s after its lease expired", round(tk.Unheld.D()))
		}
		b.moment(Moment{Time: t, Lock: h.ref, What: MomentTakeover, Holder: to, Detail: detail})
	} else {
		b.moment(Moment{Time: t, Lock: h.ref, What: MomentAcquired, Holder: to})
	}
	h.end(t)
	if h.former != nil {
		delete(h.former, to)
	}
	b.start(h, to, t)
}

// lost remembers when h's holder stopped leading (history only): at its
// last renewal plus the lease duration, or at t when another took over
// first.
func (b *book) lost(h *holding, t time.Time) {
	if h.former == nil {
		return
	}
	l := &loss{lastRenew: h.lastRenew, lostAt: t, reason: "taken over"}
	if exp := h.lastRenew.Add(h.duration); h.duration > 0 && exp.Before(t) {
		l.lostAt, l.reason = exp, "expired"
	}
	h.former[h.last] = l
}

// release records that the holder released h at t.
func (b *book) release(h *holding, t time.Time) {
	if h.holder == "" {
		return
	}
	b.moment(Moment{Time: t, Lock: h.ref, What: MomentReleased, Holder: h.holder})
	h.end(t)
	b.lost(h, t)
	h.holder = ""
}

// lock returns the Lock of h at end: as its last record says (live), or
// as the writes said (history, audit set), with what was seen of its
// renewals.
func (b *book) lock(h *holding, end time.Time, audit bool) Lock {
	rec := h.rec
	if audit {
		rec = Record{Holder: h.holder, Duration: h.duration}
		if h.holder != "" {
			rec.Acquire, rec.Renew = h.heldSince, h.lastRenew
		}
	}
	l := lockOf(h.ref, rec, end)
	l.Deleted = h.deleted
	l.Renewals = h.stats.summary()
	if len(h.tries) > 0 {
		l.Renewals.Tries = h.tries
	}
	l.Spans = h.spans
	return l
}

// lockOf is the Lock a record shows at now.
func lockOf(ref LockRef, r Record, now time.Time) Lock {
	l := Lock{LockRef: ref, Holder: r.Holder, LeaseDuration: Duration(r.Duration), Transitions: &r.Transitions,
		Strategy: r.Strategy, PreferredHolder: r.PreferredHolder}
	if !r.Acquire.IsZero() {
		t := r.Acquire
		l.HeldSince = &t
	}
	if !r.Renew.IsZero() {
		t := r.Renew
		l.LastRenew = &t
		if r.Holder != "" {
			age := now.Sub(r.Renew)
			l.RenewAge, l.Slack = dur(age), dur(r.Duration-age)
			l.Expired = r.Duration > 0 && age > r.Duration
		}
	}
	return l
}

const timeFormat = "15:04:05.000"

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
