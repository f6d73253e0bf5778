// Package cigolden holds a printer's CI formats to golden files: the
// test-only check every command with -o github|junit|sarif shares.
package cigolden

import (
	"bytes"
	"io"
	"testing"

	"github.com/kubectl-rv/kubectl-rv/internal/golden"
	"github.com/kubectl-rv/kubectl-rv/internal/sarifcheck"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// Assert renders in each CI format (output.CIFormats, a subtest each)
// with render, holds the output to the golden file name.FORMAT
// (testdata/name.github, .junit, .sarif; go test -update rewrites them)
// and validates the SARIF against the SARIF 2.1.0 schema.
func Assert(t *testing.T, name string, render func(w io.Writer, f output.Format) error) {
	t.Helper()
	for _, f := range output.CIFormats {
		t.Run(name+"."+string(f), func(t *testing.T) {
			var out bytes.Buffer
			if err := render(&out, f); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, name+"."+string(f), out.Bytes())
			if f == output.SARIF {
				if err := sarifcheck.Validate(out.Bytes()); err != nil {
					t.Error(err)
				}
			}
		})
	}
}
