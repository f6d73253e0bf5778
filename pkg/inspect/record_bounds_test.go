//go:build linux

package inspect

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/internal/fifotest"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

func TestReplayDevZeroStopsAtTheCap(t *testing.T) {
	f, err := input.Open(t.Context(), "/dev/zero", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ReplayRecording(f, Config{}, func(RecordingHeader, *RecordingError) (Sink, error) {
		t.Fatal("a sink was opened for /dev/zero")
		return nil, nil
	})
	runtime.ReadMemStats(&after)
	var bad *RecordingError
	if !errors.As(err, &bad) || bad.Line != 1 || !errors.Is(err, input.ErrTooLarge) {
		t.Fatalf("want a *RecordingError for line 1 wrapping input.ErrTooLarge, got %v", err)
	}
	if want := "line 1: the line is larger than 64 MiB, the most one line may hold: a recording holds one event per line"; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want prefix %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*input.MaxDocument {
		t.Errorf("allocated %d MiB reading /dev/zero, want under %d MiB", alloc>>20, 4*input.MaxDocument>>20)
	}
}

func TestReplayFIFOStopsOnCancel(t *testing.T) {
	// A recorder that wrote the header and nothing since.
	header := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z"}` + "\n"
	path := fifotest.Stalled(t, "rec.jsonl", header)
	ctx, cancel := context.WithCancel(t.Context())
	f, err := input.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan error, 1)
	go func() {
		_, err := ReadRecording(f)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		var bad *RecordingError
		if !errors.Is(err, context.Canceled) || !errors.As(err, &bad) || bad.Line != 2 {
			t.Errorf("want a *RecordingError for line 2 wrapping context.Canceled, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading the recording did not stop when the context was cancelled")
	}
}
