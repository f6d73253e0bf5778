package cmdutil

import (
	"cmp"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

func TestOutputFlagsValidate(t *testing.T) {
	tests := []struct {
		name    string
		output  string
		color   string
		wantErr string
	}{
		{"defaults", "table", "auto", ""},
		{"json", "json", "never", ""},
		{"unknown output", "xml", "auto", `--output "xml" is not supported: use one of table, wide, json, yaml`},
		{"unknown color", "table", "sometimes", `--color "sometimes" is not supported: use auto, always or never`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewOutputFlags()
			f.Output, f.Color = tt.output, tt.color
			err := f.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if exitcode.Classify(err) != exitcode.CodeUsage {
				t.Errorf("exit code = %d, want %d", exitcode.Classify(err), exitcode.CodeUsage)
			}
		})
	}
}

// TestNumericFlagBounds: each bound's words, exit 2, and nil within it.
func TestNumericFlagBounds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Positive("--fight-window", -time.Second), "--fight-window must be positive, got -1s"},
		{Positive("--n", 0), "--n must be positive, got 0"},
		{ZeroOrPositive("--hot-rate", -0.5, "off"), "--hot-rate must be 0 (off) or positive, got -0.5"},
		{ZeroOrPositive("--chunk-size", int64(-1), ""), "--chunk-size must be 0 or positive, got -1"},
		{AtLeast("--top", 0, 1), "--top must be at least 1, got 0"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want || exitcode.Classify(tc.err) != exitcode.CodeUsage {
			t.Errorf("%v, want exit 2 with %q", tc.err, tc.want)
		}
	}
	if err := cmp.Or(Positive("--a", 1), ZeroOrPositive("--b", 0, "off"), AtLeast("--c", 3, 3)); err != nil {
		t.Errorf("values within their bounds: %v", err)
	}
}
