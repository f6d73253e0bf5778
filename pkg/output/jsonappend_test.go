package output

import (
	"strings"
	"testing"
)

func TestAppendJSONIndent(t *testing.T) {
	for depth := range 40 {
		want := "\n" + strings.Repeat("  ", depth)
		if got := string(AppendJSONIndent(nil, depth)); got != want {
			t.Fatalf("depth %d: %q, want %q", depth, got, want)
		}
	}
}
