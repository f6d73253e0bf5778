package doctor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkLatency times consistent lists (resourceVersion "") against cached
// ones ("0"), one of each in turn, one item each so that the size of the
// collection does not count.
func (p *prober) checkLatency(ctx context.Context) Check {
	n := max(p.cfg.LatencySamples, 1)
	consistent := make([]time.Duration, 0, n)
	cached := make([]time.Duration, 0, n)
	for range n {
		c := list(ctx, p.ri, metav1.ListOptions{Limit: 1})
		a := list(ctx, p.ri, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
		if c.err != nil || a.err != nil {
			return skip(ConsistentLatency, fmt.Sprintf("a timed list failed: %v", firstErr(c.err, a.err)))
		}
		consistent, cached = append(consistent, c.elapsed), append(cached, a.elapsed)
	}
	mc, ma := median(consistent), median(cached)
	values := []string{"samples", strconv.Itoa(n), "consistentMs", msValue(mc), "cachedMs", msValue(ma)}
	if mc-ma >= p.cfg.SlowConsistentList {
		return fail(ConsistentLatency, fmt.Sprintf("consistent lists take %s, cached ones %s (medians of %d): the consistent read waits, as on a backend without progress notifications", ms(mc), ms(ma), n), values...)
	}
	return pass(ConsistentLatency, fmt.Sprintf("consistent %s, cached %s (medians of %d)", ms(mc), ms(ma), n), values...)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
