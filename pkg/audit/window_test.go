package audit

import (
	"testing"
	"time"
)

// TestWindowHolds: Since is inclusive, Until exclusive, a zero bound none.
func TestWindowHolds(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	for _, tc := range []struct {
		name string
		w    Window
		at   time.Time
		want bool
	}{
		{"no bounds", Window{}, t0, true},
		{"at since", Window{Since: t0}, t0, true},
		{"before since", Window{Since: t0}, t0.Add(-time.Nanosecond), false},
		{"before until", Window{Until: t1}, t1.Add(-time.Nanosecond), true},
		{"at until", Window{Until: t1}, t1, false},
		{"inside both", Window{Since: t0, Until: t1}, t0.Add(time.Second), true},
		{"after both", Window{Since: t0, Until: t1}, t1.Add(time.Second), false},
	} {
		if got := tc.w.Holds(tc.at); got != tc.want {
			t.Errorf("%s: Holds(%s) = %v, want %v", tc.name, tc.at, got, tc.want)
		}
	}
}
