package text

import "testing"

func TestPlural(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"zero takes the plural", Plural(0, "type"), "0 types"},
		{"one is singular", Plural(1, "check"), "1 check"},
		{"two is plural", Plural(2, "self-loop"), "2 self-loops"},
		{"a phrase pluralises its last word", Plural(3, "method prediction"), "3 method predictions"},
		{"irregular singular", Plurals(1, "entry was", "entries were"), "1 entry was"},
		{"irregular plural", Plurals(4, "entry was", "entries were"), "4 entries were"},
		{"negative counts are plural", Plural(-1, "item"), "-1 items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
