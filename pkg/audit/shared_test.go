package audit

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSharing: one user agent and no overlap is one client; a second
// user agent or an overlapping attempt shows several, and Reason says
// which.
func TestSharing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		agents   []string
		overlaps int
		wantUA   string
		want     *Shared
		reason   string
	}{
		{name: "nothing seen"},
		{name: "one user agent", agents: []string{"a/v1", "a/v1"}, wantUA: "a/v1"},
		{name: "two user agents", agents: []string{"b/v2", "a/v1", "b/v2"}, want: &Shared{UserAgents: []string{"a/v1", "b/v2"}}, reason: "2 user agents"},
		{name: "overlapping", agents: []string{"a/v1"}, overlaps: 3, wantUA: "a/v1", want: &Shared{Overlapping: 3}, reason: "3 overlapping writes"},
		{name: "both", agents: []string{"a/v1", "b/v2"}, overlaps: 1, want: &Shared{UserAgents: []string{"a/v1", "b/v2"}, Overlapping: 1}, reason: "2 user agents, 1 overlapping writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Sharing
			for _, ua := range tc.agents {
				s.SawUserAgent(ua)
			}
			for range tc.overlaps {
				s.SawOverlap()
			}
			ua, sh := s.Result()
			if ua != tc.wantUA {
				t.Errorf("user agent %q, want %q", ua, tc.wantUA)
			}
			if diff := cmp.Diff(tc.want, sh); diff != "" {
				t.Fatalf("shared (-want +got):\n%s", diff)
			}
			if sh != nil && sh.Reason() != tc.reason {
				t.Errorf("reason %q, want %q", sh.Reason(), tc.reason)
			}
		})
	}
}

// TestOverlaps: an attempt received before the previous one completed
// overlaps it; one received at or after does not.
func TestOverlaps(t *testing.T) {
	done := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	if !Overlaps(done, done.Add(-time.Millisecond)) || Overlaps(done, done) || Overlaps(done, done.Add(time.Millisecond)) {
		t.Error("Overlaps: want true only for a request received before the previous one completed")
	}
}
