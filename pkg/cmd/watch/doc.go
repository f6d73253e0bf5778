// Package watch is kubectl rv watch: its flags, options and wiring to
// the engine pkg/inspect (live, --record, --replay and its travel views),
// and simulate replay, the deprecated alias of those views.
package watch
