package lag

import "time"

// Config is what to scan and what counts as lag. NewConfig fills the
// defaults.
type Config struct {
	// Namespace limits namespaced types to one namespace; "" means all.
	Namespace     string
	LabelSelector string
	FieldSelector string
	// ChunkSize is the page size of list calls; 0 lists in one response.
	ChunkSize int64
	// Concurrency is how many types are listed at once.
	Concurrency int
	// FromCache reads from the API server's watch cache (resourceVersion=0)
	// instead of a consistent read: cheaper for etcd, possibly a little stale.
	FromCache bool
	// MaxLag is the largest generation gap that does not count: an object
	// counts when its lag is greater.
	MaxLag int64
	// MinAge is how long a spec may wait before its lag counts.
	MinAge time.Duration
	// For is what an object must reach to be done: its generation
	// observed (the default), or also rolled out.
	For Goal
	// All includes current and no-generation objects in the report.
	All bool
	// Now is the clock; ages are measured against it.
	Now func() time.Time
	// Progress, when set, receives the progress of a scan that has taken
	// more than ProgressAfter, five times a second, and once with Done set
	// when the scan ends (only if it was called before). It is called from
	// one goroutine; the command renders it.
	Progress      func(ScanProgress)
	ProgressAfter time.Duration
	// Warnf receives the problems Follow survives as they happen (a watch
	// retried, a history lost and relisted), from Follow's goroutine, and
	// Run's scan warnings (a type refused); nil drops them.
	Warnf func(format string, args ...any)
	// Mode is what Run does after its scan: return, wait until nothing
	// lags, or watch.
	Mode Mode
	// Timeout is how long Run waits (UntilCaughtUp) or watches
	// (Watching); 0 is no limit.
	Timeout time.Duration
	// Scanned, when set, receives the report after Run's scan, before it
	// waits or watches.
	Scanned func(*Report) error
	// OnChange, when set, receives the report after every change Run
	// watches (Watching), with the items that changed since the last call
	// (Diff).
	OnChange func(rep *Report, changed []Item) error
}

// ScanProgress is how far a scan is.
type ScanProgress struct {
	TypesDone, Types int
	Objects          int64
	// Done says that the scan ended: the last call.
	Done bool
}

// The defaults.
const (
	DefaultChunkSize     = 500
	DefaultConcurrency   = 4
	DefaultProgressAfter = time.Second
)

// NewConfig returns a Config for all namespaces with the defaults: pages of
// 500, four types at a time, consistent reads, any lag counts.
func NewConfig() Config {
	return Config{
		ChunkSize:     DefaultChunkSize,
		Concurrency:   DefaultConcurrency,
		Now:           time.Now,
		ProgressAfter: DefaultProgressAfter,
	}
}
