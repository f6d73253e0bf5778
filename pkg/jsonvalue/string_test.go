package jsonvalue

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString checks strings are written as encoding/json writes them.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "web", `a"b`, `a\b`, "<&>", "\t\n\x00\x7f", "é名", "\xff", "\u2028", `k:{"name":"nginx"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}
