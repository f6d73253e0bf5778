package cmdutil

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// TestTimeScopeFlags: --since and --until take RFC 3339 times and
// durations back from now, as kubectl logs --since does; bad values and an
// empty window are exit 2 naming the flag.
func TestTimeScopeFlags(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, since, until   string
		wantSince, wantUntil time.Time
		err                  string
	}{
		{name: "none"},
		{name: "duration", since: "5m", wantSince: now.Add(-5 * time.Minute)},
		{name: "two durations", since: "2h", until: "1h", wantSince: now.Add(-2 * time.Hour), wantUntil: now.Add(-time.Hour)},
		{name: "time and duration", since: "2026-11-24T09:00:00Z", until: "30m", wantSince: now.Add(-time.Hour), wantUntil: now.Add(-30 * time.Minute)},
		{name: "fractional seconds", until: "2026-11-24T09:00:00.25Z", wantUntil: now.Add(-time.Hour + 250*time.Millisecond)},
		{name: "negative duration", since: "-5m", err: `--since "-5m": a duration must be positive`},
		{name: "not a time", until: "yesterday", err: `--until "yesterday": give an RFC 3339 time`},
		{name: "until before since", since: "1h", until: "2h", err: "--until 2h is not after --since 1h"},
		{name: "until at since", since: "2026-11-24T09:00:00Z", until: "1h", err: "is not after --since"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := TimeScopeFlags{Since: tc.since, Until: tc.until}
			w, err := f.ToWindow(func() time.Time { return now })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || exitcode.Classify(err) != exitcode.CodeUsage {
					t.Fatalf("ToWindow() = %v, want exit 2 with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !w.Since.Equal(tc.wantSince) || !w.Until.Equal(tc.wantUntil) {
				t.Errorf("window %v to %v, want %v to %v", w.Since, w.Until, tc.wantSince, tc.wantUntil)
			}
		})
	}
}

// TestTimeScopeFlagsBind: AddFlags binds --since and --until to the
// struct, so that a command reads what the command line gave.
func TestTimeScopeFlagsBind(t *testing.T) {
	var f TimeScopeFlags
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--since", "5m", "--until", "2026-11-24T10:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if f.Since != "5m" || f.Until != "2026-11-24T10:00:00Z" {
		t.Errorf("bound %+v", f)
	}
}
