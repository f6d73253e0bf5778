package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
)

// Percent is the GC percent until the first collection.
const Percent = 400

// sentinel is allocated once and dropped: its finalizer runs after the
// first collection. It holds a pointer so that it is not batched with
// other small objects by the tiny allocator, which would delay the
// finalizer.
type sentinel struct{ _ *int }

func init() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	prev := debug.SetGCPercent(Percent)
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		// A percent set since (conflicts turns it off under its memory
		// limit) is the setter's to restore.
		if p := debug.SetGCPercent(prev); p != Percent {
			debug.SetGCPercent(p)
		}
	})
}
