package leases

import (
	"slices"
	"time"
)

// RingSize is how many of a lock's latest renew intervals the median and
// p99 are computed over: 4 bytes each, so that 10,000 Leases watched for
// hours keep at most 10 MB of intervals.
const RingSize = 256

// renewStats is what the live tracker and the history keep of one lock's
// renewals.
type renewStats struct {
	count, late, expiries, takeovers, conflicts int
	minSlack                                    time.Duration
	hasSlack                                    bool
	// ring holds the latest intervals in milliseconds; next is where the
	// next one goes once the ring is full.
	ring []int32
	next int
}

// renewal counts one renewal after interval, for a lease of duration d,
// and says whether it was late (slack under a third of d) or came after
// the lease had expired (negative slack).
func (s *renewStats) renewal(interval, d time.Duration) (late, expired bool) {
	s.count++
	ms := int32(min(interval.Milliseconds(), 1<<31-1))
	if len(s.ring) < RingSize {
		s.ring = append(s.ring, ms)
	} else {
		s.ring[s.next] = ms
		s.next = (s.next + 1) % RingSize
	}
	slack := d - interval
	if !s.hasSlack || slack < s.minSlack {
		s.minSlack, s.hasSlack = slack, true
	}
	switch {
	case slack < 0:
		s.expiries++
		return false, true
	case 3*slack < d:
		s.late++
		return true, false
	}
	return false, false
}

// quantile returns the nearest-rank q-quantile of sorted ms values.
func quantile(sorted []int32, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return time.Duration(sorted[i]) * time.Millisecond
}

func dur(d time.Duration) *Duration { x := Duration(d); return &x }

// summary returns the Renewals of the stats.
func (s *renewStats) summary() *Renewals {
	r := &Renewals{Count: s.count, Late: s.late, Expiries: s.expiries, Takeovers: s.takeovers, Conflicts: s.conflicts}
	if s.hasSlack {
		r.MinSlack = dur(s.minSlack)
	}
	if len(s.ring) > 0 {
		sorted := slices.Clone(s.ring)
		slices.Sort(sorted)
		r.IntervalMedian = dur(quantile(sorted, 0.5))
		r.IntervalP99 = dur(quantile(sorted, 0.99))
	}
	return r
}
