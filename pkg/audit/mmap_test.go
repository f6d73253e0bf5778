package audit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// mapLog writes a log of several blocks (about 30 x MaxLineBytes) whose
// lines differ, and returns it.
func mapLog() string {
	var in strings.Builder
	for i := 0; in.Len() < 30*MaxLineBytes; i++ {
		in.WriteString(strings.Replace(ok409, `"c1"`, fmt.Sprintf(`"c-%d"`, i), 1) + "\n" + started + "\n")
		if i%7 == 0 {
			in.WriteString(okRR + "\n\n")
		}
	}
	return in.String()
}

// decodeFile decodes path with Reuse (so mapped where files are), cloning
// the events, and says whether a block was mapped.
func decodeFile(t *testing.T, path string, fn func(n int)) ([]Event, Stats, error, bool) {
	t.Helper()
	srcs, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	mapped := false
	before := onMapped
	onMapped = func() { mapped = true }
	defer func() { onMapped = before }()
	st, err := Decode(context.Background(), srcs[0], Options{Workers: 3, Reuse: true}, func(e *Event) error {
		got = append(got, cloneEvent(*e))
		if fn != nil {
			fn(len(got))
		}
		return nil
	})
	return got, st, err, mapped
}

// TestDecodeMappedMatchesRead: a file decoded through maps gives the
// events, counts and errors that reading the same bytes gives, whatever
// its end (a last line without a newline, cut short, or a bad line at a
// block's end).
func TestDecodeMappedMatchesRead(t *testing.T) {
	log := mapLog()
	for _, tail := range []string{"", "hello\n" + ok409 + "\n", ok409[:100], ok409} {
		path := filepath.Join(t.TempDir(), "audit.log")
		if err := os.WriteFile(path, []byte(log+tail), 0o600); err != nil {
			t.Fatal(err)
		}
		got, st, err, mapped := decodeFile(t, path, nil)
		if mapped != canMap {
			t.Errorf("tail %q: mapped %v on a system where canMap is %v", tail, mapped, canMap)
		}
		var want []Event
		wst, werr := Decode(context.Background(), NewSource(path, strings.NewReader(log+tail)), Options{Workers: 3, Reuse: true}, func(e *Event) error {
			want = append(want, cloneEvent(*e))
			return nil
		})
		if len(want) < 10000 {
			t.Fatalf("tail %q: only %d events", tail, len(want))
		}
		if i, diff := firstDiff(want, got); diff != "" {
			t.Errorf("tail %q: event %d (-read +mapped):\n%s", tail, i, diff)
		}
		if st != wst || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Errorf("tail %q: stats %+v / %+v, errors %v / %v", tail, wst, st, werr, err)
		}
	}
}

// firstDiff compares two long event lists and returns the first event that
// differs, with cmp's report of it. cmp.Diff of the whole lists (40,000
// events) took over nine minutes under -race, most of the unit tests' time;
// reflect.DeepEqual answers the equal case in well under a second, and cmp
// then explains only the first difference.
func firstDiff(want, got []Event) (int, string) {
	if reflect.DeepEqual(want, got) {
		return -1, ""
	}
	for i := range min(len(want), len(got)) {
		if diff := cmp.Diff(want[i], got[i], cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" {
			return i, diff
		}
	}
	if len(want) != len(got) {
		return min(len(want), len(got)), fmt.Sprintf("%d events read, %d mapped", len(want), len(got))
	}
	return -1, ""
}

// TestDecodeMappedLineTooLong: a line longer than MaxLineBytes in a mapped
// file is the reader's error, at its line.
func TestDecodeMappedLineTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	in := ok409 + "\n" + ok409 + "\n" + strings.Repeat("x", 3*MaxLineBytes) + "\n" + ok409 + "\n"
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err, _ := decodeFile(t, path, nil)
	if err == nil || !strings.Contains(err.Error(), "audit.log:3: line longer than") || len(got) != 2 {
		t.Errorf("%d events, error %v; want 2 and audit.log:3: line longer than", len(got), err)
	}
}

// TestDecodeMappedFileShrinks: a file truncated while it is read (a rotation
// by copy and truncate) is an error that says so, not a crash: its lost
// pages fault where the events' strings are read.
func TestDecodeMappedFileShrinks(t *testing.T) {
	if !canMap {
		t.Skip("files are read, not mapped, on this system")
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(mapLog()), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err, mapped := decodeFile(t, path, func(n int) {
		if n == 1 {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}
	})
	if !mapped || !errors.Is(err, errShrank) || !strings.HasPrefix(err.Error(), path+": ") {
		t.Fatalf("mapped %v, %d events, error %v; want %s: %v", mapped, len(got), err, path, errShrank)
	}
}

// TestDecodeMappedFileGrows: lines written while the file is read are read
// too, as reading to the end does.
func TestDecodeMappedFileGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	log := mapLog()
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	more := strings.Repeat(ok409+"\n", 100)
	got, _, err, _ := decodeFile(t, path, func(n int) {
		if n != 1 {
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(more)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
	})
	var want int
	if _, err := Decode(context.Background(), NewSource(path, strings.NewReader(log+more)), Options{}, func(*Event) error { want++; return nil }); err != nil {
		t.Fatal(err)
	}
	if err != nil || len(got) != want {
		t.Errorf("%d events, error %v; want %d (the lines written while it was read)", len(got), err, want)
	}
}

// TestDecodeMappedStopsWhenFnFails: fn's error ends the decoding of a
// mapped file with that error; the blocks in flight are unmapped after the
// workers stop (go test -race checks the shutdown).
func TestDecodeMappedStopsWhenFnFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(mapLog()), 0o600); err != nil {
		t.Fatal(err)
	}
	srcs, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	for _, at := range []int{1, 10, 5000} {
		n := 0
		_, err := Decode(context.Background(), srcs[0], Options{Workers: 2, Reuse: true}, func(e *Event) error {
			if n++; n == at {
				return stop
			}
			_ = strings.Clone(e.Username)
			return nil
		})
		if !errors.Is(err, stop) || n != at {
			t.Errorf("stop at %d: %d events, error %v", at, n, err)
		}
	}
}

type fakeFault uintptr

func (f fakeFault) Error() string { return "fault" }
func (f fakeFault) Addr() uintptr { return uintptr(f) }

// TestFaultedOnlyTakesFaultsInItsMap: only a fault inside the mapped memory
// is errShrank; a fault elsewhere, or another panic, goes on.
func TestFaultedOnlyTakesFaultsInItsMap(t *testing.T) {
	mem := make([]byte, 4096)
	start := uintptr(unsafe.Pointer(&mem[0]))
	run := func(p any) (err error, repanicked any) {
		defer func() { repanicked = recover() }()
		func() {
			defer faulted(&err, mem)
			panic(p)
		}()
		return err, nil
	}
	if err, re := run(fakeFault(start + 100)); !errors.Is(err, errShrank) || re != nil {
		t.Errorf("a fault inside: error %v, panic %v", err, re)
	}
	for _, p := range []any{fakeFault(start + 4096), fakeFault(start - 1), "boom"} {
		if _, re := run(p); re != p {
			t.Errorf("%v: panic %v, want it to go on", p, re)
		}
	}
}
