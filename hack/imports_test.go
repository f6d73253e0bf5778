package hack

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFlagLibrariesStayInCommands: besides pkg/cmd, only the API server's
// rules (pkg/serverrules and pkg/serverrules/crd, which the upstream
// packages they run bring them into through k8s.io/component-base) link a
// flag or CLI library; the engines never do.
func TestFlagLibrariesStayInCommands(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Deps " "}}`, "../pkg/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"pkg/cmd", "pkg/serverrules", "pkg/serverrules/crd"}
	var checked int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, "|")
		rel, ok := strings.CutPrefix(pkg, "github.com/kubectl-rv/kubectl-rv/")
		if !ok || !strings.HasPrefix(rel, "pkg/") {
			continue
		}
		checked++
		for _, d := range strings.Fields(deps) {
			if (d == "github.com/spf13/pflag" || d == "github.com/spf13/cobra" || d == "k8s.io/component-base/cli/flag") && !slices.Contains(allowed, rel) {
				t.Errorf("%s links %s: only %v may", rel, d, allowed)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d packages of pkg/: go list printed\n%s", checked, out)
	}
}

// TestEarlyHandOffImportsOnlyTheStandardLibrary: kubectl-rv hands the
// common predict --offline and simulate command lines over to rv-offline
// during package initialisation (cmd/kubectl-rv/internal/earlyhandoff),
// which happens before client-go's only while the package that does it
// links nothing but the standard library.
func TestEarlyHandOffImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`,
		"../cmd/kubectl-rv/internal/earlyhandoff").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	want := []string{"github.com/kubectl-rv/kubectl-rv/pkg/handoff", "github.com/kubectl-rv/kubectl-rv/cmd/kubectl-rv/internal/earlyhandoff"}
	if !slices.Equal(got, want) {
		t.Errorf("earlyhandoff links %q, want only %q and the standard library", got, want)
	}
}

// logServiceClients are the modules of the log services' clients that
// conflicts --source reads with.
var logServiceClients = []string{
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs",
	"github.com/elastic/go-elasticsearch/v8",
	"github.com/opensearch-project/opensearch-go/v4",
	"github.com/ClickHouse/clickhouse-go/v2",
}

// TestLogServiceClientsOnlyInRVOffline: the log services' clients are
// linked into rv-offline, to which kubectl-rv hands conflicts --source
// over, never into kubectl-rv.
func TestLogServiceClientsOnlyInRVOffline(t *testing.T) {
	for cmd, want := range map[string]bool{"../cmd/kubectl-rv": false, "../cmd/rv-offline": true} {
		out, err := exec.Command("go", "list", "-deps", cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		deps := strings.Fields(string(out))
		for _, m := range logServiceClients {
			got := slices.ContainsFunc(deps, func(d string) bool { return d == m || strings.HasPrefix(d, m+"/") })
			if got != want {
				t.Errorf("%s links %s: %v, want %v", cmd, m, got, want)
			}
		}
	}
}
