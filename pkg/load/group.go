package load

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// group is what the top table counts of one group.
type group struct {
	// key are its values of Config.By, in order.
	key         []string
	count       int
	first, last time.Time
	latency     latency
	statuses    []StatusCount
	objects     spaceSaving
}

func (g *group) add(e *audit.Event, obj func() []byte, oh audit.KeyHash, objects bool) {
	g.count++
	if e.RequestReceived.Before(g.first) {
		g.first = e.RequestReceived
	}
	if e.RequestReceived.After(g.last) {
		g.last = e.RequestReceived
	}
	g.latency.add(e.StageTimestamp.Sub(e.RequestReceived))
	i := slices.IndexFunc(g.statuses, func(s StatusCount) bool { return s.Code == e.Code })
	if i < 0 {
		g.statuses = append(g.statuses, StatusCount{Code: e.Code})
		i = len(g.statuses) - 1
	}
	g.statuses[i].Count++
	if objects {
		g.objects.add(obj, oh)
	}
}

// topObjects is how many of a group's busiest objects the report names.
const topObjects = 3

// row is the group's row.
func (g *group) row(by []Key, total int, minutes float64) Group {
	r := Group{Key: map[Key]string{}, Count: g.count, First: g.first, Last: g.last,
		P50Ms: ms(g.latency.quantile(0.50)), P99Ms: ms(g.latency.quantile(0.99))}
	for i, v := range g.key {
		r.Key[by[i]] = v
	}
	if total > 0 {
		r.Share = float64(g.count) / float64(total)
	}
	if minutes > 0 {
		r.PerMinute = float64(g.count) / minutes
	}
	r.Statuses = slices.Clone(g.statuses)
	slices.SortFunc(r.Statuses, func(a, b StatusCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code))
	})
	r.Objects = g.objects.top(topObjects)
	return r
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*1000) / 1000
}

// exactLatencies is how many latencies a group keeps as they are before
// it counts them in a histogram.
const exactLatencies = 16

// latency keeps a group's latencies: exactly while they are few, then in
// buckets of an eighth of a doubling (quantiles within 5%), of which it
// holds only the range seen (buckets[0] is bucket lo).
type latency struct {
	exact   []time.Duration
	buckets []uint32
	lo, n   int
}

// bucketsPerDoubling and maxBucket size the histogram: from 1µs to 2^40µs.
const (
	bucketsPerDoubling = 8
	maxBucket          = 40 * bucketsPerDoubling
)

func (l *latency) add(d time.Duration) {
	l.n++
	if l.buckets == nil && len(l.exact) < exactLatencies {
		l.exact = append(l.exact, max(d, 0))
		return
	}
	for _, x := range l.exact {
		l.count(bucketOf(x))
	}
	l.exact = nil
	l.count(bucketOf(d))
}

// count adds one to bucket i, growing the range held to take it.
func (l *latency) count(i int) {
	switch {
	case l.buckets == nil:
		l.lo, l.buckets = i, make([]uint32, 1, 8)
	case i < l.lo:
		l.buckets = append(make([]uint32, l.lo-i, l.lo-i+len(l.buckets)), l.buckets...)
		l.lo = i
	case i-l.lo >= len(l.buckets):
		l.buckets = append(l.buckets, make([]uint32, i-l.lo+1-len(l.buckets))...)
	}
	l.buckets[i-l.lo]++
}

func bucketOf(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	return min(int(math.Log2(us)*bucketsPerDoubling)+1, maxBucket)
}

// bucketValue is the middle of bucket i, on a log scale.
func bucketValue(i int) time.Duration {
	if i == 0 {
		return 0
	}
	return time.Duration(math.Exp2((float64(i)-0.5)/bucketsPerDoubling) * float64(time.Microsecond))
}

// quantile is the q quantile (nearest rank) of the latencies.
func (l *latency) quantile(q float64) time.Duration {
	if l.n == 0 {
		return 0
	}
	rank := max(int(math.Ceil(q*float64(l.n))), 1)
	if l.buckets == nil {
		s := slices.Clone(l.exact)
		slices.Sort(s)
		return s[rank-1]
	}
	seen := 0
	for i, c := range l.buckets {
		if seen += int(c); seen >= rank {
			return bucketValue(l.lo + i)
		}
	}
	return bucketValue(l.lo + len(l.buckets) - 1)
}

// summaryObjects is how many objects a group's Space-Saving summary holds.
const summaryObjects = 32

// spaceSaving finds a group's busiest objects in bounded memory
// (Metwally, Agrawal and El Abbadi's Space-Saving): while it holds fewer
// objects than its size the counts are exact; after, a new object takes
// the place of the least counted one and inherits its count as error, so
// an object counted more than total/size times is always held.
// Objects are compared by their KeyHash (hashes[i] is entries[i]'s).
type spaceSaving struct {
	entries []ObjectCount
	hashes  []audit.KeyHash
}

func (s *spaceSaving) add(obj func() []byte, h audit.KeyHash) {
	if i := slices.Index(s.hashes, h); i >= 0 {
		s.entries[i].Count++
		return
	}
	if len(s.entries) < summaryObjects {
		s.entries = append(s.entries, ObjectCount{Object: string(obj()), Count: 1})
		s.hashes = append(s.hashes, h)
		return
	}
	least := 0
	for i, e := range s.entries {
		if e.Count < s.entries[least].Count {
			least = i
		}
	}
	m := s.entries[least].Count
	s.entries[least] = ObjectCount{Object: string(obj()), Count: m + 1, Error: m}
	s.hashes[least] = h
}

// top are at most n objects, the most surely counted first, leaving out
// those that may have been counted fewer than twice: in a group spread
// over more objects than the summary holds, they tell nothing.
func (s *spaceSaving) top(n int) []ObjectCount {
	var out []ObjectCount
	for _, e := range s.entries {
		if e.Count-e.Error >= 2 || e.Error == 0 {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b ObjectCount) int {
		return cmp.Or(cmp.Compare(b.Count-b.Error, a.Count-a.Error), cmp.Compare(b.Count, a.Count), strings.Compare(a.Object, b.Object))
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
