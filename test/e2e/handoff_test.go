//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHandOffBeforeClientGoStarts runs the built kubectl-rv beside a
// stand-in rv-offline that prints its arguments: the common command lines
// of predict --offline and simulate reach it before client-go's scheme is
// initialised (GODEBUG=inittrace=1 names each package as it is), the
// other forms once the flags are parsed, and other commands never.
func TestHandOffBeforeClientGoStarts(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(cluster.RVBin)
	if err != nil {
		t.Fatal(err)
	}
	self := filepath.Join(dir, "kubectl-rv")
	if err := os.WriteFile(self, data, 0o755); err != nil {
		t.Fatal(err)
	}
	stand := "#!/bin/sh\necho \"rv-offline $*\"\n"
	if err := os.WriteFile(filepath.Join(dir, "rv-offline"), []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	const scheme = "init k8s.io/client-go/kubernetes/scheme "
	tests := []struct {
		args []string
		// early: handed over before client-go; late: after the flags are
		// parsed; neither: not handed over.
		early, late bool
	}{
		{args: []string{"predict", "-f", "m.yaml", "--offline", "--live", "l.yaml"}, early: true},
		{args: []string{"simulate", "run", "--builtin", "lost-update"}, early: true},
		{args: []string{"-n", "ns", "predict", "-f", "m.yaml", "--offline"}, late: true},
		{args: []string{"version", "--client"}},
	}
	for _, tc := range tests {
		cmd := exec.Command(self, tc.args...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		handed := strings.HasPrefix(stdout.String(), "rv-offline "+strings.Join(tc.args, " "))
		clientGo := strings.Contains(stderr.String(), scheme)
		switch {
		case tc.early && (!handed || clientGo):
			t.Errorf("%q: handed over %v, client-go initialised first %v; want handed over before it\nstdout: %s", tc.args, handed, clientGo, stdout.String())
		case tc.late && (!handed || !clientGo):
			t.Errorf("%q: handed over %v, client-go initialised first %v; want handed over after it\nstdout: %s", tc.args, handed, clientGo, stdout.String())
		case !tc.early && !tc.late && handed:
			t.Errorf("%q was handed over to rv-offline: %s", tc.args, stdout.String())
		}
	}
}
