package audit

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenRecord: the record is a new file, 0600; what is at the path
// already (a file, a symbolic link) is refused and left as it was, unless
// appending to a regular file only its owner may read.
func TestOpenRecord(t *testing.T) {
	dir := t.TempDir()
	put := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	target := put("target", "secret\n", 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		path    string
		append  bool
		wantErr string
	}{
		{"a new file", filepath.Join(dir, "new.log"), false, ""},
		{"an existing file", put("old.log", "kept\n", 0o600), false, "the file exists"},
		{"a symbolic link", link, false, "the file exists"},
		{"appending to a file of its owner's", put("mine.log", "kept\n", 0o600), true, ""},
		{"appending to a new file", filepath.Join(dir, "new2.log"), true, ""},
		{"appending to a file others may read", put("shared.log", "kept\n", 0o644), true, "chmod 600"},
		{"appending through a symbolic link", link, true, "symbolic link"},
		{"appending to a directory", dir, true, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			f, err := OpenRecord(tc.path, tc.append)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--record") {
					t.Fatalf("OpenRecord: %v, want an error naming --record and saying %q", err, tc.wantErr)
				}
				if after, _ := os.ReadFile(tc.path); string(after) != string(before) {
					t.Errorf("the file changed: %q, was %q", after, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("line\n"); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			fi, _ := os.Lstat(tc.path)
			after, _ := os.ReadFile(tc.path)
			if fi.Mode() != 0o600 || string(after) != string(before)+"line\n" {
				t.Errorf("mode %v, content %q: want 0600, %q", fi.Mode(), after, string(before)+"line\n")
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "secret\n" {
		t.Errorf("the symbolic link's target changed: %q", b)
	}
}

// TestListenFailedBindLeavesFilesAlone: when the address is taken, the
// record's path (a file, a symbolic link, nothing) and the webhook
// kubeconfig's are left as they were: nothing created, truncated or
// removed.
func TestListenFailedBindLeavesFilesAlone(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.log")
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link.log")
	for _, p := range []string{existing, target} {
		if err := os.WriteFile(p, []byte("kept\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "webhook.kubeconfig")
	for _, rec := range []struct {
		path   string
		append bool
	}{{existing, false}, {existing, true}, {link, false}, {link, true}, {filepath.Join(dir, "none.log"), false}} {
		_, err := Listen(ListenConfig{Addr: taken.Addr().String(), WebhookKubeconfig: kubeconfig, RecordPath: rec.path, RecordAppend: rec.append})
		if err == nil || !strings.Contains(err.Error(), "--listen") {
			t.Fatalf("Listen on a taken address: %v", err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the directory holds %d entries, want the 3 made before", len(entries))
	}
	for _, p := range []string{existing, target} {
		if b, _ := os.ReadFile(p); string(b) != "kept\n" {
			t.Errorf("%s: %q, want it kept", p, b)
		}
	}
}

// TestListenRecordsOnceListening: the record is created 0600 when the
// receiver listens; a record that exists is refused before anything is
// served, and the webhook kubeconfig is then not written either.
func TestListenRecordsOnceListening(t *testing.T) {
	dir := t.TempDir()
	rec, kubeconfig := filepath.Join(dir, "received.log"), filepath.Join(dir, "webhook.kubeconfig")
	l := startListener(t, ListenConfig{RecordPath: rec})
	got := readAll(l)
	if code := send(t, l.URL(), eventList(0, 2, false)); code != 200 {
		t.Fatalf("POST: %d", code)
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := <-got
	if err := l.End(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(rec)
	fi, _ := os.Stat(rec)
	if fi.Mode() != 0o600 || string(b) != strings.Join(lines, "\n")+"\n" {
		t.Errorf("the record: mode %v, %q; want 0600 and the events passed on", fi.Mode(), b)
	}
	_, err := Listen(ListenConfig{Addr: "127.0.0.1:0", WebhookKubeconfig: kubeconfig, RecordPath: rec})
	if err == nil || !strings.Contains(err.Error(), "the file exists") {
		t.Fatalf("a second Listen with the same record: %v", err)
	}
	if _, err := os.Lstat(kubeconfig); err == nil {
		t.Error("the webhook kubeconfig was written though the record was refused")
	}
	if b2, _ := os.ReadFile(rec); string(b2) != string(b) {
		t.Error("the refused record changed")
	}
	// The kubeconfig refused: the record made for it is removed.
	if err := os.WriteFile(kubeconfig, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec2 := filepath.Join(dir, "second.log")
	if _, err := Listen(ListenConfig{Addr: "127.0.0.1:0", WebhookKubeconfig: kubeconfig, RecordPath: rec2}); err == nil || !strings.Contains(err.Error(), "--webhook-kubeconfig") {
		t.Fatalf("Listen with an existing kubeconfig: %v", err)
	}
	if _, err := os.Lstat(rec2); err == nil {
		t.Error("the record made before the kubeconfig was refused is left behind")
	}
}

// failingWriter fails every write, as a record on a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestListenerRecordFailureKeepsTheCapture: a record that cannot be
// written stops, the capture goes on, and End says so.
func TestListenerRecordFailureKeepsTheCapture(t *testing.T) {
	l := startListener(t, ListenConfig{Record: failingWriter{}})
	got := readAll(l)
	for i := range 3 {
		if code := send(t, l.URL(), eventList(i*2, 2, false)); code != 200 {
			t.Fatalf("POST %d: %d", i, code)
		}
	}
	_ = l.Close(context.Background())
	if lines := <-got; len(lines) != 6 {
		t.Errorf("%d events passed on, want 6", len(lines))
	}
	if err := l.End(context.Background()); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "--record") {
		t.Errorf("End: %v, want the record's error", err)
	}
}
