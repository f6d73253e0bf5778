package cmd

import (
	"context"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/cloudwatch"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

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
		if _, err := cloudwatch.ParseSource(s); err != nil {
			return exitcode.Usagef("--source %w", err)
		}
	}
	return nil
}

// cloudSources are --source's log groups as audit sources, read with a
// client of the AWS SDK's default chain, --since and --until pushed down.
func (o *ConflictsOptions) cloudSources(ctx context.Context) ([]audit.Source, error) {
	if len(o.Sources) == 0 {
		return nil, nil
	}
	api, err := cloudwatch.NewClient(ctx)
	if err != nil {
		return nil, exitcode.Usagef("--source: %w", err)
	}
	var out []audit.Source
	for _, s := range o.Sources {
		group, _ := cloudwatch.ParseSource(s)
		out = append(out, cloudwatch.Source(ctx, api, cloudwatch.Config{LogGroup: group, Since: o.cfg.Since, Until: o.cfg.Until}, nil))
	}
	return out, nil
}
