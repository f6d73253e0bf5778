package follow

import (
	"fmt"
	"sync"
)

// Warnings keeps the warnings of a run whose driver warns from several
// goroutines (Stream's targets), and hands each on to a callback as it
// comes: the engines that follow the cluster (churn, leases) report them
// and show them live alike.
type Warnings struct {
	// forward, when set, receives each warning as it comes.
	forward func(format string, args ...any)
	// mu guards list.
	mu   sync.Mutex
	list []string
}

// NewWarnings returns an empty Warnings that hands each warning on to
// forward (nil for none).
func NewWarnings(forward func(format string, args ...any)) *Warnings {
	return &Warnings{forward: forward}
}

// Warnf keeps a warning and hands it on; it is safe for concurrent use.
func (w *Warnings) Warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	w.mu.Lock()
	w.list = append(w.list, msg)
	w.mu.Unlock()
	if w.forward != nil {
		w.forward("%s", msg)
	}
}

// List returns the warnings so far.
func (w *Warnings) List() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}
