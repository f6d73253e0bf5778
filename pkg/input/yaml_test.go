package input

import "testing"

func TestYAMLSeparator(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"---", true},
		{"---   ", true},
		{"--- # next", true},
		{"--- {a: 1}", false},
		{"--- !tag", false},
		{" ---", false},
		{"----", false},
		{"a: ---", false},
	}
	for _, tt := range tests {
		if got := YAMLSeparator([]byte(tt.line)); got != tt.want {
			t.Errorf("YAMLSeparator(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestLeadingComments(t *testing.T) {
	tests := []struct {
		doc  string
		want int
	}{
		{"", 1},
		{"a: 1\n", 0},
		{"\n# Source: c/templates/x.yaml\n  \na: 1\n", 3},
		{"  # indented\nkind: X\n", 1},
		{"# only\n\n", 3},
	}
	for _, tt := range tests {
		if got := LeadingComments([]byte(tt.doc)); got != tt.want {
			t.Errorf("LeadingComments(%q) = %d, want %d", tt.doc, got, tt.want)
		}
	}
}
