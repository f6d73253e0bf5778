package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// TestExecutablePath: a missing rv-offline or rv-logs is a usage error that
// names it, what it links and what to reinstall (pkg/handoff finds it;
// TestPath there follows krew's link).
func TestExecutablePath(t *testing.T) {
	for _, base := range []string{OfflineExecutable, LogsExecutable} {
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
