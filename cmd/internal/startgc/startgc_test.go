package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestRestoredAfterFirstCollection: once a collection has run, the percent
// is Go's again (GOGC's, 100 by default), so that long-running commands
// keep the default pacing.
func TestRestoredAfterFirstCollection(t *testing.T) {
	want := 100
	if v, set := os.LookupEnv("GOGC"); set {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("GOGC=%q is not a number", v)
		}
		want = n
	}
	// The finalizer runs on its own goroutine after a collection: give it
	// a bounded number of collections and yields.
	for i := 0; i < 1000 && gcPercent() != want; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if got := gcPercent(); got != want {
		t.Fatalf("GC percent after the first collections = %d, want %d (Percent is %d)", got, want, Percent)
	}
}
