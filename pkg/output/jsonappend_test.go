package output

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzAppendJSONString checks strings are written as encoding/json writes them.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "web", `a"b`, `a\b`, "<&>", "\t\n\x00\x7f", "é名", "\xff", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendJSONString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

func TestAppendJSONIndent(t *testing.T) {
	for depth := range 40 {
		want := "\n" + strings.Repeat("  ", depth)
		if got := string(AppendJSONIndent(nil, depth)); got != want {
			t.Fatalf("depth %d: %q, want %q", depth, got, want)
		}
	}
}
