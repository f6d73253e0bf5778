package cmdutil

import (
	"testing"

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
