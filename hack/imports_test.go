package hack

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// flagLibraries are the flag and CLI libraries that only commands use.
var flagLibraries = []string{"github.com/spf13/pflag", "github.com/spf13/cobra", "k8s.io/component-base/cli/flag"}

// upstreamFlagImporters are the upstream packages through which the API
// server's rules (pkg/serverrules and pkg/serverrules/crd) link the flag
// libraries: k8s.io/component-base's feature gates (pflag), which the
// validation and the strategies consult, and its metrics (pflag), which
// apiextensions-apiserver's validation registers; its compatibility
// versions (cli/flag, cobra), which the CEL environment of the custom
// resources' x-kubernetes-validations reads; and cli/flag and cobra
// themselves. Routes: go list -deps -f '{{.ImportPath}}|{{join .Imports " "}}'
// ./pkg/serverrules/crd, searched from the package.
var upstreamFlagImporters = []string{
	"k8s.io/component-base/featuregate", "k8s.io/component-base/metrics", "k8s.io/component-base/compatibility",
	"k8s.io/component-base/cli/flag", "github.com/spf13/cobra",
}

// TestFlagLibrariesStayInCommands: of this module's packages, only
// pkg/cmd (and hack/gendocs, which renders its commands' docs) imports a
// flag or CLI library; of pkg/, only pkg/cmd and the API server's rules
// link one, and the rules only through upstreamFlagImporters: running the
// API server's own validation, defaulting and CEL (which #29 asks for)
// links them, and nothing else may. Only rv-offline, which links cobra
// for its commands anyway, links the rules (TestOnlyOneLinks).
func TestFlagLibrariesStayInCommands(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	importers := []string{"pkg/cmd", "hack/gendocs"}
	linkers := []string{"pkg/cmd", "pkg/serverrules", "pkg/serverrules/crd"}
	var checked int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.SplitN(line, "|", 3)
		rel, ok := strings.CutPrefix(fields[0], "github.com/kubectl-rv/kubectl-rv/")
		if !ok {
			continue
		}
		checked++
		for _, d := range strings.Fields(fields[1]) {
			if slices.Contains(flagLibraries, d) && !slices.Contains(importers, rel) {
				t.Errorf("%s imports %s: only %v may", rel, d, importers)
			}
		}
		if !strings.HasPrefix(rel, "pkg/") {
			continue
		}
		for _, d := range strings.Fields(fields[2]) {
			if slices.Contains(flagLibraries, d) && !slices.Contains(linkers, rel) {
				t.Errorf("%s links %s: of pkg/, only %v may", rel, d, linkers)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("checked %d packages of the module: go list printed\n%s", checked, out)
	}
	rules, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, "../pkg/serverrules").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	routes := 0
	for _, line := range strings.Split(strings.TrimSpace(string(rules)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		for _, d := range strings.Fields(imports) {
			if !slices.Contains(flagLibraries, d) {
				continue
			}
			routes++
			if !slices.Contains(upstreamFlagImporters, pkg) {
				t.Errorf("the rules link %s through %s: only %v may bring them", d, pkg, upstreamFlagImporters)
			}
		}
	}
	if routes == 0 {
		t.Errorf("the rules link no flag library: upstreamFlagImporters and the doc above are out of date")
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

// onlyIn are the packages and modules that only one executable links: the
// API server's rules (whose start-up every other command would pay, and
// through which the flag libraries reach pkg/) only rv-offline, and the
// log services' clients that conflicts --source reads with only rv-logs,
// so that predict --offline does not pay their start-up either.
var onlyIn = map[string][]string{
	"../cmd/rv-offline": {
		"github.com/kubectl-rv/kubectl-rv/pkg/serverrules",
		"k8s.io/apiextensions-apiserver/pkg/apiserver/validation",
	},
	"../cmd/rv-logs": {
		"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs",
		"github.com/elastic/go-elasticsearch/v8",
		"github.com/opensearch-project/opensearch-go/v4",
		"github.com/ClickHouse/clickhouse-go/v2",
	},
}

// TestOnlyOneLinks: the packages of onlyIn are linked into their
// executable, to which the others hand the commands that need them over
// (predict --offline and simulate to rv-offline, conflicts --source to
// rv-logs), and into no other.
func TestOnlyOneLinks(t *testing.T) {
	mains := []string{"../cmd/kubectl-rv", "../cmd/rv-offline", "../cmd/rv-logs"}
	for _, cmd := range mains {
		out, err := exec.Command("go", "list", "-deps", cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		deps := strings.Fields(string(out))
		for owner, pkgs := range onlyIn {
			for _, m := range pkgs {
				got := slices.ContainsFunc(deps, func(d string) bool { return d == m || strings.HasPrefix(d, m+"/") })
				if want := cmd == owner; got != want {
					t.Errorf("%s links %s: %v, want %v", cmd, m, got, want)
				}
			}
		}
	}
}
