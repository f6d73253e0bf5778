// Package scenario is the YAML scenario format of kubectl rv simulate: its
// types, a strict parser (unknown fields, duplicate keys, wrong types and
// impossible settings are errors naming the line), defaults, the path rules
// of changes and invariants, the built-in scenarios, and LoadFile, which
// reads a scenario file through pkg/input (at most 64 MiB, stopped by the
// context).
//
// Paths are fieldpath.Path values read by managedfields.ParsePath (the
// grammar of owners --field); this package only adds that a path starts
// with a field name and never names a field the server maintains.
//
// It does not run anything: pkg/simulate does.
package scenario
