package handoff

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestWanted(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"simulate"}, true},
		{[]string{"simulate", "run", "-f", "s.yaml"}, true},
		{[]string{"simulate", "--seed", "3"}, true},
		{[]string{"simulate", "list"}, false},
		{[]string{"simulate", "replay", "rec.jsonl"}, false},
		{[]string{"simulate", "etcdctl", "get", "a"}, false},
		{[]string{"predict", "-f", "d.yaml", "--offline"}, true},
		{[]string{"predict", "--offline=true", "-f", "d.yaml"}, true},
		{[]string{"predict", "--offline=1"}, true},
		{[]string{"predict", "--offline=false"}, false},
		{[]string{"predict", "--offline", "--offline=false"}, false},
		{[]string{"predict", "--offline=false", "--offline"}, true},
		{[]string{"predict", "--offline=maybe"}, false},
		{[]string{"predict", "-f", "d.yaml"}, false},
		{[]string{"predict", "--", "--offline"}, false},
		{[]string{"owners", "--offline"}, false},
		// Global flags first: pkg/cmd decides once cobra has parsed them.
		{[]string{"-n", "ns", "predict", "--offline"}, false},
		{[]string{"version"}, false},
	}
	for _, tc := range tests {
		if got := Wanted(tc.args); got != tc.want {
			t.Errorf("Wanted(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// FuzzWanted holds Wanted to its contract on any words: it never panics,
// and it names only predict and simulate command lines.
func FuzzWanted(f *testing.F) {
	f.Add("predict\x00--offline")
	f.Add("simulate\x00run")
	f.Add("predict\x00--offline=\x00--")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		if Wanted(args) && args[0] != "predict" && args[0] != "simulate" {
			t.Errorf("Wanted(%q) names a command other than predict and simulate", args)
		}
	})
}

// TestPath: each executable is found beside the target of krew's link,
// never hands over to itself, and is a MissingError where it is absent.
func TestPath(t *testing.T) {
	for _, base := range []string{Executable, LogsExecutable} {
		t.Run(base, func(t *testing.T) { testPath(t, base) })
	}
}

func testPath(t *testing.T, base string) {
	name := base
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
	got, err := Path(base, func() (string, error) { return link, nil })
	if err != nil {
		t.Fatal(err)
	}
	// Beside the link's target, not beside the link.
	want, _ := filepath.EvalSymlinks(filepath.Join(store, name))
	if got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}

	// The executable itself (or a link to it) never hands over to itself.
	offline := filepath.Join(store, name)
	if _, err := Path(base, func() (string, error) { return offline, nil }); err == nil || !strings.Contains(err.Error(), "itself") {
		t.Errorf("Path from %s itself: %v, want an error", name, err)
	}

	lonely := filepath.Join(t.TempDir(), "kubectl-rv")
	if err := os.WriteFile(lonely, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = Path(base, func() (string, error) { return lonely, nil })
	var missing *MissingError
	if !errors.As(err, &missing) || missing.Path != filepath.Join(filepath.Dir(lonely), name) {
		t.Errorf("without %s: error %v, want a MissingError naming where it was looked for", name, err)
	}
}
