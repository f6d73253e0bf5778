package follow

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFieldWritersSaysWhenFlipsAreCapped checks that a fight whose flips
// went beyond the history kept (4 x threshold writes) says that its count is
// a lower bound, and that a fight within the history does not.
func TestFieldWritersSaysWhenFlipsAreCapped(t *testing.T) {
	const threshold = 2
	var h FieldWriters
	type seen struct {
		Flips  int
		Capped bool
	}
	var got []seen
	for i := range 12 {
		manager := []string{"a", "b"}[i%2]
		if f, _ := h.Write(manager, t0.Add(time.Duration(i)*time.Second), threshold, time.Hour); f != nil {
			got = append(got, seen{f.Flips, f.Capped})
		}
	}
	// Writes 3 to 9 are all kept (at most 9): 2 to 8 flips; from write 10
	// on the oldest is dropped, and 8 flips is a lower bound.
	want := []seen{{2, false}, {3, false}, {4, false}, {5, false}, {6, false}, {7, false}, {8, false}, {8, true}, {8, true}, {8, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fights (-want +got):\n%s", diff)
	}
	if h.Kept() != 4*threshold+1 {
		t.Errorf("kept %d writes, want %d", h.Kept(), 4*threshold+1)
	}
	// A quiet window later, the dropped writes are out of the window.
	f, _ := h.Write("a", t0.Add(3*time.Hour), threshold, time.Hour)
	if f != nil {
		t.Errorf("a lone write after a quiet window is no fight, got %+v", f)
	}
}
