package audit

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Shared says why a writer (user, field manager and pod: WriterOf) may
// stand for several clients that nothing in the log tells apart. kubectl
// rv conflicts marks such a writer's row; kubectl rv leases does not take
// such a writer's writes as proof that a former leader acted.
type Shared struct {
	// UserAgents are the different user agents the writer's attempts sent
	// (sorted), when there is more than one.
	UserAgents []string `json:"userAgents,omitempty"`
	// Overlapping counts the attempts received before the writer's
	// previous attempt on the same object had completed: one client's
	// retries and reconciles of one object follow one another.
	Overlapping int `json:"overlapping,omitempty"`
	// Kubectl says the writer's attempts came from kubectl outside any
	// pod: every kubectl session of that user, on any machine, sends the
	// same user, field manager and no pod, so one more session looks the
	// same in the log.
	Kubectl bool `json:"kubectl,omitempty"`
}

// Reason says in a few words what shows the writer is shared: "2 user
// agents", "3 overlapping writes", or both.
func (s *Shared) Reason() string {
	var parts []string
	if n := len(s.UserAgents); n > 1 {
		parts = append(parts, fmt.Sprintf("%d user agents", n))
	}
	if s.Overlapping > 0 {
		parts = append(parts, fmt.Sprintf("%d overlapping writes", s.Overlapping))
	}
	if s.Kubectl {
		parts = append(parts, "kubectl outside a pod")
	}
	return strings.Join(parts, ", ")
}

// Sharing gathers one writer's evidence of being shared: the user agents
// its attempts sent (SawUserAgent) and its attempts that overlapped its
// previous one on the same object (SawOverlap, when Overlaps says so).
// The zero Sharing has seen nothing.
type Sharing struct {
	userAgents  []string
	overlapping int
	kubectl     bool
}

// SawUserAgent notes the user agent of one of the writer's attempts.
func (s *Sharing) SawUserAgent(ua string) {
	if !slices.Contains(s.userAgents, ua) {
		s.userAgents = append(s.userAgents, strings.Clone(ua))
	}
}

// SawKubectl notes an attempt kubectl sent from outside a pod: a
// person's session, which any other session of the same user matches.
// kubectl rv leases counts it as sharing; conflicts, which compares
// writers rather than proves who acted, does not.
func (s *Sharing) SawKubectl() { s.kubectl = true }

// SawOverlap counts an attempt that overlapped the writer's previous
// attempt on the same object.
func (s *Sharing) SawOverlap() { s.overlapping++ }

// Overlaps says whether an attempt received at received overlaps the
// same writer's previous attempt on the same object, which completed at
// prevCompleted: one client waits for each answer before its next write
// to an object, so an overlap shows two clients.
func Overlaps(prevCompleted, received time.Time) bool { return received.Before(prevCompleted) }

// Result is the writer's user agent when all its attempts sent the same
// one, and what shows that several clients may share it (nil when
// nothing does).
func (s *Sharing) Result() (string, *Shared) {
	var sh *Shared
	ua := ""
	if len(s.userAgents) == 1 {
		ua = s.userAgents[0]
	} else if len(s.userAgents) > 1 {
		sh = &Shared{UserAgents: slices.Sorted(slices.Values(s.userAgents))}
	}
	if s.overlapping > 0 || s.kubectl {
		if sh == nil {
			sh = &Shared{}
		}
		sh.Overlapping = s.overlapping
		sh.Kubectl = s.kubectl
	}
	return ua, sh
}
