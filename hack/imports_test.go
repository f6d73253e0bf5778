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
// pkg/cmd and its command packages (and hack/gendocs, which renders their
// docs, and internal/cmdtest, which runs them in their tests) import a
// flag or CLI library; of pkg/, only those and the API server's rules
// link one, and the rules only through upstreamFlagImporters: running the
// API server's own validation, defaulting and CEL (which #29 asks for)
// links them, and nothing else may.
func TestFlagLibrariesStayInCommands(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	importers := []string{"hack/gendocs", "internal/cmdtest"}
	linkers := []string{"pkg/serverrules", "pkg/serverrules/crd"}
	var checked int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.SplitN(line, "|", 3)
		rel, ok := strings.CutPrefix(fields[0], "github.com/kubectl-rv/kubectl-rv/")
		if !ok {
			continue
		}
		checked++
		for _, d := range strings.Fields(fields[1]) {
			if slices.Contains(flagLibraries, d) && !isCommand(rel) && !slices.Contains(importers, rel) {
				t.Errorf("%s imports %s: only pkg/cmd/... and %v may", rel, d, importers)
			}
		}
		if !strings.HasPrefix(rel, "pkg/") {
			continue
		}
		for _, d := range strings.Fields(fields[2]) {
			if slices.Contains(flagLibraries, d) && !isCommand(rel) && !slices.Contains(linkers, rel) {
				t.Errorf("%s links %s: of pkg/, only pkg/cmd/... and %v may", rel, d, linkers)
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

// isCommand says whether rel is pkg/cmd or one of its command packages.
func isCommand(rel string) bool { return rel == "pkg/cmd" || strings.HasPrefix(rel, "pkg/cmd/") }

// TestOneExecutable: kubectl-rv is the module's only command; every
// command of kubectl rv runs in it (hack/ holds tools of the repository,
// not of the product).
func TestOneExecutable(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "../cmd/...", "../pkg/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := strings.Fields(string(out))
	want := []string{"github.com/kubectl-rv/kubectl-rv/cmd/kubectl-rv"}
	if !slices.Equal(got, want) {
		t.Errorf("main packages under cmd/ and pkg/: %q, want %q", got, want)
	}
}
