package handoff

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestTarget(t *testing.T) {
	const off, full = Executable, FullExecutable
	tests := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"simulate"}, off},
		{[]string{"simulate", "run", "-f", "s.yaml"}, off},
		{[]string{"simulate", "--seed", "3"}, off},
		{[]string{"simulate", "list"}, ""},
		{[]string{"simulate", "replay", "rec.jsonl"}, ""},
		{[]string{"simulate", "etcdctl", "get", "a"}, ""},
		{[]string{"predict", "-f", "d.yaml", "--offline"}, off},
		{[]string{"predict", "--offline=true", "-f", "d.yaml"}, off},
		{[]string{"predict", "--offline=1"}, off},
		{[]string{"predict", "--offline=false"}, ""},
		{[]string{"predict", "--offline", "--offline=false"}, ""},
		{[]string{"predict", "--offline=false", "--offline"}, off},
		{[]string{"predict", "--offline=maybe"}, ""},
		{[]string{"predict", "-f", "d.yaml"}, ""},
		{[]string{"predict", "--", "--offline"}, ""},
		// Custom resources' rules are rv-full's.
		{[]string{"predict", "-f", "cr.yaml", "--offline", "--schema", "crd.yaml"}, full},
		{[]string{"predict", "--schema=crd.yaml", "--offline", "-f", "cr.yaml"}, full},
		{[]string{"predict", "--offline", "--", "--schema", "crd.yaml"}, off},
		{[]string{"predict", "--schema", "crd.yaml", "-f", "cr.yaml"}, ""},
		{[]string{"owners", "--offline"}, ""},
		// Global flags first: pkg/cmd decides once cobra has parsed them.
		{[]string{"-n", "ns", "predict", "--offline"}, ""},
		{[]string{"version"}, ""},
	}
	for _, tc := range tests {
		if got := Target(tc.args); got != tc.want {
			t.Errorf("Target(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// FuzzTarget holds Target to its contract on any words: it never panics,
// it names only predict and simulate command lines, and rv-full only for
// a predict that names --schema.
func FuzzTarget(f *testing.F) {
	f.Add("predict\x00--offline")
	f.Add("simulate\x00run")
	f.Add("predict\x00--offline=\x00--")
	f.Add("predict\x00--offline\x00--schema=x")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		got := Target(args)
		if got != "" && args[0] != "predict" && args[0] != "simulate" {
			t.Errorf("Target(%q) = %q names a command other than predict and simulate", args, got)
		}
		if got == FullExecutable && (args[0] != "predict" || !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--schema") })) {
			t.Errorf("Target(%q) = %q without --schema", args, got)
		}
		if got != "" && got != Executable && got != FullExecutable {
			t.Errorf("Target(%q) = %q", args, got)
		}
	})
}

// TestPath: each executable is found beside the target of krew's link,
// never hands over to itself, and is a MissingError where it is absent.
func TestPath(t *testing.T) {
	for _, base := range []string{Executable, FullExecutable} {
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
