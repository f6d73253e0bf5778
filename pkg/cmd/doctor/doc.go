// Package doctor is kubectl rv doctor: its flags, options and wiring to
// the engine pkg/doctor.
package doctor
