// Package fifotest makes the FIFO that never ends for the tests of the
// bounded readers (pkg/input and the readers built on it): a writer has
// opened it, written a little and will send nothing more, so a read waits
// until it is cancelled.
package fifotest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Stalled returns the path of a FIFO named name in a fresh temporary
// folder that holds content and whose writer stays open until the test
// ends.
func Stalled(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	if _, err := w.WriteString(content); err != nil {
		t.Fatal(err)
	}
	return path
}
