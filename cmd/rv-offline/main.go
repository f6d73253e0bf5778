// Command rv-offline is kubectl rv with the API server's rules linked
// (pkg/serverrules): kubectl-rv hands predict --offline and simulate over to
// it, with the same arguments, and conflicts --source, whose log services'
// clients (the AWS SDK, go-elasticsearch, opensearch-go, clickhouse-go) only
// rv-offline links. It is installed beside kubectl-rv, not on
// PATH under a kubectl- name, so kubectl does not list it as a plugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/internal/startgc" // first: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/clickhouse"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/cloudwatch"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/elasticsearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/opensearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"
)

func main() {
	cmd.SetLogSource(audit.CloudWatchScheme, cloudwatch.Open)
	cmd.SetLogSource(audit.ElasticsearchScheme, elasticsearch.Open)
	cmd.SetLogSource(audit.OpenSearchScheme, opensearch.Open)
	cmd.SetLogSource(audit.ClickHouseScheme, clickhouse.Open)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.NewCmdRV(streams, serverrules.Rules{}).ExecuteContext(ctx)
	stop()
	os.Exit(cmd.HandleError(streams.ErrOut, err))
}
