package lag

import (
	"testing"
	"time"
)

// TestNotDoneStates: every state that can make an object a finding is
// explained once, with a help text and a fix, and no other is.
func TestNotDoneStates(t *testing.T) {
	seen := map[State]int{}
	for _, s := range NotDone {
		seen[s.State]++
		if s.Help == "" || s.Fix == "" {
			t.Errorf("%s: help %q, fix %q", s.State, s.Help, s.Fix)
		}
	}
	now := time.Now()
	for _, st := range []State{Current, Lagging, NeverObserved, NoGeneration, RollingOut, Paused, Stalled} {
		want := 0
		if isFinding(Item{State: st, Lag: 1, expected: true, SpecChangedAt: now}, Config{}, now) {
			want = 1
		}
		if seen[st] != want {
			t.Errorf("%s is explained %d times, want %d", st, seen[st], want)
		}
	}
}
