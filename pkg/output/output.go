package output

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
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
)

// ColorMode is a --color value.
type ColorMode string

// The --color values.
const (
	ColorAuto   ColorMode = "auto"
	ColorAlways ColorMode = "always"
	ColorNever  ColorMode = "never"
)

// Flags are the output flags a command offers: -o, --color and --no-headers.
type Flags struct {
	Output    string
	Color     string
	NoHeaders bool

	allowed []Format
}

// NewFlags returns output flags that accept the given formats; the first is
// the default.
func NewFlags(allowed ...Format) *Flags {
	if len(allowed) == 0 {
		allowed = []Format{Table, Wide, JSON, YAML}
	}
	return &Flags{Output: string(allowed[0]), Color: string(ColorAuto), allowed: allowed}
}

// AddFlags registers -o, --color and --no-headers.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	names := make([]string, len(f.allowed))
	for i, a := range f.allowed {
		names[i] = string(a)
	}
	fs.StringVarP(&f.Output, "output", "o", f.Output, "Output format. One of: ("+strings.Join(names, ", ")+").")
	fs.StringVar(&f.Color, "color", f.Color, "Color output: auto (only on a terminal, and never when NO_COLOR is set), always or never.")
	fs.BoolVar(&f.NoHeaders, "no-headers", f.NoHeaders, "Don't print headers in table output.")
}

// Validate checks the flag values without doing any I/O.
func (f *Flags) Validate() error {
	if !slices.Contains(f.allowed, Format(f.Output)) {
		names := make([]string, len(f.allowed))
		for i, a := range f.allowed {
			names[i] = string(a)
		}
		return exitcode.Usage(fmt.Errorf("--output %q is not supported: use one of %s", f.Output, strings.Join(names, ", ")))
	}
	switch ColorMode(f.Color) {
	case ColorAuto, ColorAlways, ColorNever:
	default:
		return exitcode.Usage(fmt.Errorf("--color %q is not supported: use auto, always or never", f.Color))
	}
	return nil
}

// Format returns the chosen format.
func (f *Flags) Format() Format { return Format(f.Output) }

// ToPrinter validates the flags and returns a printer writing to out.
func (f *Flags) ToPrinter(out io.Writer) (*Printer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &Printer{
		Format:    Format(f.Output),
		NoHeaders: f.NoHeaders,
		Color:     UseColor(ColorMode(f.Color), out, os.Getenv),
		Out:       out,
	}, nil
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

// PrintObject writes obj as JSON (indented) or YAML.
func (p *Printer) PrintObject(obj any) error {
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
			b, err := a.AppendIndentedJSON(nil)
			if err != nil {
				return fmt.Errorf("encoding json: %w", err)
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

// PrintJSONLine writes obj as one line of JSON, for event streams.
func (p *Printer) PrintJSONLine(obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding json: %w", err)
	}
	_, err = p.Out.Write(append(b, '\n'))
	return err
}

// Escape makes a server-controlled string safe to write to a terminal:
// cli-runtime's EscapeTerminal (ESC and CR), then every other control
// character in caret notation, since a BEL, a tab or a newline in a manager
// name would ring or break a table's alignment.
func Escape(s string) string {
	if printableASCII(s) {
		// Most text is; nothing to escape.
		return s
	}
	s = cliprinters.EscapeTerminal(s)
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			b.WriteByte('^')
			b.WriteRune(r ^ 0x40)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
