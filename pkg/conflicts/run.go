package conflicts

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
)

// Analyze decodes every source, cfg.Parallel at a time (a large plain file
// is cut into cfg.Parallel parts, see audit.Split), and analyses the
// write attempts they hold. Errors are the decoder's (bad input names
// file:line and wraps audit.ErrBadInput) or ctx's.
func Analyze(ctx context.Context, sources []audit.Source, cfg Config) (*Report, error) {
	all := NewCollector(cfg)
	var (
		mu    sync.Mutex
		stats audit.Stats
	)
	var parts []audit.Source
	for _, src := range sources {
		p, err := audit.Split(src, cfg.Parallel)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p...)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(cfg.Parallel, 1))
	for _, src := range parts {
		g.Go(func() error {
			c := NewCollector(cfg)
			st, err := audit.Decode(gctx, src, audit.Options{Strict: cfg.Strict}, func(e *audit.Event) error {
				c.Add(e)
				return nil
			})
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			all.Merge(c)
			stats.Add(st)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	rep := all.Report()
	rep.Input = stats
	return rep, nil
}
