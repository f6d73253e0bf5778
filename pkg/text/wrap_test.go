package text

import "testing"

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"", 10, ""},
		{"one two three", 7, "one two\nthree"},
		{"one  two\nthree", 80, "one two three"},
		{"a verylongword b", 4, "a\nverylongword\nb"},
		{"abcd efgh", 9, "abcd efgh"},
		{"abcd efgh", 8, "abcd\nefgh"},
	} {
		if got := Wrap(tc.in, tc.width); got != tc.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
