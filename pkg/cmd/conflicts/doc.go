// Package conflicts is kubectl rv conflicts: its flags, options and
// wiring to the engine pkg/conflicts, over audit events from files, the
// log services' readers (--source) or the webhook receiver (--listen), or
// 409s from /metrics (--live).
package conflicts
