package output

import (
	"strings"
	"time"
)

// NiceStep returns a round tick interval (1, 2 or 5 times a power of ten
// below a second; round clock units from a second up) giving about n ticks
// over span, for the time axes of the report pictures.
func NiceStep(span time.Duration, n int) time.Duration {
	raw := float64(span) / float64(n)
	steps := []time.Duration{time.Microsecond, 2 * time.Microsecond, 5 * time.Microsecond}
	for base := time.Duration(10) * time.Microsecond; base < time.Second; base *= 10 {
		steps = append(steps, base, 2*base, 5*base)
	}
	for _, d := range []time.Duration{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400} {
		steps = append(steps, d*time.Second)
	}
	for _, s := range steps {
		if float64(s) >= raw {
			return s
		}
	}
	return time.Hour
}

// AxisEnd rounds end up to a tick of NiceStep(end, n), so that an axis
// ends on a label and the last marks are not drawn on the plot's edge.
func AxisEnd(end time.Duration, n int) time.Duration {
	if end <= 0 {
		return time.Millisecond
	}
	step := NiceStep(end, n)
	return (end + step - 1) / step * step
}

// TickLabel prints a round axis time short: 250ms, 10s, 1m, 1m30s.
func TickLabel(t time.Duration) string {
	s := t.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
