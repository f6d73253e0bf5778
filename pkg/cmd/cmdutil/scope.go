package cmdutil

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// TimeScopeFlags are --since and --until, the time scope of every command
// that reads audit logs (conflicts, leases): one help text, one parser
// (an RFC 3339 time, or a duration back from now, as kubectl logs --since
// reads it) and one set of errors. ToWindow turns them into an
// audit.Window once, in Validate.
type TimeScopeFlags struct {
	Since, Until string
}

// AddFlags registers --since and --until.
func (f *TimeScopeFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Since, "since", "", "Only requests received at or after this time: RFC 3339 (2026-11-24T10:00:00Z) or a duration back from now (5m, 2h).")
	fs.StringVar(&f.Until, "until", "", "Only requests received before this time: RFC 3339 or a duration back from now.")
}

// ToWindow parses the flags, durations counting back from now() (nil is
// time.Now: tests give a fixed clock); a flag not given is no bound. Bad
// values and an --until not after --since are exit 2.
func (f *TimeScopeFlags) ToWindow(now func() time.Time) (audit.Window, error) {
	if now == nil {
		now = time.Now
	}
	var w audit.Window
	var err error
	if w.Since, err = parseTimeFlag("--since", f.Since, now); err != nil {
		return w, err
	}
	if w.Until, err = parseTimeFlag("--until", f.Until, now); err != nil {
		return w, err
	}
	if !w.Since.IsZero() && !w.Until.IsZero() && !w.Until.After(w.Since) {
		return w, exitcode.Usagef("--until %s is not after --since %s", f.Until, f.Since)
	}
	return w, nil
}

// parseTimeFlag reads --since or --until: an RFC 3339 time, or a positive
// duration back from now.
func parseTimeFlag(flag, v string, now func() time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d <= 0 {
			return time.Time{}, exitcode.Usagef("%s %q: a duration must be positive, e.g. 5m", flag, v)
		}
		return now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, exitcode.Usagef("%s %q: give an RFC 3339 time such as 2026-11-24T10:00:00Z or a duration such as 5m", flag, v)
	}
	return t, nil
}
