package doctor

import (
	"strconv"
	"time"
)

func verdict(id string, s Status, observed string, kv []string) Check {
	c := Check{ID: id, Status: s, Observed: observed}
	if len(kv) > 0 {
		c.Values = make(map[string]string, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			c.Values[kv[i]] = kv[i+1]
		}
	}
	return c
}

func pass(id, observed string, kv ...string) Check { return verdict(id, Pass, observed, kv) }
func fail(id, observed string, kv ...string) Check { return verdict(id, Fail, observed, kv) }
func warn(id, observed string, kv ...string) Check { return verdict(id, Warn, observed, kv) }
func skip(id, observed string, kv ...string) Check { return verdict(id, Skip, observed, kv) }

func itoa(n int32) string   { return strconv.Itoa(int(n)) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// ms shows a duration the way kubectl rounds one: 3ms, 1.25s.
func ms(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// msValue is a duration in whole milliseconds, for Check.Values.
func msValue(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
