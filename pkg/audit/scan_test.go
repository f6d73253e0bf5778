package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// byJSON is what the scanner must match: encoding/json into wireEvent.
func byJSON(line string) (kind, apiVersion string, ev Event, err error) {
	var w wireEvent
	err = json.Unmarshal([]byte(line), &w)
	return w.Kind, w.APIVersion, w.event(), err
}

type scanResult struct {
	Kind, APIVersion string
	Event            Event
}

func TestScannerReadsRealEventsItself(t *testing.T) {
	real, err := os.ReadFile("testdata/update-409.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]string{
		"409":              ok409,
		"request-response": okRR,
		"started":          started,
		"control plane":    strings.TrimSpace(string(real)),
		"escapes":          strings.Replace(ok409, `"the object has been modified"`, `"caf\u00e9 \"x\" \ud83d\ude00 \ud800 tab\t/\/"`, 1),
		"utf-8":            strings.Replace(ok409, `ctrl/v1`, "ctrl/é/\xff", 1),
		"impersonated":     strings.Replace(ok409, `"userAgent"`, `"impersonatedUser":{"username":"x","extra":{"a":null,"authentication.kubernetes.io/pod-name":[null,"p"]}},"userAgent"`, 1),
		"nulls":            `{"kind":"Event","apiVersion":"audit.k8s.io/v1","user":null,"objectRef":null,"responseStatus":{"code":null,"details":null},"impersonatedUser":null,"stageTimestamp":null}`,
		"white space":      " {\"kind\" : \"Event\" ,\r\n\"apiVersion\":\"audit.k8s.io/v1\",\"x\":[1, -2.5e+3, true, {\"a\":[]}, \"\"]}\t",
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			var ev Event
			kind, apiVersion, ok := scanEvent(line, &ev, nil)
			if !ok {
				t.Fatalf("the scanner left a valid event to encoding/json")
			}
			wk, wa, wev, err := byJSON(line)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(scanResult{wk, wa, wev}, scanResult{kind, apiVersion, ev}, cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" {
				t.Errorf("(-encoding/json +scanner):\n%s", diff)
			}
		})
	}
}

func TestScannerLeavesSubtleLinesToEncodingJSON(t *testing.T) {
	for name, line := range map[string]string{
		"duplicate key":     `{"kind":"Event","kind":"Event"}`,
		"case-folded key":   `{"Kind":"Event"}`,
		"escaped key":       `{"kin\u0064":"Event"}`,
		"escaped pod key":   `{"user":{"extra":{"authentication.kubernetes.io\/pod-name":["p"]}}}`,
		"type mismatch":     `{"kind":1}`,
		"int with fraction": `{"responseStatus":{"code":409.0}}`,
		"bad time":          `{"stageTimestamp":"yesterday"}`,
		"trailing garbage":  `{"kind":"Event"} x`,
		"not an object":     `[]`,
		"control byte":      "{\"kind\":\"a\x01\"}",
		"bad escape":        `{"kind":"\x"}`,
		"unterminated":      `{"kind":"Event"`,
		"leading zero":      `{"x":01}`,
		"deep":              `{"x":` + strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1) + `}`,
		"escaped timestamp": `{"stageTimestamp":"2026-11-24T14:21:55.45\u0030Z"}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, ok := scanEvent(line, &Event{}, nil); ok {
				t.Errorf("the scanner accepted %s", line)
			}
		})
	}
}

// FuzzScannerMatchesEncodingJSON holds the scanner to encoding/json: a
// line it reads must be one encoding/json reads the same; a line
// encoding/json rejects (a bad line) it must leave to encoding/json.
func FuzzScannerMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{ok409, okRR, started, `{"kind":"Event","user":{"extra":{"authentication.kubernetes.io/pod-name":["a","b"]}}}`,
		`{"message":"\ud83d\ude00\ud800\u0041\"","x":[{"y":null},1e5,-0.5]}`, "{\"a\":\"\xc3\x28\"}", `{"responseStatus":{"code":-12}}`,
		// The plain success status (read at once), and lines that look like it.
		`{"responseStatus":{"metadata":{},"code":200}}`, `{"responseStatus":{"metadata":{},"code":099}}`,
		`{"responseStatus":{"metadata":{},"code":2000}}`, `{"responseStatus":{"metadata":{},"code":409,"reason":"Conflict"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var ev Event
		kind, apiVersion, ok := scanEvent(line, &ev, nil)
		wk, wa, wev, err := byJSON(line)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("the scanner read a line encoding/json rejects (%v): %q", err, line)
		}
		if diff := cmp.Diff(scanResult{wk, wa, wev}, scanResult{kind, apiVersion, ev}, cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" {
			t.Errorf("%q (-encoding/json +scanner):\n%s", line, diff)
		}
	})
}

// TestDecodeSmallBlocks cuts the stream into many blocks, so that lines,
// errors and line numbers cross block boundaries.
func TestDecodeSmallBlocks(t *testing.T) {
	defer func(v int) { blockBytes = v }(blockBytes)
	blockBytes = 1000
	in := strings.Repeat(ok409+"\n"+started+"\n\n", 40) + "hello\n" + ok409 + "\n"
	var n int
	st, err := Decode(context.Background(), NewSource("audit.log", strings.NewReader(in)), Options{Workers: 3}, func(e *Event) error {
		if e.Code != 409 {
			t.Errorf("event %d: code %d", n, e.Code)
		}
		n++
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "audit.log:121: not JSON") {
		t.Errorf("error %v, want audit.log:121: not JSON", err)
	}
	if diff := cmp.Diff(Stats{Lines: 121, Events: 40, OtherStages: 40, Skipped: 40}, st); diff != "" || n != 40 {
		t.Errorf("%d events; stats (-want +got):\n%s", n, diff)
	}
}

// BenchmarkDecode decodes lines shaped like the test control plane's
// events (about 1.3 KB at Metadata level).
func BenchmarkDecode(b *testing.B) {
	real, err := os.ReadFile("testdata/update-409.json")
	if err != nil {
		b.Fatal(err)
	}
	log := strings.Repeat(strings.TrimSpace(string(real))+"\n", 20000)
	for _, workers := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[workers], func(b *testing.B) {
			b.SetBytes(int64(len(log)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Decode(context.Background(), NewSource("bench.log", strings.NewReader(log)), Options{Workers: workers}, func(*Event) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScanEvent compares the scanner with encoding/json on one line.
func BenchmarkScanEvent(b *testing.B) {
	real, err := os.ReadFile("testdata/update-409.json")
	if err != nil {
		b.Fatal(err)
	}
	line := strings.TrimSpace(string(real))
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		var ev Event
		for b.Loop() {
			if _, _, ok := scanEvent(line, &ev, nil); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, _, err := byJSON(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeStopsWhenFnFails: fn's error ends Decode with that error, the
// workers and the reader stopped (go test -race checks the shutdown).
func TestDecodeStopsWhenFnFails(t *testing.T) {
	defer func(v int) { blockBytes = v }(blockBytes)
	blockBytes = MaxLineBytes + 2
	in := strings.Repeat(ok409+"\n", 5000)
	stop := errors.New("stop")
	n := 0
	_, err := Decode(context.Background(), NewSource("audit.log", strings.NewReader(in)), Options{Workers: 2}, func(*Event) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("error %v after %d events, want stop after 10", err, n)
	}
}

// TestDecodeReuseMatches: with Reuse, blocks are recycled once handed on;
// events copied during fn are the same as without it, in the same order,
// with the same stats and error, and far less is allocated. The log is
// about 15 blocks long (a block is at least 2 MB), so that most
// blocks are reused and lines cross their ends.
func TestDecodeReuseMatches(t *testing.T) {
	var in strings.Builder
	for i := 0; in.Len() < 30*MaxLineBytes; i++ {
		in.WriteString(strings.Replace(ok409, `"c1"`, fmt.Sprintf(`"c-%d"`, i), 1) + "\n" + started + "\n")
		if i%7 == 0 {
			in.WriteString(okRR + "\n\n")
		}
	}
	for _, tail := range []string{"", "hello\n" + ok409 + "\n", ok409[:100]} {
		var runs [2][]Event
		var stats [2]Stats
		var errs [2]string
		for i, reuse := range []bool{false, true} {
			st, err := Decode(context.Background(), NewSource("audit.log", strings.NewReader(in.String()+tail)), Options{Workers: 3, Reuse: reuse}, func(e *Event) error {
				runs[i] = append(runs[i], cloneEvent(*e))
				return nil
			})
			stats[i] = st
			if err != nil {
				errs[i] = err.Error()
			}
		}
		if len(runs[0]) < 10000 {
			t.Fatalf("tail %q: only %d events", tail, len(runs[0]))
		}
		if i, diff := firstDiff(runs[0], runs[1]); diff != "" {
			t.Errorf("tail %q: event %d (-fresh blocks +reused):\n%s", tail, i, diff)
		}
		if stats[0] != stats[1] || errs[0] != errs[1] {
			t.Errorf("tail %q: stats %+v / %+v, errors %q / %q", tail, stats[0], stats[1], errs[0], errs[1])
		}
	}
	// Twice as long: the blocks in flight (a few, the same with or without
	// Reuse) weigh less beside the ones reused.
	var allocs [2]uint64
	log := in.String() + in.String()
	for i, reuse := range []bool{false, true} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := Decode(context.Background(), NewSource("audit.log", strings.NewReader(log)), Options{Workers: 3, Reuse: reuse}, func(*Event) error { return nil }); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		allocs[i] = after.TotalAlloc - before.TotalAlloc
	}
	if allocs[1] > allocs[0]/2 {
		t.Errorf("%d bytes allocated with Reuse, %d without: blocks are not reused", allocs[1], allocs[0])
	}
	t.Logf("%d bytes of log: %d bytes allocated with Reuse, %d without", len(log), allocs[1], allocs[0])
}

// cloneEvent copies e's strings out of the block they point into.
func cloneEvent(e Event) Event {
	for _, p := range e.strings() {
		*p = strings.Clone(*p)
	}
	return e
}

func TestUTCTimeMatchesUnmarshalJSON(t *testing.T) {
	fast := []string{"2026-11-24T14:21:55Z", "2026-11-24T14:21:55.1Z", "2026-11-24T14:21:55.000126Z",
		"2026-11-24T14:21:55.123456789Z", "2024-02-29T23:59:59.5Z", "2000-02-29T00:00:00Z", "0000-01-01T00:00:00Z"}
	other := []string{"2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-11-31T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-11-24T24:00:00Z", "2026-11-24T14:60:00Z", "2026-11-24T14:21:60Z", "2026-11-24T14:21:55.Z",
		"2026-11-24T14:21:55.1234567890Z", "2026-11-24t14:21:55Z", "2026-11-24T14:21:55z", "2026-11-24T14:21:55+01:00",
		"2026-11-24T14:21:55.12a4Z", "+026-11-24T14:21:55Z", "20a6-11-24T14:21:55Z", "202/-11-24T14:21:55Z",
		"2026-1a-24T14:21:55Z", "2026-11-24T1:21:55.Z", "2026-11-24T14:21:5aZ", "2026-1-24T14:21:55.12Z", ""}
	for _, v := range append(fast, other...) {
		got, ok := utcTime(v)
		var want time.Time
		err := want.UnmarshalJSON([]byte(`"` + v + `"`))
		if ok != slices.Contains(fast, v) {
			t.Errorf("utcTime(%q): ok %v", v, ok)
		}
		if ok && (err != nil || !got.Equal(want) || got.Location() != want.Location()) {
			t.Errorf("utcTime(%q) = %v; UnmarshalJSON: %v, %v", v, got, want, err)
		}
	}
}

// FuzzMemoMatchesScanner holds the memo (see valueMemo) to the scanner: a
// line read after another, which may have left its user object and other
// values in the memo, reads as it does without one, ok or not.
func FuzzMemoMatchesScanner(f *testing.F) {
	user := `"user":{"username":"u","groups":["g"],"extra":{"authentication.kubernetes.io/pod-name":["p"]}}`
	cut := strings.Replace(ok409, `"userAgent"`, `"annotations":{"a":"b"},"userAgent"`, 1)
	for _, s := range [][2]string{
		{ok409, ok409}, {ok409, okRR}, {okRR, started}, {cut, cut},
		{`{"kind":"Event",` + user + `}`, `{"kind":"Event",` + user + `,"kind":"x"}`},
		{`{"kind":"Event",` + user + `}`, `{"kind":"Event",` + strings.TrimSuffix(user, "}") + `,"username":"v"}}`},
		{`{"kind":"Event",` + user + `}`, `{"kind":"Event",` + user[:len(user)-3]},
		{`{"x":{"a":[1,{"b":null}]},"kind":"Event"}`, `{"x":{"a":[1,{"b":null}]}}}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, first, line string) {
		memo := newValueMemo()
		var ev, want Event
		scanEvent(first, &ev, memo)
		scanEvent(line, &ev, memo)
		kind, apiVersion, ok := scanEvent(line, &ev, memo)
		wk, wa, wok := scanEvent(line, &want, nil)
		if ok != wok {
			t.Fatalf("%q after %q: read %v with the memo, %v without", line, first, ok, wok)
		}
		if diff := cmp.Diff(scanResult{wk, wa, want}, scanResult{kind, apiVersion, ev}, cmp.AllowUnexported(Event{}, KeyHash{})); ok && diff != "" {
			t.Errorf("%q after %q (-without +with the memo):\n%s", line, first, diff)
		}
	})
}

// TestMemoReadsRepeatedValues: the second of two events of one client
// takes its user object and annotations from the memo, and reads the same.
func TestMemoReadsRepeatedValues(t *testing.T) {
	line := strings.Replace(ok409, `"userAgent"`, `"annotations":{"authorization.k8s.io/decision":"allow"},"userAgent"`, 1)
	memo := newValueMemo()
	var first, second Event
	if _, _, ok := scanEvent(line, &first, memo); !ok {
		t.Fatal("not read")
	}
	hits := 0
	for b := range memo.buckets {
		for i := range memo.buckets[b] {
			if e := &memo.buckets[b][i]; e.raw != "" {
				hits++
				if !strings.Contains(line, e.raw) {
					t.Errorf("the memo holds %q, not in the line", e.raw)
				}
			}
		}
	}
	if hits != 2 {
		t.Fatalf("the memo holds %d values, want the user object and the annotations", hits)
	}
	if _, _, ok := scanEvent(line, &second, memo); !ok {
		t.Fatal("not read with the memo")
	}
	if diff := cmp.Diff(first, second, cmp.AllowUnexported(Event{}, KeyHash{})); diff != "" || second.Username == "" || second.PodName == "" {
		t.Errorf("(-first +second) %s", diff)
	}
}

// TestSpecialMarksFirstSpecialByte: the lowest bit special sets is the
// high bit of the first quote, backslash, control or non-ASCII byte, for
// every byte value at every place among plain bytes and after random
// ones.
func TestSpecialMarksFirstSpecialByte(t *testing.T) {
	first := func(b []byte) int {
		for i, c := range b {
			if isSpecial(c) {
				return i
			}
		}
		return 8
	}
	check := func(b []byte) {
		t.Helper()
		m, want := special(word(string(b))), first(b)
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) / 8
		}
		if got != want || m != 0 && m&(1<<(8*got+7)) == 0 {
			t.Fatalf("special(%q) = %#x: first special byte %d, want %d", b, m, got, want)
		}
	}
	for c := range 256 {
		for p := range 8 {
			b := []byte("abcdefgh")
			b[p] = byte(c)
			check(b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b [8]byte
		for i := range b {
			// Mostly plain bytes, so that the first special one is anywhere.
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		check(b[:])
	}
}

// TestUTCTimeMatchesDate: utcTime's time is time.Date's, bit for bit
// (==, not only Equal), on every day of the first and last years it reads,
// of 1968 to 2104, and of 20,000 random days, at random times.
func TestUTCTimeMatchesDate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(d time.Time) {
		t.Helper()
		h, mi, s, ns := rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1e9)
		want := time.Date(d.Year(), d.Month(), d.Day(), h, mi, s, ns, time.UTC)
		v := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%09dZ", d.Year(), d.Month(), d.Day(), h, mi, s, ns)
		if got, ok := utcTime(v); !ok || got != want {
			t.Fatalf("utcTime(%q) = %#v, %v; want %#v", v, got, ok, want)
		}
	}
	for _, span := range [][2]int{{0, 3}, {1968, 2104}, {9996, 9999}} {
		for d := time.Date(span[0], 1, 1, 0, 0, 0, 0, time.UTC); d.Year() <= span[1]; d = d.AddDate(0, 0, 1) {
			check(d)
		}
	}
	first := time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 20000 {
		check(first.AddDate(0, 0, rng.IntN(3652425)))
	}
}
