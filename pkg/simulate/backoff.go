package simulate

import (
	"math/rand/v2"
	"time"

	"k8s.io/client-go/util/retry"

	"github.com/kubectl-rv/kubectl-rv/pkg/simulate/scenario"
)

// backoff is wait.Backoff as retry.RetryOnConflict uses it, with the jitter
// drawn from the actor's seeded source instead of the global one, so runs
// are reproducible. steps counts calls: no sleep after the last.
type backoff struct {
	total    int
	left     int
	duration time.Duration
	factor   float64
	jitter   float64
	cap      time.Duration
}

func newBackoff(r scenario.Retry) backoff {
	switch r.Policy {
	case scenario.RetryDefaultRetry:
		b := retry.DefaultRetry
		return backoff{total: b.Steps, left: b.Steps, duration: b.Duration, factor: b.Factor, jitter: b.Jitter, cap: b.Cap}
	case scenario.RetryDefaultBackoff:
		b := retry.DefaultBackoff
		return backoff{total: b.Steps, left: b.Steps, duration: b.Duration, factor: b.Factor, jitter: b.Jitter, cap: b.Cap}
	case scenario.RetryCustom:
		b := r.Backoff
		return backoff{total: b.Steps, left: b.Steps, duration: b.Duration.D(), factor: b.Factor, jitter: b.Jitter, cap: b.Cap.D()}
	}
	return backoff{total: 1, left: 1}
}

func (b *backoff) steps() int { return b.total }

// step consumes one call and returns the sleep before the next one; ok is
// false when no call is left (wait.ExponentialBackoff: it breaks when
// Steps == 1, before sleeping).
func (b *backoff) step(rng *rand.Rand) (time.Duration, bool) {
	if b.left <= 1 {
		return 0, false
	}
	b.left--
	// wait.Backoff.Step: the sleep is the current duration (jittered), the
	// next one is multiplied by factor and capped.
	d := b.duration
	if b.factor != 0 {
		next := time.Duration(float64(b.duration) * b.factor)
		if b.cap > 0 && next > b.cap {
			next = b.cap
			b.left = 1
		}
		b.duration = next
	}
	if b.jitter > 0 {
		d += time.Duration(rng.Float64() * b.jitter * float64(d)).Round(time.Microsecond)
	}
	return d, true
}
