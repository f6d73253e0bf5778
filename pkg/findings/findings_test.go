package findings

import (
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

var churnish = Vocabulary{{Name: "loop", Noun: "self-loop", Help: "a manager rewriting its own field"}, {Name: "fight", Noun: "fight", Help: "two managers taking a field from each other"}}

func TestPolicy(t *testing.T) {
	tests := []struct {
		value  string
		counts Counts
		want   string // "" is no finding
	}{
		{"", Counts{"loop": 3, "fight": 1}, ""},
		{"none", Counts{"loop": 3}, ""},
		{"loop", Counts{"fight": 2}, ""},
		{"loop", Counts{"loop": 1, "fight": 2}, "1 self-loop found (--fail-on loop)"},
		{"fight", Counts{"fight": 2}, "2 fights found (--fail-on fight)"},
		{"any", Counts{"fight": 2}, "0 self-loops and 2 fights found (--fail-on any)"},
		{"fight,loop", Counts{"loop": 1}, "1 self-loop and 0 fights found (--fail-on fight,loop)"},
	}
	for _, tt := range tests {
		p, err := churnish.Parse("--fail-on", tt.value)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.value, err)
		}
		err = p.Exit(churnish, tt.counts)
		got := ""
		if err != nil {
			got = err.Error()
			if code := exitcode.Classify(err); code != exitcode.CodeFinding {
				t.Errorf("%q: exit %d, want %d", tt.value, code, exitcode.CodeFinding)
			}
		}
		if got != tt.want {
			t.Errorf("--fail-on %q over %v: %q, want %q", tt.value, tt.counts, got, tt.want)
		}
	}
}

func TestParseRefusesUnknownWords(t *testing.T) {
	_, err := churnish.Parse("--fail-on", "loop,always\x1b")
	if err == nil || exitcode.Classify(err) != exitcode.CodeUsage {
		t.Fatalf("err %v, want a usage error", err)
	}
	if want := `--fail-on "loop,always^[": use loop, fight, any or none`; err.Error() != want {
		t.Errorf("err %q, want %q", err, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "any", "loop,fight", ",", "none,loop"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := churnish.Parse("--fail-on", s)
		if err != nil {
			return
		}
		_ = p.Exit(churnish, Counts{"loop": 1, "fight": 1})
	})
}
