package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// liveSource is a stream of n event lines that tells what a receiver's
// stream tells a spool, and records what it hears.
type liveSource struct {
	src     Source
	stopped []string
	lost    int64
}

func newLiveSource(r io.Reader, maxSpool int64) *liveSource {
	ls := &liveSource{src: NewSource("https://127.0.0.1:1", r)}
	ls.src.live = &liveStream{maxSpool: maxSpool, stopped: func(reason string) { ls.stopped = append(ls.stopped, reason) },
		lost: func(n int64) { ls.lost += n }}
	return ls
}

func eventLines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		b.WriteString(eventLine(i) + "\n")
	}
	return b.String()
}

// readEvents reads src to its end and returns the auditIDs.
func readEvents(t *testing.T, src Source) []string {
	t.Helper()
	var ids []string
	if _, err := Decode(context.Background(), src, Options{}, func(e *Event) error {
		ids = append(ids, e.AuditID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestSpoolOfALiveStreamStopsAtItsCap: the copy of a receiver's stream
// stops at the cap and says so once; the analysis that then needs the
// stream again gets the copy's whole lines and the rest of the stream,
// read once, the lines between counted as lost; a stream already read to
// its end has nothing more to give (ErrSpoolFull), never a wrong copy.
func TestSpoolOfALiveStreamStopsAtItsCap(t *testing.T) {
	lineLen := int64(len(eventLine(0)) + 1)
	pr, pw := io.Pipe()
	ls := newLiveSource(pr, 10*lineLen+lineLen/2)
	sp, err := NewSpool(ls.src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sp.Close() }()
	go func() {
		_, _ = io.WriteString(pw, eventLines(0, 30))
		_ = pw.Close()
	}()
	rc, err := sp.Source().open()
	if err != nil {
		t.Fatal(err)
	}
	// The first reading stops 25 lines and a half in.
	first := make([]byte, 25*lineLen+lineLen/2)
	if _, err := io.ReadFull(rc, first); err != nil {
		t.Fatal(err)
	}
	if len(ls.stopped) != 1 || !strings.Contains(ls.stopped[0], "--spool-max") {
		t.Fatalf("the receiver heard %q, want the cap once", ls.stopped)
	}
	again, err := sp.Rest()
	if err != nil {
		t.Fatal(err)
	}
	ids := readEvents(t, again)
	// The copy's 10 whole lines, then from line 26 on; lines 10 to 25
	// were read once (and 25, which the first reading cut, too).
	want := []string{}
	for i := range 30 {
		if i < 10 || i >= 26 {
			want = append(want, fmt.Sprint("id-", i))
		}
	}
	if diff := cmp.Diff(want, ids); diff != "" || ls.lost != 16 {
		t.Errorf("read again (-want +got):\n%s\nlost %d, want 16", diff, ls.lost)
	}
	if _, err := again.open(); !errors.Is(err, ErrSpoolFull) {
		t.Errorf("opened a second time: %v, want ErrSpoolFull", err)
	}

	// Read to its end before Rest: nothing left to read again.
	ls2 := newLiveSource(strings.NewReader(eventLines(0, 30)), 10*lineLen)
	sp2, _ := NewSpool(ls2.src, t.TempDir())
	defer func() { _ = sp2.Close() }()
	if got := readEvents(t, sp2.Source()); len(got) != 30 {
		t.Fatalf("the first reading: %d events", len(got))
	}
	if _, err := sp2.Rest(); !errors.Is(err, ErrSpoolFull) || !strings.Contains(err.Error(), "--spool-max") {
		t.Errorf("Rest after the end: %v, want ErrSpoolFull naming --spool-max", err)
	}
}

// TestSpoolStopsInRestWithoutLoss: a copy that reaches its cap while Rest
// reads the rest of the stream loses nothing: the copy, then what Rest
// had read, then the stream.
func TestSpoolStopsInRestWithoutLoss(t *testing.T) {
	lineLen := int64(len(eventLine(0)) + 1)
	ls := newLiveSource(strings.NewReader(eventLines(0, 3000)), 1000*lineLen)
	sp, _ := NewSpool(ls.src, t.TempDir())
	defer func() { _ = sp.Close() }()
	rc, _ := sp.Source().open()
	if _, err := io.ReadFull(rc, make([]byte, 5*lineLen)); err != nil {
		t.Fatal(err)
	}
	again, err := sp.Rest()
	if err != nil {
		t.Fatal(err)
	}
	if ids := readEvents(t, again); len(ids) != 3000 || ids[2999] != "id-2999" || len(ls.stopped) != 1 || ls.lost != 0 {
		t.Errorf("read again: %d events, stopped %q, lost %d; want all 3000, stopped once, none lost", len(ids), ls.stopped, ls.lost)
	}
}

// TestSpoolDiskFull: a full disk (ENOSPC, /dev/full) stops a live
// stream's copy like its cap, the reading going on; another stream's
// copy fails as before, its reading going on too.
func TestSpoolDiskFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full: %v", err)
	}
	defer func() { _ = full.Close() }()
	ls := newLiveSource(strings.NewReader(eventLines(0, 20)), DefaultMaxSpool)
	sp, _ := NewSpool(ls.src, t.TempDir())
	defer func() { _ = sp.Close() }()
	sp.w = full
	if got := readEvents(t, sp.Source()); len(got) != 20 {
		t.Fatalf("the reading: %d events, want 20", len(got))
	}
	if len(ls.stopped) != 1 || !strings.Contains(ls.stopped[0], "is full") {
		t.Errorf("the receiver heard %q, want the disk full", ls.stopped)
	}
	if _, err := sp.Rest(); !errors.Is(err, ErrSpoolFull) {
		t.Errorf("Rest: %v, want ErrSpoolFull", err)
	}
	other, _ := NewSpool(NewSource("-", strings.NewReader(eventLines(0, 20))), t.TempDir())
	defer func() { _ = other.Close() }()
	other.w = full
	if got := readEvents(t, other.Source()); len(got) != 20 {
		t.Fatalf("stdin's reading: %d events, want 20", len(got))
	}
	if _, err := other.Rest(); err == nil || errors.Is(err, ErrSpoolFull) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("stdin's Rest: %v, want the write's error", err)
	}
}
