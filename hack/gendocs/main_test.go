package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd"
)

func TestEveryVisibleCommandGetsAPageAndNothingElse(t *testing.T) {
	t.Setenv("HOME", os.Getenv("HOME"))
	out := t.TempDir()
	stale := filepath.Join(out, "kubectl_rv_removed.md")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(out, "../../docs"); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"README.md": true, "kubectl_rv.md": true}
	root := cmd.NewCmdRV(genericiooptions.NewTestIOStreamsDiscard())
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			want["kubectl_rv_"+c.Name()+".md"] = true
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					want["kubectl_rv_"+c.Name()+"_"+sub.Name()+".md"] = true
				}
			}
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range entries {
		got[e.Name()] = true
	}
	for name := range want {
		if !got[name] {
			t.Errorf("no page %s", name)
		}
	}
	for name := range got {
		if !want[name] {
			t.Errorf("unexpected page %s (hidden commands and stale pages get none)", name)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "kubectl_rv_version.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DO NOT EDIT", "## kubectl rv version\n", "kubectl rv version [flags]", "--client", "### Examples", "[kubectl rv](kubectl_rv.md)", "### Options inherited from parent commands", "--kubeconfig", "(../exit-codes.md)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("kubectl_rv_version.md lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(string(page), "Auto generated") {
		t.Error("pages must not carry cobra's dated auto-generated tag")
	}
	lag, err := os.ReadFile(filepath.Join(out, "kubectl_rv_lag.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(lag), "[docs/lag.md](../lag.md)") {
		t.Errorf("kubectl_rv_lag.md does not link its guide:\n%s", lag)
	}
}

func TestPagesDoNotDependOnWhoGeneratesThem(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	t.Setenv("HOME", "/home/alice")
	if err := run(a, "../../docs"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "/root")
	if err := run(b, "../../docs"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(a)
	for _, e := range entries {
		x, _ := os.ReadFile(filepath.Join(a, e.Name()))
		y, _ := os.ReadFile(filepath.Join(b, e.Name()))
		if string(x) != string(y) {
			t.Errorf("%s differs between two HOMEs", e.Name())
		}
		if strings.Contains(string(x), "/home/alice") {
			t.Errorf("%s holds the generating user's HOME", e.Name())
		}
	}
}
