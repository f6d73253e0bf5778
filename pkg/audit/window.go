package audit

import "time"

// Window bounds the events read by their requests' receive time
// (requestReceivedTimestamp): Since is inclusive, Until exclusive, and a
// zero bound is none. Every command that reads audit logs takes it from
// --since and --until, so that the same flags keep the same requests.
type Window struct {
	Since, Until time.Time
}

// Holds says whether a request received at t is in the window.
func (w Window) Holds(t time.Time) bool {
	return (w.Since.IsZero() || !t.Before(w.Since)) && (w.Until.IsZero() || t.Before(w.Until))
}
