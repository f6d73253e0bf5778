// Package lag is kubectl rv lag: its flags, options and wiring to the
// engine pkg/lag (the scan, --wait and --watch).
package lag
