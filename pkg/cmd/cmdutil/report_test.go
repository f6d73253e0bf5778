package cmdutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

func TestReport(t *testing.T) {
	dir := t.TempDir()
	svg, page := func() []byte { return []byte("<svg/>") }, func() []byte { return []byte("<html/>") }
	tests := []struct {
		name, path  string
		validCode   int
		writeCode   int
		wantWritten string
	}{
		{"none", "", exitcode.CodeOK, exitcode.CodeOK, ""},
		{"svg", filepath.Join(dir, "a.svg"), exitcode.CodeOK, exitcode.CodeOK, "<svg/>"},
		{"html in capitals", filepath.Join(dir, "a.HTML"), exitcode.CodeOK, exitcode.CodeOK, "<html/>"},
		{"png", filepath.Join(dir, "a.png"), exitcode.CodeUsage, exitcode.CodeOK, "<svg/>"},
		{"a missing directory", filepath.Join(dir, "none", "a.svg"), exitcode.CodeOK, exitcode.CodeUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code := exitcode.Classify(ValidateReport(tt.path)); code != tt.validCode {
				t.Errorf("validateReport: exit %d, want %d", code, tt.validCode)
			}
			if code := exitcode.Classify(WriteReport(tt.path, svg, page)); code != tt.writeCode {
				t.Errorf("writeReport: exit %d, want %d", code, tt.writeCode)
			}
			if tt.wantWritten != "" {
				if b, err := os.ReadFile(tt.path); err != nil || string(b) != tt.wantWritten {
					t.Errorf("wrote %q (%v), want %q", b, err, tt.wantWritten)
				}
			}
		})
	}
}
