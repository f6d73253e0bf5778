package load

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Hot says what a hot loop is: one client sending requests of one class
// about one object at least Rate per second, on average, for at least
// For. Rates are measured over spans of For on steps of For/4, so a loop
// that lasts For and a quarter of it is always found; a finding runs from
// its first request to its last.
type Hot struct {
	// Rate is requests per second; 0 finds no loop.
	Rate float64
	For  time.Duration
}

// The classes of hot loop.
const (
	// HotRead is a client getting one object over and over.
	HotRead = "hot-read"
	// WastedWrite is a client writing one object without effect over and
	// over: creates of a name that exists, no-op updates and patches,
	// 409s.
	WastedWrite = "wasted-write"
)

// Finding is one hot loop.
type Finding struct {
	Kind string `json:"kind"`
	// Client is user[@pod] (user agent), as sent.
	Client    string `json:"client"`
	User      string `json:"user"`
	Pod       string `json:"pod,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	Object    string `json:"object"`
	// Ref is the object's parts, for a report that locates it.
	Ref       audit.ObjectRef `json:"-"`
	Count     int             `json:"count"`
	PerSecond float64         `json:"perSecond"`
	From      time.Time       `json:"from"`
	To        time.Time       `json:"to"`
}

// hotSteps is how many steps a span holds.
const hotSteps = 4

// hotPair is one client and object's counts per step: ring[s%len] is
// step s, for the steps last-hotSteps to last.
type hotPair struct {
	kind, user, pod, agent, object string
	ref                            audit.ObjectRef
	ring                           [hotSteps + 1]int
	// firstAt is the receive time of each step's first request, lastAt
	// of the pair's last request (Unix nanoseconds).
	firstAt [hotSteps + 1]int64
	lastAt  int64
	last    int64
	// open is the loop being found, if any.
	open *Finding
}

// hotTracker finds hot loops as events come, in bounded memory: a pair
// idle for a span is finished and forgotten.
type hotTracker struct {
	cfg     Hot
	step    time.Duration
	pairs   map[hotKey]*hotPair
	found   []Finding
	now     int64
	sinceGC int
}

// hotKey names a pair by its class and the KeyHashes of its client (user,
// pod, user agent) and object.
type hotKey struct {
	read           bool
	client, object audit.KeyHash
}

func newHotTracker(cfg Hot) *hotTracker {
	if cfg.Rate <= 0 || cfg.For <= 0 {
		return nil
	}
	return &hotTracker{cfg: cfg, step: max(cfg.For/hotSteps, time.Millisecond), pairs: map[hotKey]*hotPair{}}
}

// add counts e, about object obj (of KeyHash oh); wasted says it was a
// wasted write.
func (h *hotTracker) add(e *audit.Event, obj func() []byte, oh audit.KeyHash, wasted bool) {
	if h == nil || e.ObjectRef.Name == "" {
		return
	}
	kind := ""
	switch {
	case e.Verb == "get":
		kind = HotRead
	case wasted:
		kind = WastedWrite
	default:
		return
	}
	s := e.RequestReceived.UnixNano() / int64(h.step)
	h.now = max(h.now, s)
	k := hotKey{read: kind == HotRead, client: e.ClientHash(), object: oh}
	p := h.pairs[k]
	switch {
	case p == nil:
		// Named at its second request: most pairs have one, and a loop
		// lasts from one request to another.
		p = &hotPair{kind: kind, last: s}
		h.pairs[k] = p
	case p.object == "":
		p.user, p.pod, p.agent, p.object = strings.Clone(e.Username), strings.Clone(e.PodName), strings.Clone(e.UserAgent), string(obj())
		r := &e.ObjectRef
		p.ref = audit.ObjectRef{Resource: strings.Clone(r.Resource), APIGroup: strings.Clone(r.APIGroup),
			Namespace: strings.Clone(r.Namespace), Name: strings.Clone(r.Name)}
	}
	h.advance(p, s)
	if s > p.last-hotSteps {
		at := e.RequestReceived.UnixNano()
		if i := s % (hotSteps + 1); p.ring[i] == 0 || at < p.firstAt[i] {
			p.firstAt[i] = at
		}
		p.ring[s%(hotSteps+1)]++
		p.lastAt = max(p.lastAt, at)
	}
	// Swept every as many events as there are pairs (at least 65,536):
	// a sweep's cost, a step per pair, is spread over those events.
	if h.sinceGC++; h.sinceGC >= max(1<<16, len(h.pairs)) {
		h.sinceGC = 0
		h.forget()
	}
}

// advance moves p's last step to s, judging each span that ends before s.
func (h *hotTracker) advance(p *hotPair, s int64) {
	for p.last < s {
		h.judge(p)
		p.last++
		p.ring[p.last%(hotSteps+1)] = 0
		if p.open == nil && s-p.last > hotSteps && h.idle(p) {
			// Nothing counted in between: skip to s.
			p.last = s
			p.ring = [hotSteps + 1]int{}
		}
	}
}

func (h *hotTracker) idle(p *hotPair) bool {
	for _, c := range p.ring {
		if c != 0 {
			return false
		}
	}
	return true
}

// judge looks at the span of the hotSteps steps that end at p.last.
func (h *hotTracker) judge(p *hotPair) {
	n := 0
	for i := range int64(hotSteps) {
		n += p.ring[(p.last-i)%(hotSteps+1)]
	}
	if float64(n) < h.cfg.Rate*(time.Duration(hotSteps)*h.step).Seconds() {
		h.close(p)
		return
	}
	if p.open == nil {
		p.open = &Finding{Kind: p.kind, Count: n, From: time.Unix(0, p.spanFirst()).UTC()}
	} else {
		p.open.Count += p.ring[p.last%(hotSteps+1)]
	}
	p.open.To = time.Unix(0, p.lastAt).UTC()
}

// spanFirst is the receive time of the first request in the span that
// ends at p.last.
func (p *hotPair) spanFirst() int64 {
	for i := int64(hotSteps - 1); i >= 0; i-- {
		if j := (p.last - i) % (hotSteps + 1); p.ring[j] > 0 {
			return p.firstAt[j]
		}
	}
	return p.lastAt
}

// close ends p's loop, keeping it when it lasted at least For.
func (h *hotTracker) close(p *hotPair) {
	f := p.open
	p.open = nil
	if f == nil || f.To.Sub(f.From) < h.cfg.For {
		return
	}
	f.PerSecond = float64(f.Count) / f.To.Sub(f.From).Seconds()
	// Named now: a loop lasts two requests at least, and p is named at
	// its second.
	f.User, f.Pod, f.UserAgent, f.Object, f.Ref, f.Client = p.user, p.pod, p.agent, p.object, p.ref, clientName(p.user, p.pod, p.agent)
	h.found = append(h.found, *f)
}

func clientName(user, pod, agent string) string {
	s := user
	if pod != "" {
		s += "@" + pod
	}
	if agent != "" {
		s += " (" + agent + ")"
	}
	return s
}

// forget finishes the pairs idle for a span and drops them.
func (h *hotTracker) forget() {
	for k, p := range h.pairs {
		if p.last < h.now-hotSteps {
			h.advance(p, p.last+hotSteps+1)
			h.close(p)
			delete(h.pairs, k)
		}
	}
}

// finish finishes every pair and returns the loops, the longest first.
func (h *hotTracker) finish() []Finding {
	if h == nil {
		return nil
	}
	for _, p := range h.pairs {
		h.advance(p, p.last+hotSteps)
		h.close(p)
	}
	h.pairs = nil
	slices.SortFunc(h.found, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Client, b.Client), strings.Compare(a.Object, b.Object))
	})
	return h.found
}
