package cmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

func TestOfflinePath(t *testing.T) {
	name := OfflineExecutable
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	store := t.TempDir() // where krew unpacks the archive
	bin := t.TempDir()   // where krew links the plugin
	self := filepath.Join(store, "kubectl-rv")
	for _, f := range []string{self, filepath.Join(store, name)} {
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(bin, "kubectl-rv")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	got, err := offlinePath(func() (string, error) { return link, nil })
	if err != nil {
		t.Fatal(err)
	}
	// Beside the link's target, not beside the link.
	want, _ := filepath.EvalSymlinks(filepath.Join(store, name))
	if got != want {
		t.Errorf("offlinePath = %q, want %q", got, want)
	}

	lonely := filepath.Join(t.TempDir(), "kubectl-rv")
	if err := os.WriteFile(lonely, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = offlinePath(func() (string, error) { return lonely, nil })
	if code := exitcode.Classify(err); code != exitcode.CodeUsage {
		t.Errorf("without %s: exit %d (%v), want %d", name, code, err, exitcode.CodeUsage)
	}
	if err == nil || !strings.Contains(err.Error(), "reinstall kubectl rv") {
		t.Errorf("without %s: error %v does not say what to reinstall", name, err)
	}
}
