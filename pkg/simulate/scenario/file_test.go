//go:build linux

package scenario

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/fifotest"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

func TestLoadFile(t *testing.T) {
	src, err := os.ReadFile("builtin/two-clients.yaml")
	if err != nil {
		t.Fatal(err)
	}
	unnamed := strings.Replace(string(src), "name: two-clients\n", "", 1)
	path := filepath.Join(t.TempDir(), "race.yaml")
	if err := os.WriteFile(path, []byte(unnamed), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, stdin, want string
	}{
		{"a file names an unnamed scenario", path, "", "race"},
		{"so does stdin", "-", unnamed, "stdin"},
		{"a named scenario keeps its name", "-", string(src), "two-clients"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := LoadFile(t.Context(), tt.path, strings.NewReader(tt.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if sc.Name != tt.want {
				t.Errorf("name %q, want %q", sc.Name, tt.want)
			}
		})
	}
	_, err = LoadFile(t.Context(), "-", strings.NewReader("apiVersion: x\nkind: Deployment\n"))
	if want := "<stdin>:2: not a Scenario"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want prefix %q", err, want)
	}
}

func TestLoadFileDevZeroStopsAtTheCap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := LoadFile(t.Context(), "/dev/zero", nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, input.ErrTooLarge) {
		t.Fatalf("want an error wrapping input.ErrTooLarge, got %v", err)
	}
	want := "reading the scenario: /dev/zero: the file is larger than 64 MiB, the most one file may hold: check that this is the file you meant"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*input.MaxDocument {
		t.Errorf("allocated %d MiB reading /dev/zero, want under %d MiB", alloc>>20, 4*input.MaxDocument>>20)
	}
}

func TestLoadFileFIFOStopsOnCancel(t *testing.T) {
	path := fifotest.Stalled(t, "scenario.yaml", "apiVersion: rv.kubectl-rv.dev/v1alpha1\n")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := LoadFile(ctx, path, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("want an error wrapping context.Canceled, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LoadFile did not stop when the context was cancelled")
	}
}
