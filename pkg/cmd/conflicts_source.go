package cmd

import (
	"context"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// CloudWatchOpener opens a CloudWatch Logs log group as an audit source,
// between since and until (pkg/audit/cloudwatch.Open).
type CloudWatchOpener func(ctx context.Context, group string, since, until time.Time) (audit.Source, error)

// openCloudWatch reads --source cloudwatch:. rv-offline sets it
// (SetCloudWatch), so that only rv-offline links the AWS SDK; kubectl-rv,
// where it is nil, hands conflicts --source over to rv-offline.
var openCloudWatch CloudWatchOpener

// SetCloudWatch makes conflicts --source cloudwatch: read log groups with
// open, in this process; cmd/rv-offline calls it before running.
func SetCloudWatch(open CloudWatchOpener) {
	openCloudWatch = open
}

// handsOverSources says whether --source is to run in rv-offline.
func (o *ConflictsOptions) handsOverSources() bool {
	return len(o.Sources) > 0 && openCloudWatch == nil
}

// validateSources checks --source's values and what they cannot go with.
func (o *ConflictsOptions) validateSources() error {
	if len(o.Sources) == 0 {
		return nil
	}
	switch {
	case o.Listen != "":
		return exitcode.Usagef("give --source or --listen, not both")
	case o.Scenario != "":
		return exitcode.Usagef("--scenario reads the log a second time: export the events to a file and give it to --audit-log")
	}
	for _, s := range o.Sources {
		if _, err := audit.ParseCloudSource(s); err != nil {
			return exitcode.Usagef("--source %w", err)
		}
	}
	return nil
}

// cloudSources are --source's log groups as audit sources, --since and
// --until pushed down.
func (o *ConflictsOptions) cloudSources(ctx context.Context) ([]audit.Source, error) {
	var out []audit.Source
	for _, s := range o.Sources {
		group, _ := audit.ParseCloudSource(s)
		src, err := openCloudWatch(ctx, group, o.cfg.Since, o.cfg.Until)
		if err != nil {
			return nil, exitcode.Usagef("--source: %w", err)
		}
		out = append(out, src)
	}
	return out, nil
}
