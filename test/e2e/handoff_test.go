//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHandOffBeforeClientGoStarts runs the built kubectl-rv beside
// stand-ins for rv-offline and rv-full that print their names and
// arguments: the common command lines of predict --offline and simulate
// reach rv-offline, those of predict --offline --schema rv-full, before
// client-go's scheme is initialised (GODEBUG=inittrace=1 names each
// package as it is), the other forms once the flags are parsed, and other
// commands never.
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
	for _, name := range []string{"rv-offline", "rv-full"} {
		stand := "#!/bin/sh\necho \"" + name + " $*\"\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stand), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const scheme = "init k8s.io/client-go/kubernetes/scheme "
	tests := []struct {
		args []string
		// early: handed over before client-go; late: after the flags are
		// parsed; neither: not handed over.
		early, late bool
		// to is the executable it is handed to (rv-offline when empty).
		to string
	}{
		{args: []string{"predict", "-f", "m.yaml", "--offline", "--live", "l.yaml"}, early: true},
		{args: []string{"simulate", "run", "--builtin", "lost-update"}, early: true},
		{args: []string{"predict", "-f", "cr.yaml", "--offline", "--schema", "crd.yaml"}, early: true, to: "rv-full"},
		{args: []string{"-n", "ns", "predict", "-f", "m.yaml", "--offline"}, late: true},
		{args: []string{"-n", "ns", "predict", "-f", "cr.yaml", "--offline", "--schema=crd.yaml"}, late: true, to: "rv-full"},
		{args: []string{"version", "--client"}},
	}
	for _, tc := range tests {
		cmd := exec.Command(self, tc.args...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		_ = cmd.Run()
		to := tc.to
		if to == "" {
			to = "rv-offline"
		}
		handed := strings.HasPrefix(stdout.String(), to+" "+strings.Join(tc.args, " "))
		clientGo := strings.Contains(stderr.String(), scheme)
		switch {
		case tc.early && (!handed || clientGo):
			t.Errorf("%q: handed over %v, client-go initialised first %v; want handed over before it\nstdout: %s", tc.args, handed, clientGo, stdout.String())
		case tc.late && (!handed || !clientGo):
			t.Errorf("%q: handed over %v, client-go initialised first %v; want handed over after it\nstdout: %s", tc.args, handed, clientGo, stdout.String())
		case !tc.early && !tc.late && strings.HasPrefix(stdout.String(), "rv-"):
			t.Errorf("%q was handed over: %s", tc.args, stdout.String())
		}
	}
}
