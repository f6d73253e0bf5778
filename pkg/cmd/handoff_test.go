package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules"
	"github.com/kubectl-rv/kubectl-rv/pkg/serverrules/crd"
	"github.com/kubectl-rv/kubectl-rv/pkg/writepath"
)

// TestExecutablePath: a missing rv-offline or rv-full is a usage error that
// names it, what it links and what to reinstall (pkg/handoff finds it;
// TestPath there follows krew's link).
func TestExecutablePath(t *testing.T) {
	for _, base := range []string{OfflineExecutable, FullExecutable} {
		name := base
		if runtime.GOOS == "windows" {
			name += ".exe"
		}
		lonely := filepath.Join(t.TempDir(), "kubectl-rv")
		if err := os.WriteFile(lonely, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := executablePath(base, func() (string, error) { return lonely, nil })
		if code := exitcode.Classify(err); code != exitcode.CodeUsage {
			t.Errorf("without %s: exit %d (%v), want %d", name, code, err, exitcode.CodeUsage)
		}
		if err == nil || !strings.Contains(err.Error(), "reinstall kubectl rv") || !strings.Contains(err.Error(), name+" is missing") || !strings.Contains(err.Error(), "links "+links[base]) {
			t.Errorf("without %s: error %v does not name it, what it links and what to reinstall", name, err)
		}
	}
}

// TestOfflineExecutable: predict --offline runs where the rules it needs
// are linked: here with crd.Rules (rv-full), here with the built-in
// kinds' rules unless --schema asks for custom resources' (rv-offline
// hands those to rv-full), and in rv-offline or rv-full from kubectl-rv,
// which has none.
func TestOfflineExecutable(t *testing.T) {
	tests := []struct {
		name   string
		rules  writepath.Rules
		schema bool
		want   string
	}{
		{"kubectl-rv", nil, false, OfflineExecutable},
		{"kubectl-rv --schema", nil, true, FullExecutable},
		{"rv-offline", serverrules.Rules{}, false, ""},
		{"rv-offline --schema", serverrules.Rules{}, true, FullExecutable},
		{"rv-full", crd.Rules{}, false, ""},
		{"rv-full --schema", crd.Rules{}, true, ""},
	}
	for _, tc := range tests {
		if got := offlineExecutable(tc.rules, tc.schema); got != tc.want {
			t.Errorf("%s: offlineExecutable = %q, want %q", tc.name, got, tc.want)
		}
	}
}
