package follow

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWarningsKeepAndForward(t *testing.T) {
	var forwarded []string
	var mu sync.Mutex
	w := NewWarnings(func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		forwarded = append(forwarded, fmt.Sprintf(format, args...))
	})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); w.Warnf("target %d: 100%% gone", i) }()
	}
	wg.Wait()
	if len(w.List()) != 4 || len(forwarded) != 4 {
		t.Fatalf("kept %q, forwarded %q", w.List(), forwarded)
	}
	// The message is formatted once: a % in it is not read again.
	if diff := cmp.Diff("target 0: 100% gone", forwardedOne()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// forwardedOne is the forwarded text of one warning.
func forwardedOne() string {
	var got string
	NewWarnings(func(format string, args ...any) { got = fmt.Sprintf(format, args...) }).Warnf("target %d: 100%% gone", 0)
	return got
}
