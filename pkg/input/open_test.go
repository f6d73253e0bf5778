//go:build linux

package input

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestDevZeroStopsAtTheCap(t *testing.T) {
	tests := []struct {
		name string
		read func(f *File) error
	}{
		{"lines", func(f *File) error {
			_, _, err := NewLines(f.Name(), f, MaxDocument).Next()
			return err
		}},
		{"one document", func(f *File) error {
			_, err := ReadAll(f.Name(), f, MaxDocument, "")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(t.Context(), "/dev/zero", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var readErr error
			alloc := allocated(func() { readErr = tt.read(f) })
			var tl *TooLargeError
			if !errors.As(readErr, &tl) || tl.Name != "/dev/zero" {
				t.Fatalf("want a *TooLargeError naming /dev/zero, got %v", readErr)
			}
			if alloc > 4*MaxDocument {
				t.Errorf("allocated %d MiB reading /dev/zero, want under %d MiB", alloc>>20, 4*MaxDocument>>20)
			}
		})
	}
}

// fifo makes a FIFO and returns its path.
func fifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readUntilCancelled reads r (a File) in a goroutine, cancels ctx once
// the first line is in, and returns the error that ended the read.
func readUntilCancelled(t *testing.T, ctx context.Context, cancel func(), f *File) error {
	t.Helper()
	lines := NewLines(f.Name(), f, MaxDocument)
	if _, _, err := lines.Next(); err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := lines.Next()
		done <- err
	}()
	// Give the read time to block, so that cancel has a read to stop.
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not stop when the context was cancelled")
		return nil
	}
}

func TestFIFOReadStopsOnCancel(t *testing.T) {
	path := fifo(t)
	// O_RDWR opens without waiting for a reader; the writer stays open and
	// never writes a second line.
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString("apiVersion: v1\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	f, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.stop == nil {
		t.Error("a FIFO should be stopped through its read deadline")
	}
	err = readUntilCancelled(t, ctx, cancel, f)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("want an error wrapping context.Canceled, got %v", err)
	}
}

func TestBlockingReaderStopsOnCancel(t *testing.T) {
	// A reader that cannot be interrupted, like standard input from a
	// terminal: an io.Pipe whose writer never writes a second line.
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte("a: 1\n")) }()
	ctx, cancel := context.WithCancel(t.Context())
	f := NewReader(ctx, "-", pr)
	err := readUntilCancelled(t, ctx, cancel, f)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("want an error wrapping context.Canceled, got %v", err)
	}
	if want := "<stdin>: reading stopped: context canceled"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestOpenFIFOWithoutWriterStopsOnCancel(t *testing.T) {
	path := fifo(t)
	t.Cleanup(func() {
		// Let the open still waiting in its goroutine return.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := Open(ctx, path, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("want an error wrapping context.Canceled, got %v", err)
	}
}

func TestRegularFileSeeks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(t.Context(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, _ := io.ReadAll(f)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	again, _ := io.ReadAll(f)
	if string(first) != "abc\n" || string(again) != "abc\n" {
		t.Errorf("read %q, then %q after seeking to the start; want abc twice", first, again)
	}
}
