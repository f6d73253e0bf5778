// Package redact keeps Secret values inside the process. It is the one
// place that knows which parts of an object are secret: the values of a
// v1 Secret's data and stringData, and kubectl's last-applied-configuration
// annotation of a Secret, which holds a copy of them.
//
// Every engine that returns object content passes it through a Redactor
// (or the pure function Secret): objects, patches written against a
// Secret, and messages and errors that might quote a value. A Redactor
// built with show=true (--show-secrets) changes nothing but still stamps
// the result, so that the printing layer can tell "redacted" and "shown on
// request" from "forgotten": pkg/output refuses to print a Secret that has
// no Stamp (see Check).
//
// A value becomes a marker: Hash, "sha256:" and 16 hex digits of the
// SHA-256 of the value, so that equal values look equal and a change still
// shows as a change; or Hidden, a constant, where even that is too much.
//
// Package redact does not decide whether to redact: callers pass the
// --show-secrets choice in.
package redact
