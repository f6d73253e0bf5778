// Package scenario is the YAML scenario format of kubectl rv simulate: its
// types, a strict parser (unknown fields, duplicate keys, wrong types and
// impossible settings are errors naming the line), defaults, dotted paths
// with [i] and [key=value] steps, and the built-in scenarios.
//
// It does not run anything: pkg/simulate does.
package scenario
