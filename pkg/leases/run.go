package leases

import (
	"context"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

// Run is the leases command's one entry: it reads the history of
// cfg.Audit's logs, or watches the Leases (cfg.Watch), or looks at the
// locks once, and returns the report.
func Run(ctx context.Context, c Clients, cfg Config) (*Report, error) {
	switch {
	case len(cfg.Audit) > 0:
		return History(ctx, cfg.Audit, cfg)
	case cfg.Watch:
		return Watch(ctx, c, cfg)
	}
	return Now(ctx, c, cfg)
}

// Watch watches the Leases (cfg.Namespace, or every namespace) until ctx
// is done and returns what it saw: each Lease's renewals, takeovers,
// expiries and a timeline. The list, watch, resumption and relist after
// 410 Gone are the one watch core's (follow.Stream); a relist's lost range
// is a Gap. A done ctx is how a watch ends (Ctrl-C, --for), not an error;
// a failure to start the watch is.
func Watch(ctx context.Context, c Clients, cfg Config) (*Report, error) {
	t := NewTracker(cfg, cfg.now())
	warnings := follow.NewWarnings(cfg.Warnf)
	sc := cfg.Stream
	sc.Targets = []follow.Target{{Resource: LeaseResource, Namespace: cfg.Namespace, Names: cfg.Names}}
	streamCtx, stop := context.WithCancel(ctx)
	defer stop()
	events := make(chan follow.Event, follow.QueueLen)
	done := make(chan error, 1)
	go func() {
		done <- follow.Stream(streamCtx, follow.NewDynamicSource(c.Dynamic), sc, warnings.Warnf, events)
	}()
	err := t.consume(events, done)
	stop()
	if err != nil {
		return nil, err
	}
	rep := t.Report(cfg.now())
	if cfg.CandidateResource != nil {
		rep.CandidateAPI = cfg.CandidateResource.GroupVersion().String()
	}
	rep.Warnings = append(warnings.List(), rep.Warnings...)
	return rep, nil
}

// consume feeds the tracker until the stream ends, ticks it every second
// and hands the live view its report.
func (t *Tracker) consume(events <-chan follow.Event, done <-chan error) error {
	clocks := follow.NewClocks(t.cfg.Live != nil, t.cfg.LiveEvery)
	defer clocks.Stop()
	for {
		select {
		case ev := <-events:
			t.Observe(ev)
		case <-clocks.Tick:
			t.Tick(t.cfg.now())
		case <-clocks.Live:
			t.cfg.Live(t.Report(t.cfg.now()))
		case err := <-done:
			// The driver has stopped sending: take what it left queued.
			follow.Drain(events, t.Observe)
			return err
		}
	}
}
