// Command rv-full is kubectl rv with everything linked: the API server's
// rules for the built-in kinds, apiextensions-apiserver's for custom
// resources (pkg/serverrules/crd) and the log services' clients (the AWS
// SDK, go-elasticsearch, opensearch-go, clickhouse-go). kubectl-rv and
// rv-offline hand it the command lines that need what only it links:
// predict --offline --schema and conflicts --source. Each of those costs
// milliseconds of package initialisation at every start, which the other
// commands do not pay. It runs every command and hands none over. It is
// installed beside kubectl-rv, not on PATH under a kubectl- name, so
// kubectl does not list it as a plugin.
package main

import (
	"os"

	_ "github.com/kubectl-rv/kubectl-rv/cmd/internal/startgc" // first: see its doc
	"github.com/kubectl-rv/kubectl-rv/pkg/audit"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/clickhouse"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/cloudwatch"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/elasticsearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/audit/opensearch"
	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
)

func main() {
	cmd.SetLogSource(audit.CloudWatchScheme, cloudwatch.Open)
	cmd.SetLogSource(audit.ElasticsearchScheme, elasticsearch.Open)
	cmd.SetLogSource(audit.OpenSearchScheme, opensearch.Open)
	cmd.SetLogSource(audit.ClickHouseScheme, clickhouse.Open)
	os.Exit(cmd.Main(crd.Rules{}))
}
