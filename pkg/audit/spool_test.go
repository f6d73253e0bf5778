package audit

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestSpool: a stream read part of the way through its spool, then Rest,
// gives a copy of the whole stream that reads from the start each time it
// is opened; the copy leaves no file behind.
func TestSpool(t *testing.T) {
	log := strings.Repeat(ok409+"\n", 3000) + okRR + "\n"
	dir := t.TempDir()
	sp, err := NewSpool(NewSource("-", strings.NewReader(log)), dir)
	if err != nil {
		t.Fatal(err)
	}
	src := sp.Source()
	if !src.Spooled() || src.Rereadable() {
		t.Fatalf("the spool's stream: spooled %v, rereadable %v", src.Spooled(), src.Rereadable())
	}
	stop := errors.New("stop")
	n := 0
	if _, err := Decode(context.Background(), src, Options{Workers: 2, Reuse: true}, func(*Event) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) {
		t.Fatalf("decode: %v", err)
	}
	cp, err := sp.Rest()
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Rereadable() || cp.Name != "-" {
		t.Fatalf("the copy: rereadable %v, name %q", cp.Rereadable(), cp.Name)
	}
	for range 2 {
		rc, err := cp.open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		if err != nil || string(b) != log {
			t.Fatalf("the copy holds %d bytes (%v), want the %d of the stream", len(b), err, len(log))
		}
	}
	st, err := Decode(context.Background(), cp, Options{Workers: 2}, func(*Event) error { return nil })
	if err != nil || st.Events != 3001 {
		t.Fatalf("decoding the copy: %d events, %v", st.Events, err)
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the copy is left behind: %v", entries)
	}
	if runtime.GOOS == "linux" && !sp.removed {
		t.Error("the copy was not removed while open")
	}
}

// TestSpoolUnwritable: a copy that cannot be written fails Rest, naming
// the stream, not the reading.
func TestSpoolUnwritable(t *testing.T) {
	sp, err := NewSpool(NewSource("-", strings.NewReader(ok409+"\n")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_ = sp.file.Close() // writes now fail
	if _, err := Decode(context.Background(), sp.Source(), Options{}, func(*Event) error { return nil }); err != nil {
		t.Fatalf("the stream itself reads: %v", err)
	}
	if _, err := sp.Rest(); err == nil || !strings.Contains(err.Error(), "-: keeping a copy") {
		t.Fatalf("Rest: %v", err)
	}
}
