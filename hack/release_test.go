package hack

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseCheckBuildsEveryPlatform runs make release-check with a
// stand-in hack/release.sh that records what it was given: the version,
// no PLATFORMS (so all five, whatever the environment says, since the e2e
// release test builds only two) and a scratch DIST that is gone afterwards.
func TestReleaseCheckBuildsEveryPlatform(t *testing.T) {
	makefile, err := filepath.Abs("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "record")
	stub := "#!/usr/bin/env bash\nprintf 'version=%s\\nplatforms=%s\\n' \"$1\" \"${PLATFORMS-unset}\" >" + record + "\n" +
		"echo \"dist=$DIST\" >>" + record + "\nmkdir -p \"$DIST\" && touch \"$DIST/rv.yaml\"\n"
	if err := os.MkdirAll(filepath.Join(dir, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hack", "release.sh"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-f", makefile, "release-check", "VERSION=v0.3.0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLATFORMS=linux/amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release-check: %v\n%s", err, out)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("make release-check did not run hack/release.sh: %v", err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	if got["version"] != "v0.3.0" || got["platforms"] != "" {
		t.Errorf("hack/release.sh got version %q and PLATFORMS %q, want v0.3.0 and empty (all five)", got["version"], got["platforms"])
	}
	if got["dist"] == "" || strings.HasPrefix(got["dist"], dir) {
		t.Errorf("DIST = %q, want a scratch directory outside the checkout", got["dist"])
	}
	if _, err := os.Stat(got["dist"]); !os.IsNotExist(err) {
		t.Errorf("the scratch release %s is still there after make release-check (%v)", got["dist"], err)
	}
}
