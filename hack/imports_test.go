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
// links them, and nothing else may. Only rv-offline and rv-full, which
// link cobra for their commands anyway, link the rules
// (TestOnlyTheirExecutablesLink).
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

// linkedBy are the packages and modules that kubectl-rv leaves out, each
// with the executables that link them, and no other may: the API
// server's rules for the built-in kinds (whose start-up every other
// command would pay, and through which the flag libraries reach pkg/)
// rv-offline and rv-full; custom resources' rules (apiextensions-apiserver
// and CEL, 4 ms more of every start) and the log services' clients that
// conflicts --source reads with only rv-full, so that a prediction of
// built-in kinds does not pay their start-up.
var linkedBy = map[string][]string{
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules":        {"../cmd/rv-offline", "../cmd/rv-full"},
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd":    {"../cmd/rv-full"},
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation": {"../cmd/rv-full"},
	"github.com/google/cel-go":                                {"../cmd/rv-full"},
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs":     {"../cmd/rv-full"},
	"github.com/elastic/go-elasticsearch/v8":                  {"../cmd/rv-full"},
	"github.com/opensearch-project/opensearch-go/v4":          {"../cmd/rv-full"},
	"github.com/ClickHouse/clickhouse-go/v2":                  {"../cmd/rv-full"},
}

// TestOnlyTheirExecutablesLink: the packages of linkedBy are linked into
// their executables, to which the others hand the commands that need
// them over (predict --offline and simulate to rv-offline, predict
// --offline --schema and conflicts --source to rv-full), and into no
// other.
func TestOnlyTheirExecutablesLink(t *testing.T) {
	for _, cmd := range []string{"../cmd/kubectl-rv", "../cmd/rv-offline", "../cmd/rv-full"} {
		out, err := exec.Command("go", "list", "-deps", cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		deps := strings.Fields(string(out))
		for m, by := range linkedBy {
			got := slices.ContainsFunc(deps, func(d string) bool { return d == m || strings.HasPrefix(d, m+"/") })
			if want := slices.Contains(by, cmd); got != want {
				t.Errorf("%s links %s: %v, want %v", cmd, m, got, want)
			}
		}
	}
}
