package conflicts

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// sources are the logs to analyse: --audit-log's files, or --listen's
// webhook receiver, which ends at --for or Ctrl-C (Run's analysis then
// reports what was received: it is not cancelled with the command).
// done, called after the analysis, reports what the receiver took in and
// dropped, and closes --record.
func (o *ConflictsOptions) sources(ctx context.Context) ([]audit.Source, func() error, error) {
	if o.Listen == "" {
		var sources []audit.Source
		for _, p := range o.AuditLogs {
			s, err := audit.Open(p, o.In)
			if err != nil {
				return nil, nil, exitcode.Usage(err)
			}
			sources = append(sources, s...)
		}
		cloud, err := o.cloudSources(ctx)
		if err != nil {
			return nil, nil, err
		}
		sources = append(sources, cloud...)
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		return sources, func() error { return nil }, nil
	}
	cfg := audit.ListenConfig{Addr: o.Listen, CertFile: o.ListenCert, KeyFile: o.ListenKey}
	var rec *os.File
	if o.Record != "" {
		f, err := os.Create(o.Record)
		if err != nil {
			return nil, nil, exitcode.Usage(fmt.Errorf("--record: %w", err))
		}
		rec, cfg.Record = f, f
	}
	l, err := audit.Listen(cfg)
	if err != nil {
		if rec != nil {
			_ = rec.Close()
			_ = os.Remove(o.Record)
		}
		return nil, nil, exitcode.Usage(err)
	}
	until := "Ctrl-C"
	if o.set("for") {
		until = "--for " + o.For.String() + " or Ctrl-C"
	}
	fmt.Fprintf(o.ErrOut, "receiving audit events at %s until %s (the API server's --audit-webhook-config-file names this URL)\n", l.URL(), until)
	go func() {
		stop := ctx.Done()
		if o.set("for") {
			t := time.NewTimer(o.For)
			defer t.Stop()
			select {
			case <-stop:
			case <-t.C:
			}
		} else {
			<-stop
		}
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = l.Close(shutdown)
	}()
	done := func() error {
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = l.End(shutdown)
		st := l.Stats()
		fmt.Fprintf(o.ErrOut, "received %d audit events in %d batches (at most %d of the queue's %d batches waited at once)\n", st.Events, st.Batches, st.PeakQueued, st.QueueBatches)
		if st.DroppedBatches > 0 {
			output.Warnf(o.ErrOut, "dropped %d events in %d batches: the queue (%d batches or %d MiB) was full (the analysis fell behind); the API server was not held up", st.DroppedEvents, st.DroppedBatches, st.QueueBatches, st.QueueBytes>>20)
		}
		if st.Rejected > 0 {
			output.Warnf(o.ErrOut, "refused %d requests that were not an audit.k8s.io/v1 EventList POST", st.Rejected)
		}
		if rec != nil {
			if err := rec.Close(); err != nil {
				return exitcode.Usage(fmt.Errorf("--record: %w", err))
			}
		}
		return nil
	}
	return []audit.Source{l.Source()}, done, nil
}
