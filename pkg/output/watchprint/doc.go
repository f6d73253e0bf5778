// Package watchprint renders kubectl rv watch: one row per event as it
// arrives (a streaming table whose columns widen as needed, since the rows
// to come are not known), one JSON object per line with -o json, an optional
// readable diff under each row, and the end-of-run summary. It also renders
// the history of a recording (kubectl rv watch --replay --list and --object: the recorded
// objects, one object at a resourceVersion, the diff of two), and its
// Printer is the inspect.Sink of a watch (rows to Out, warnings to ErrOut).
//
// Package watchprint decides how events look, not what they are: the events
// and the summary, the history and its diffs come from pkg/inspect.
package watchprint
