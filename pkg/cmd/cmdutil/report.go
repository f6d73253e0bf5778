package cmdutil

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
)

// --report FILE.svg|FILE.html, the picture simulate, leases and conflicts
// write beside their output.

// validateReport checks --report's name without I/O: none, or one ending
// in .svg or .html (in any case).
func ValidateReport(path string) error {
	if path == "" {
		return nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg", ".html":
		return nil
	}
	return exitcode.Usagef("--report %q: give a file name ending in .svg or .html", path)
}

// writeReport writes --report's picture, if asked: the page for a .html
// name, the SVG otherwise. A path the user named is bad input when it
// cannot be written, never the cluster's (an errno looks like a net.Error
// to exitcode.Classify).
func WriteReport(path string, svg, page func() []byte) error {
	if path == "" {
		return nil
	}
	pic := svg
	if strings.EqualFold(filepath.Ext(path), ".html") {
		pic = page
	}
	if err := os.WriteFile(path, pic(), 0o644); err != nil {
		return exitcode.Usage(fmt.Errorf("writing --report: %w", err))
	}
	return nil
}
