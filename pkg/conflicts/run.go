package conflicts

import (
	"context"
	"errors"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Analyze decodes the sources in order (each with cfg.Parallel goroutines,
// see audit.Decode) and analyses the write attempts they hold. Errors are
// the decoder's (bad input names file:line and wraps audit.ErrBadInput) or
// ctx's.
//
// Files are analysed as a stream with bounded memory (see stream): a log
// out of time order beyond the stream's skew (several API servers' logs
// one after the other, say) is read again keeping every record, as is a
// stream that cannot be read twice (stdin). The hottest object's timeline
// (Config.HottestTimeline) is a second reading of the files, of that object
// only.
func Analyze(ctx context.Context, sources []audit.Source, cfg Config) (*Report, error) {
	rereadable := true
	for _, src := range sources {
		rereadable = rereadable && src.Rereadable()
	}
	if rereadable {
		rep, err := analyze(ctx, sources, cfg, analyzeSkew, nil)
		if !errors.Is(err, errNeedsAllRecords) {
			if err != nil || !cfg.HottestTimeline || cfg.Object != nil || len(rep.Objects) == 0 {
				return rep, err
			}
			k := rep.Objects[0].Object
			one, err := analyze(ctx, sources, cfg, analyzeSkew, &k)
			if err == nil {
				rep.Timeline, rep.TimelineObject = one.Timeline, &k
				return rep, nil
			}
			if !errors.Is(err, errNeedsAllRecords) {
				return nil, err
			}
		}
	}
	if rereadable {
		onFallback()
	}
	return analyze(ctx, sources, cfg, -1, nil)
}

// onFallback is called when files are read again keeping every record;
// tests watch it.
var onFallback = func() {}

// analyze reads the sources once into a collector of the given skew (-1
// keeps every record), limited to one object when only is set.
func analyze(ctx context.Context, sources []audit.Source, cfg Config, skew time.Duration, only *ObjectKey) (*Report, error) {
	c := newCollector(cfg, skew)
	s := c.stream
	s.only = only
	var stats audit.Stats
	opts := audit.Options{Strict: cfg.Strict, Workers: cfg.Parallel, Reuse: true}
	for _, src := range sources {
		st, err := audit.Decode(ctx, src, opts, func(e *audit.Event) error {
			c.Add(e)
			if s.inexact {
				return errNeedsAllRecords
			}
			return nil
		})
		stats.Add(st)
		if err != nil {
			return nil, err
		}
	}
	rep := c.Report()
	if s.inexact {
		return nil, errNeedsAllRecords
	}
	rep.Input = stats
	return rep, nil
}
