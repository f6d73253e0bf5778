package hack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/version"
)

// TestVersionOrders runs hack/version.sh over a repository as it gains
// commits and tags: each version has a v prefix, names its commit, and
// orders after the one before it as a semantic version ("14f9c7d", what
// git describe gave with no tag, does neither).
func TestVersionOrders(t *testing.T) {
	script, err := filepath.Abs("version.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(date string) string {
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(date), 0o644); err != nil {
			t.Fatal(err)
		}
		run(nil, "git", "add", "f")
		run([]string{"GIT_COMMITTER_DATE=" + date, "GIT_AUTHOR_DATE=" + date}, "git", "commit", "-q", "-m", date)
		return run(nil, "git", "rev-parse", "--short=12", "HEAD")
	}
	run(nil, "git", "init", "-q")

	c1 := commit("2026-01-02T03:04:05Z")
	steps := []struct {
		name string
		do   func() string // returns the expected version
	}{
		{"no tag", func() string { return "v0.0.0-20260102030405-" + c1 }},
		{"uncommitted changes", func() string {
			if err := os.WriteFile(filepath.Join(dir, "f"), []byte("edit"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "v0.0.0-20260102030405-" + c1 + "+dirty"
		}},
		{"a commit later", func() string {
			c := commit("2026-02-01T00:00:00Z")
			return "v0.0.0-20260201000000-" + c
		}},
		{"a release candidate", func() string { run(nil, "git", "tag", "v0.1.0-rc.1"); return "v0.1.0-rc.1" }},
		{"after the release candidate", func() string {
			c := commit("2026-02-02T00:00:00Z")
			return "v0.1.0-rc.1.0.20260202000000-" + c
		}},
		{"the release", func() string { run(nil, "git", "tag", "v0.1.0"); return "v0.1.0" }},
		{"after the release", func() string {
			c := commit("2026-03-01T10:00:00Z")
			return "v0.1.1-0.20260301100000-" + c
		}},
	}
	var prev *version.Version
	for _, s := range steps {
		want := s.do()
		got := run(nil, script, dir)
		if got != want {
			t.Fatalf("%s: version %q, want %q", s.name, got, want)
		}
		v, err := version.ParseSemantic(got)
		if err != nil {
			t.Fatalf("%s: %q is not a semantic version: %v", s.name, got, err)
		}
		if prev != nil && !strings.HasSuffix(got, "+dirty") && !prev.LessThan(v) {
			t.Errorf("%s: %s does not order after %s", s.name, got, prev)
		}
		if !strings.HasSuffix(got, "+dirty") {
			prev = v
		}
	}
}
