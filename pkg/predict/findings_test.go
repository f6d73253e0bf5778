package predict

import "testing"

// TestFindingVerdicts: every verdict that is a finding (has a --fail-on
// class) is explained once, with a help text and a fix, and no other is.
func TestFindingVerdicts(t *testing.T) {
	all := []Verdict{OK, Conflict, ApplyConflict, Invalid, Clobber, NotFound, ServerError, Unknown}
	seen := map[Verdict]int{}
	for _, v := range FindingVerdicts {
		seen[v.Verdict]++
		if v.Help == "" || v.Fix == "" {
			t.Errorf("%s: help %q, fix %q", v.Verdict, v.Help, v.Fix)
		}
	}
	for _, v := range all {
		want := 0
		if FindingClass(v) != "" {
			want = 1
		}
		if seen[v] != want {
			t.Errorf("%s is explained %d times, want %d", v, seen[v], want)
		}
	}
}
