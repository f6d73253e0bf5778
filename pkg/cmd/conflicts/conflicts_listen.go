package conflicts

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
	"github.com/kubectl-rv/kubectl-rv/pkg/output/conflictsprint"
)

// listenFlags are the flags that go with --listen only.
var listenFlags = []string{"listen-cert", "listen-key", "webhook-kubeconfig", "listen-token-file", "listen-client-ca", "spool-max", "record", "record-append"}

// onListen is called with the receiver once it listens; tests watch it.
var onListen = func(*audit.Listener) {}

// sources are the logs to analyse: --audit-log's files, or --listen's
// webhook receiver, which ends at --for or Ctrl-C (Run's analysis then
// reports what was received: it is not cancelled with the command).
// done, called after the analysis, reports what the receiver took in,
// dropped and refused, and closes --record.
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
	l, err := audit.Listen(audit.ListenConfig{Addr: o.Listen, CertFile: o.ListenCert, KeyFile: o.ListenKey,
		TokenFile: o.ListenTokenFile, ClientCAFile: o.ListenClientCA, WebhookKubeconfig: o.WebhookKubeconfig,
		MaxSpool: o.spoolMax, RecordPath: o.Record, RecordAppend: o.RecordAppend})
	if err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	onListen(l)
	until := "Ctrl-C"
	if o.set("for") {
		until = "--for " + o.For.String() + " or Ctrl-C"
	}
	how := "the API server's --audit-webhook-config-file names this URL"
	if o.WebhookKubeconfig != "" {
		how = "give the API server --audit-webhook-config-file " + o.WebhookKubeconfig
	}
	fmt.Fprintf(o.ErrOut, "receiving audit events at %s until %s (%s)\n", l.URL(), until, how)
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
		if err := l.End(shutdown); err != nil {
			// A record that could not be written stopped; the capture
			// went on, and its report stands.
			output.Warnf(o.ErrOut, "%v", err)
		}
		conflictsprint.ListenStats(o.ErrOut, l.Stats())
		return nil
	}
	return []audit.Source{l.Source()}, done, nil
}

// validateListen checks --listen's flags beside the audit log's.
func (o *ConflictsOptions) validateListen() error {
	if o.Listen == "" {
		for _, name := range listenFlags {
			if o.set(name) {
				return exitcode.Usagef("--%s goes with --listen ADDR", name)
			}
		}
	}
	switch {
	case o.Listen == "" && o.set("for"):
		return exitcode.Usagef("--for is the time --live reads /metrics over, or --listen receives for: give it with one of them, or drop it")
	case o.Listen != "" && len(o.AuditLogs) > 0:
		return exitcode.Usagef("give --audit-log or --listen, not both")
	case o.Listen != "" && o.Scenario != "":
		return exitcode.Usagef("--scenario reads the log a second time: --record the events with --listen, then give the record to --audit-log --scenario")
	case o.Listen != "" && o.set("for") && o.For <= 0:
		return exitcode.Usagef("--for must be positive, got %s", o.For)
	case o.RecordAppend && o.Record == "":
		return exitcode.Usagef("--record-append appends to --record FILE: give --record too")
	}
	o.spoolMax = 0
	if o.SpoolMax != "" {
		q, err := resource.ParseQuantity(o.SpoolMax)
		if err != nil || q.Sign() <= 0 {
			return exitcode.Usagef("--spool-max %q: give a positive size, such as 512Mi or 4Gi", o.SpoolMax)
		}
		o.spoolMax = q.Value()
	}
	return nil
}
