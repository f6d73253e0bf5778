// Package watchprint renders kubectl rv watch: one row per event as it
// arrives (a streaming table whose columns widen as needed, since the rows
// to come are not known), one JSON object per line with -o json, an optional
// readable diff under each row, and the end-of-run summary.
//
// Package watchprint decides how events look, not what they are: the events
// and the summary come from pkg/inspect.
package watchprint
