// Package cloudwatch reads EKS's audit events straight from a CloudWatch
// Logs log group (kubectl rv conflicts --source cloudwatch:LOG_GROUP): EKS
// writes each API server audit event unchanged as a log event of the
// group /aws/eks/CLUSTER/cluster, in streams kube-apiserver-audit-*.
//
// The filter is pushed down: FilterLogEvents is asked for the audit
// streams only, the time window, and a filter pattern (FilterPattern) that
// keeps completed writes, so the service sends no event the analysis
// would drop for its verb or stage. Pages are read one at a time as the
// analysis asks for more (Source): memory holds one page (at most 10,000
// events), whatever the group's size.
//
// Every answer is bounded (pkg/audit/bounded, audit.SourceConfig, on the
// SDK's HTTP client): its size, the time the service may go without
// sending a byte, and its total time; a request a bound cut off is not
// retried, and cancelling the context aborts the request in flight.
//
// Credentials come only from the AWS SDK's default chain (environment,
// shared config and credentials files with AWS_PROFILE, SSO, web identity,
// the instance's role), never from a flag, and are never printed.
//
// Package cloudwatch does not decode or analyse events (pkg/audit and
// pkg/conflicts do).
package cloudwatch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/bounded"
	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// StreamPrefix is the prefix of the log streams EKS writes the API
// server's audit events to.
const StreamPrefix = "kube-apiserver-audit"

// FilterPattern is the CloudWatch Logs filter pattern that keeps the
// completed writes (stage ResponseComplete or Panic, a write verb), in the
// service's JSON pattern syntax.
func FilterPattern() string {
	verbs := make([]string, len(audit.WriteVerbs))
	for i, v := range audit.WriteVerbs {
		verbs[i] = fmt.Sprintf("($.verb = %q)", v)
	}
	return fmt.Sprintf(`{ (($.stage = %q) || ($.stage = %q)) && (%s) }`, audit.StageResponseComplete, audit.StagePanic, strings.Join(verbs, " || "))
}

// Config is what is read of a log group.
type Config struct {
	LogGroup string
	// SourceConfig's Since and Until bound the events' times; zero is no
	// bound. Until is widened by UntilSlack, since an event's log time is
	// when it completed, after it was received: the analysis keeps the
	// exact window. Its PageSize, when set, is each request's Limit (at
	// most MaxPageSize).
	audit.SourceConfig
}

// MaxPageSize is the most events FilterLogEvents answers a request with
// (its Limit's maximum, and its default).
const MaxPageSize = 10_000

// UntilSlack is how much later than Until events are asked for.
const UntilSlack = time.Minute

// API is the part of the CloudWatch Logs client used.
type API interface {
	FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error)
}

var _ API = (*cloudwatchlogs.Client)(nil)

// ErrNoRegion is returned when the default chain names no region.
var ErrNoRegion = errors.New("no AWS region: set AWS_REGION, or a region in the profile that AWS_PROFILE names")

// NewClient is a CloudWatch Logs client configured by the SDK's default
// chain (AWS_REGION, AWS_PROFILE, the shared files, AWS_CA_BUNDLE,
// AWS_ENDPOINT_URL...), whose requests hold every answer to sc's bounds.
// The chain's own requests while it loads (a web identity's or SSO's
// credentials) go through the SDK's client, which AWS_CA_BUNDLE needs.
func NewClient(ctx context.Context, sc audit.SourceConfig) (*cloudwatchlogs.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, ErrNoRegion
	}
	sdk, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		sdk = awshttp.NewBuildableClient()
	}
	cfg.HTTPClient = httpClient(sc, sdk.GetTransport())
	return cloudwatchlogs.NewFromConfig(cfg), nil
}

// HTTPClient is the HTTP client of the SDK's requests, every answer held
// to cfg's bounds. The service answers at most 1 MB a page, so an answer
// over the cap is not CloudWatch Logs'.
func HTTPClient(cfg audit.SourceConfig) *http.Client {
	return httpClient(cfg, awshttp.NewBuildableClient().GetTransport())
}

// httpClient is base (the SDK's transport, with its TLS settings and
// AWS_CA_BUNDLE) held to cfg's bounds. It follows no redirect, as the
// SDK's own client follows none that could change the method or resend
// a signed request elsewhere.
func httpClient(cfg audit.SourceConfig, base *http.Transport) *http.Client {
	return &http.Client{
		Transport:     bounded.Wrap(base, bounded.PageLimits(cfg, "check that AWS_ENDPOINT_URL names CloudWatch Logs, which answers at most 1 MB a page")),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Open is the log group's Source as cfg says, with a client of the
// SDK's default chain (NewClient).
func Open(ctx context.Context, group string, cfg audit.SourceConfig) (audit.Source, error) {
	api, err := NewClient(ctx, cfg)
	if err != nil {
		return audit.Source{}, err
	}
	return Source(ctx, api, Config{LogGroup: group, SourceConfig: cfg}, nil), nil
}

// Stats count what was read.
type Stats struct {
	// Pages counts FilterLogEvents calls.
	Pages int
	// Events counts the events the service sent.
	Events int
}

// Source is the log group's completed writes as an audit source, named
// cloudwatch:LOG_GROUP; its lines are the events in the order the service
// sends them. stats, when not nil, counts the pages and events as they
// are read. An error of the service ends the source, marked as the
// service's (exit 3).
func Source(ctx context.Context, api API, cfg Config, stats *Stats) audit.Source {
	if stats == nil {
		stats = &Stats{}
	}
	in := &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName:        aws.String(cfg.LogGroup),
		LogStreamNamePrefix: aws.String(StreamPrefix),
		FilterPattern:       aws.String(FilterPattern()),
	}
	if !cfg.Since.IsZero() {
		in.StartTime = aws.Int64(cfg.Since.UnixMilli())
	}
	if !cfg.Until.IsZero() {
		in.EndTime = aws.Int64(cfg.Until.Add(UntilSlack).UnixMilli())
	}
	if cfg.PageSize > 0 {
		in.Limit = aws.Int32(int32(min(cfg.PageSize, MaxPageSize)))
	}
	name := audit.CloudWatchScheme + cfg.LogGroup
	pages := cloudwatchlogs.NewFilterLogEventsPaginator(api, in)
	return audit.NewPagedSource(name, func(buf *bytes.Buffer) error {
		if !pages.HasMorePages() {
			return io.EOF
		}
		out, err := pages.NextPage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return exitcode.Cluster(&audit.ServiceError{Err: fmt.Errorf("FilterLogEvents: %w", bounded.Cause(err))})
		}
		stats.Pages++
		for _, e := range out.Events {
			if e.Message == nil {
				continue
			}
			stats.Events++
			buf.WriteString(strings.TrimRight(*e.Message, "\r\n"))
			buf.WriteByte('\n')
		}
		return nil
	})
}
