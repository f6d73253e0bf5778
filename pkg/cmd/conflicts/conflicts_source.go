package conflicts

import (
	"context"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/clickhouse"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/cloudwatch"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/elasticsearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/opensearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// LogSourceOpener opens what a --source names after its scheme as an
// audit source, between since and until (pkg/audit/cloudwatch.Open,
// pkg/audit/elasticsearch.Open).
type LogSourceOpener func(ctx context.Context, target string, cfg audit.SourceConfig) (audit.Source, error)

// logSources read --source by scheme.
var logSources = map[string]LogSourceOpener{
	audit.CloudWatchScheme:    cloudwatch.Open,
	audit.ElasticsearchScheme: elasticsearch.Open,
	audit.OpenSearchScheme:    opensearch.Open,
	audit.ClickHouseScheme:    clickhouse.Open,
}

// validateSources checks --source's values and what they cannot go with.
func (o *ConflictsOptions) validateSources() error {
	if len(o.Sources) == 0 {
		return nil
	}
	switch {
	case o.SourceTimeout <= 0:
		return exitcode.Usagef("--source-timeout must be positive, got %s", o.SourceTimeout)
	case o.SourcePageSize < 0 || o.SourcePageSize > 10000:
		return exitcode.Usagef("--source-page-size must be 0 (the service's default) to 10000, got %d", o.SourcePageSize)
	case o.Listen != "":
		return exitcode.Usagef("give --source or --listen, not both")
	case o.Scenario != "":
		return exitcode.Usagef("--scenario reads the log a second time: export the events to a file and give it to --audit-log")
	}
	for _, s := range o.Sources {
		if _, _, err := audit.ParseCloudSource(s); err != nil {
			return exitcode.Usagef("--source %w", err)
		}
	}
	return nil
}

// cloudSources are --source's log groups and indexes as audit sources,
// --since and --until pushed down.
func (o *ConflictsOptions) cloudSources(ctx context.Context) ([]audit.Source, error) {
	var out []audit.Source
	for _, s := range o.Sources {
		scheme, target, _ := audit.ParseCloudSource(s)
		src, err := logSources[scheme](ctx, target, audit.SourceConfig{Since: o.cfg.Since, Until: o.cfg.Until, Timeout: o.SourceTimeout, PageSize: o.SourcePageSize})
		if err != nil {
			return nil, exitcode.Usagef("--source: %w", err)
		}
		out = append(out, src)
	}
	return out, nil
}
