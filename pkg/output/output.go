package output

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/redact"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
)

// APIVersion is the group/version of every structured report.
const APIVersion = "rv.kubectl-rv.dev/v1alpha1"

// TypeMeta heads every structured report. Reports embed it inline.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// NewTypeMeta returns the TypeMeta of a report of the given kind.
func NewTypeMeta(kind string) TypeMeta { return TypeMeta{APIVersion: APIVersion, Kind: kind} }

// Format is an -o value.
type Format string

// The output formats. Not every command offers every format.
const (
	Table Format = "table"
	Wide  Format = "wide"
	JSON  Format = "json"
	YAML  Format = "yaml"

	// The CI formats (pkg/output/cireport): GitHub Actions workflow
	// commands, JUnit XML and SARIF 2.1.0.
	GitHub Format = "github"
	JUnit  Format = "junit"
	SARIF  Format = "sarif"
)

// CIFormats are the CI formats, in the order help lists them.
var CIFormats = []Format{GitHub, JUnit, SARIF}

// CI reports whether f is a CI format.
func (f Format) CI() bool { return f == GitHub || f == JUnit || f == SARIF }

// ColorMode is a --color value.
type ColorMode string

// The --color values.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// Options say how a Printer renders: the command layer builds them from
// -o, --color and --no-headers.
type Options struct {
	Format    Format
	Color     ColorMode
	NoHeaders bool
}

// NewPrinter returns a printer writing to out. getenv reads NO_COLOR, for
// ColorAuto.
func NewPrinter(o Options, out io.Writer, getenv func(string) string) *Printer {
	return &Printer{
		Format:    o.Format,
		NoHeaders: o.NoHeaders,
		Color:     UseColor(o.Color, out, getenv),
		Out:       out,
	}
}

// UseColor decides whether to color output written to out.
func UseColor(mode ColorMode, out io.Writer, getenv func(string) string) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	return IsTerminal(out)
}

// Printer renders reports in one format.
type Printer struct {
	Format    Format
	NoHeaders bool
	Color     bool
	Out       io.Writer
}

// Structured reports whether the printer emits JSON or YAML.
func (p *Printer) Structured() bool { return p.Format == JSON || p.Format == YAML }

// PrintObject writes obj as JSON (indented) or YAML. It refuses a Secret
// that has not been through pkg/redact (redact.Check).
func (p *Printer) PrintObject(obj any) error {
	if err := redact.Check(obj); err != nil {
		return err
	}
	switch p.Format {
	case YAML:
		b, err := yaml.Marshal(obj)
		if err != nil {
			return fmt.Errorf("encoding yaml: %w", err)
		}
		_, err = p.Out.Write(b)
		return err
	default:
		if a, ok := obj.(IndentedJSONAppender); ok {
			out := &JSONOut{w: p.Out}
			b, err := a.AppendIndentedJSON(make([]byte, 0, 2*spillBytes), out)
			if err != nil {
				return fmt.Errorf("encoding json: %w", err)
			}
			if out.err != nil {
				return out.err
			}
			_, err = p.Out.Write(append(b, '\n'))
			return err
		}
		b, err := json.MarshalIndent(obj, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding json: %w", err)
		}
		_, err = p.Out.Write(append(b, '\n'))
		return err
	}
}

// PrintJSONLine writes obj as one line of JSON, for event streams. Like
// PrintObject, it refuses a Secret that has not been through pkg/redact.
func (p *Printer) PrintJSONLine(obj any) error {
	if err := redact.Check(obj); err != nil {
		return err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding json: %w", err)
	}
	_, err = p.Out.Write(append(b, '\n'))
	return err
}

// Warnf writes a warning to w, the error stream: "warning: " and the
// message on one line, the way kubectl-rv prints every warning of its own
// (the API server's warnings keep client-go's "Warning:"). The message is
// escaped for the terminal, since it often quotes the server or a file.
// A warning that cannot be written has nowhere else to go, so Warnf
// returns nothing.
func Warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "warning: %s\n", text.Escape(fmt.Sprintf(format, args...)))
}

// Duration renders d the way kubectl renders ages (2s, 5m10s, 3h, 2d),
// rounded to the second first: client-side timings are not precise to the
// nanosecond, and 1.996s reads better as 2s than as kubectl's truncated 1s.
func Duration(d time.Duration) string {
	return duration.HumanDuration(d.Round(time.Second))
}
