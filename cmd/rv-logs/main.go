// Command rv-logs is kubectl rv with the log services' clients linked (the
// AWS SDK, go-elasticsearch, opensearch-go, clickhouse-go): kubectl-rv and
// rv-offline hand conflicts --source over to it, with the same arguments,
// so that no other command pays those clients' start-up. It does not link
// the API server's rules: predict --offline and simulate hand over from it
// to rv-offline. It is installed beside kubectl-rv, not on PATH under a
// kubectl- name, so kubectl does not list it as a plugin.
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
)

func main() {
	cmd.SetLogSource(audit.CloudWatchScheme, cloudwatch.Open)
	cmd.SetLogSource(audit.ElasticsearchScheme, elasticsearch.Open)
	cmd.SetLogSource(audit.OpenSearchScheme, opensearch.Open)
	cmd.SetLogSource(audit.ClickHouseScheme, clickhouse.Open)
	os.Exit(cmd.Main(nil))
}
