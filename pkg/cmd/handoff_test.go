package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// TestOfflinePath: a missing rv-offline is a usage error that says what to
// reinstall (pkg/handoff finds it; TestPath there follows krew's link).
func TestOfflinePath(t *testing.T) {
	name := OfflineExecutable
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	lonely := filepath.Join(t.TempDir(), "kubectl-rv")
	if err := os.WriteFile(lonely, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := offlinePath(func() (string, error) { return lonely, nil })
	if code := exitcode.Classify(err); code != exitcode.CodeUsage {
		t.Errorf("without %s: exit %d (%v), want %d", name, code, err, exitcode.CodeUsage)
	}
	if err == nil || !strings.Contains(err.Error(), "reinstall kubectl rv") {
		t.Errorf("without %s: error %v does not say what to reinstall", name, err)
	}
}
