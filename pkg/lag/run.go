package lag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Mode is what Run does after its scan.
type Mode int

const (
	// Once scans and returns the report.
	Once Mode = iota
	// UntilCaughtUp then watches until nothing lags; when Config.Timeout
	// passes first, Run returns the report with ErrStillLagging, and as
	// soon as an object that counts is stalled, with ErrStalled.
	UntilCaughtUp
	// Watching then watches until its ctx ends or Config.Timeout passes,
	// reporting every change to Config.OnChange. Either is the watch's
	// normal end: Run returns the report without an error. A ctx that ends
	// during the scan still ends Run with ctx.Err().
	Watching
)

// ErrStillLagging is Run's error, with the report, when UntilCaughtUp's
// Timeout passed while objects still lagged.
var ErrStillLagging = errors.New("objects still lag")

// ErrStalled is Run's error, with the report, when UntilCaughtUp finds an
// object that counts and is stalled: waiting longer cannot help, so it
// ends at once. The error names the object and the condition.
var ErrStalled = errors.New("rollout stalled")

// stalled returns ErrStalled naming the first stalled finding in rep, or
// nil.
func stalled(rep *Report) error {
	for _, it := range rep.Items {
		if it.Finding && it.State == Stalled {
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "/" + name
			}
			return fmt.Errorf("%w: %s %s: %s", ErrStalled, it.Resource, name, it.Rollout)
		}
	}
	return nil
}

// Run is the lag command's one entry: it scans the targets (Scan), says
// the scan's warnings to cfg.Warnf, hands the report to cfg.Scanned, then
// waits or watches as cfg.Mode says (Follow), the report updated in place.
// The report is returned with any error it has: Scan's ErrAllRefused,
// ErrStillLagging; a ctx that ends is the error ctx.Err(), except while
// Watching watches, where it is the normal end.
func Run(ctx context.Context, cfg Config, client Client, targets []Target) (*Report, error) {
	rep, err := Scan(ctx, cfg, client, targets)
	if rep != nil && cfg.Warnf != nil {
		for _, w := range rep.Warnings {
			cfg.Warnf("%s", w)
		}
	}
	if err != nil {
		return rep, err
	}
	if cfg.Scanned != nil {
		if err := cfg.Scanned(rep); err != nil {
			return rep, err
		}
	}
	// The scan's progress is over; a watch has none.
	cfg.Progress = nil
	switch cfg.Mode {
	case UntilCaughtUp:
		return rep, waitCaughtUp(ctx, cfg, client, targets, rep)
	case Watching:
		return rep, watchChanges(ctx, cfg, client, targets, rep)
	}
	return rep, nil
}

// withTimeout bounds ctx by cfg.Timeout, when there is one.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

func waitCaughtUp(ctx context.Context, cfg Config, client Client, targets []Target, rep *Report) error {
	if err := stalled(rep); err != nil {
		return err
	}
	wctx, cancel := withTimeout(ctx, cfg.Timeout)
	defer cancel()
	err := Follow(wctx, cfg, client, targets, rep, true, nil)
	switch {
	case errors.Is(err, ErrStalled):
		return err
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("%w: %w", ErrStillLagging, err)
	}
	return nil
}

func watchChanges(ctx context.Context, cfg Config, client Client, targets []Target, rep *Report) error {
	// Follow rewrites rep.Items in place: keep a copy to diff against.
	prev := slices.Clone(rep.Items)
	onChange := func(r *Report) error {
		changed := Diff(prev, r.Items)
		prev = slices.Clone(r.Items)
		if cfg.OnChange == nil {
			return nil
		}
		return cfg.OnChange(r, changed)
	}
	wctx, cancel := withTimeout(ctx, cfg.Timeout)
	defer cancel()
	err := Follow(wctx, cfg, client, targets, rep, false, onChange)
	if ctx.Err() != nil {
		// Ctrl-C ends a watch the way its timeout does.
		return nil
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
