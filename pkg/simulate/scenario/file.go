package scenario

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

// LoadFile reads and parses the scenario file path ("-" reads stdin) as
// Parse does, naming it in errors as path or <stdin>. A scenario without a
// name is named after its file ("race.yaml" is race; stdin's is stdin).
//
// A file over input.MaxDocument is a *input.TooLargeError, and once ctx is
// done (Ctrl-C) the read stops, also one waiting on a FIFO, with an error
// wrapping ctx.Err(): the reading of /dev/zero or of a FIFO that never
// ends is bounded and can be stopped.
func LoadFile(ctx context.Context, path string, stdin io.Reader) (*Scenario, error) {
	data, err := input.ReadFile(ctx, path, stdin)
	if err != nil {
		return nil, fmt.Errorf("reading the scenario: %w", err)
	}
	source := path
	if path == "-" {
		source = "<stdin>"
	}
	sc, err := Parse(data, source)
	if err != nil {
		return nil, err
	}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if path == "-" {
			sc.Name = "stdin"
		}
	}
	return sc, nil
}
