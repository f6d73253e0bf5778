// Package leases is kubectl rv leases: its flags, options and wiring to
// the engine pkg/leases.
package leases
