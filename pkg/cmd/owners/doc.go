// Package owners is kubectl rv owners: its flags, options and wiring to
// the engine pkg/owners (ownership, hazards, drift, --size).
package owners
