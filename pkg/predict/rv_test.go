package predict

import (
	"strconv"
	"testing"
)

func TestValidResourceVersion(t *testing.T) {
	for rv, want := range map[string]bool{
		"1": true, "219": true, "18446744073709551615": true,
		"": false, "0": false, "007": false, "abc": false, "-1": false, "1.5": false, " 1": false,
		"18446744073709551616": false, "12345678901234567890123456": false, "1\x1b]0;t\a": false,
	} {
		if got := ValidResourceVersion(rv); got != want {
			t.Errorf("ValidResourceVersion(%q) = %v, want %v", rv, got, want)
		}
	}
}

// FuzzValidResourceVersion holds ValidResourceVersion to what the API
// server can parse and hands out: a valid one round-trips through uint64.
func FuzzValidResourceVersion(f *testing.F) {
	for _, rv := range []string{"1", "219", "abc", "-1", "007", "0", "", "12345678901234567890123456", "1\x1b]0;t\a"} {
		f.Add(rv)
	}
	f.Fuzz(func(t *testing.T, rv string) {
		n, err := strconv.ParseUint(rv, 10, 64)
		want := err == nil && n > 0 && strconv.FormatUint(n, 10) == rv
		if got := ValidResourceVersion(rv); got != want {
			t.Errorf("ValidResourceVersion(%q) = %v, want %v", rv, got, want)
		}
	})
}
