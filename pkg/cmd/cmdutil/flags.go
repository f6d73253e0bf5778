package cmdutil

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubectl-rv/kubectl-rv/pkg/exitcode"
	"github.com/kubectl-rv/kubectl-rv/pkg/findings"
	"github.com/kubectl-rv/kubectl-rv/pkg/objects"
	"github.com/kubectl-rv/kubectl-rv/pkg/output"
)

// This file is where the flags shared by several commands are bound: the
// packages below pkg/cmd take the typed configs these flags build
// (output.Options, objects.Selection) and never see a flag.

// OutputFlags are the output flags a command offers: -o, --color and
// --no-headers.
type OutputFlags struct {
	Output    string
	Color     string
	NoHeaders bool

	allowed []output.Format
}

// NewOutputFlags returns output flags that accept the given formats; the
// first is the default. With none, every format is accepted.
func NewOutputFlags(allowed ...output.Format) *OutputFlags {
	if len(allowed) == 0 {
		allowed = []output.Format{output.Table, output.Wide, output.JSON, output.YAML}
	}
	return &OutputFlags{Output: string(allowed[0]), Color: string(output.ColorAuto), allowed: allowed}
}

// AddFlags registers -o, --color and --no-headers.
func (f *OutputFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&f.Output, "output", "o", f.Output, "Output format. One of: ("+strings.Join(f.names(), ", ")+").")
	fs.StringVar(&f.Color, "color", f.Color, "Color output: auto (only on a terminal, and never when NO_COLOR is set), always or never.")
	fs.BoolVar(&f.NoHeaders, "no-headers", f.NoHeaders, "Don't print headers in table output.")
	SetFlagValues(fs, "output", f.names()...)
	SetFlagValues(fs, "color", string(output.ColorAuto), string(output.ColorAlways), string(output.ColorNever))
}

func (f *OutputFlags) names() []string {
	names := make([]string, len(f.allowed))
	for i, a := range f.allowed {
		names[i] = string(a)
	}
	return names
}

// Validate checks the flag values without doing any I/O.
func (f *OutputFlags) Validate() error {
	if !slices.Contains(f.allowed, output.Format(f.Output)) {
		return exitcode.Usage(fmt.Errorf("--output %q is not supported: use one of %s", f.Output, strings.Join(f.names(), ", ")))
	}
	switch output.ColorMode(f.Color) {
	case output.ColorAuto, output.ColorAlways, output.ColorNever:
	default:
		return exitcode.Usage(fmt.Errorf("--color %q is not supported: use auto, always or never", f.Color))
	}
	return nil
}

// Format returns the chosen format.
func (f *OutputFlags) Format() output.Format { return output.Format(f.Output) }

// ToOptions returns the printing options the flags ask for.
func (f *OutputFlags) ToOptions() output.Options {
	return output.Options{Format: output.Format(f.Output), Color: output.ColorMode(f.Color), NoHeaders: f.NoHeaders}
}

// ToPrinter validates the flags and returns a printer writing to out.
func (f *OutputFlags) ToPrinter(out io.Writer) (*output.Printer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return output.NewPrinter(f.ToOptions(), out, os.Getenv), nil
}

// SelectionFlags bind an objects.Selection to kubectl's flags: -f, -R, -l,
// --field-selector, -A and --chunk-size. -n comes from the ConfigFlags.
type SelectionFlags struct {
	objects.Selection
	withFiles bool
}

// NewSelectionFlags returns selection flags; withFiles adds -f and -R.
func NewSelectionFlags(withFiles bool) *SelectionFlags {
	return &SelectionFlags{Selection: objects.Selection{ChunkSize: 500}, withFiles: withFiles}
}

// AddFlags registers the flags on fs.
func (f *SelectionFlags) AddFlags(fs *pflag.FlagSet) {
	if f.withFiles {
		fs.StringSliceVarP(&f.Filenames, "filename", "f", nil, "Read objects from these files, directories or - (stdin) instead of the cluster: multi-document YAML, JSON and List objects.")
		fs.BoolVarP(&f.Recursive, "recursive", "R", false, "Read the directories given with -f recursively.")
	}
	fs.StringVarP(&f.LabelSelector, "selector", "l", "", "Label selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	fs.StringVar(&f.FieldSelector, "field-selector", "", "Field selector to filter on, for example metadata.name=web.")
	fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "Select objects across all namespaces (-n is ignored).")
	fs.Int64Var(&f.ChunkSize, "chunk-size", f.ChunkSize, "Return large lists in pages of this size; 0 disables paging.")
}

// Validate checks the flags without I/O.
func (f *SelectionFlags) Validate() error {
	if err := CheckChunkSize(f.ChunkSize); err != nil {
		return err
	}
	if len(f.Filenames) > 0 && len(f.Args) > 0 {
		return exitcode.Usagef("give either -f or TYPE [NAME] arguments, not both")
	}
	if f.Recursive && len(f.Filenames) == 0 {
		return exitcode.Usagef("-R/--recursive needs -f")
	}
	if len(f.Filenames) == 0 && len(f.Args) == 0 {
		return exitcode.Usagef("say what to look at: TYPE NAME, TYPE/NAME, or -f FILE")
	}
	return nil
}

// CheckChunkSize is the one rule of --chunk-size, for every command that
// lists in pages.
func CheckChunkSize(n int64) error {
	return ZeroOrPositive("--chunk-size", n, "")
}

// number is what a numeric flag holds.
type number interface {
	~int | ~int64 | ~float64
}

// Positive, ZeroOrPositive and AtLeast are the bounds of numeric flags,
// in the words every command uses: exit 2 naming the flag and the value
// given, nil within the bound. zero says what 0 means ("off", "no
// limit"), "" for nothing to say. A command checks several at once with
// cmp.Or, which returns the first error.
func Positive[T number](flag string, v T) error {
	if v <= 0 {
		return exitcode.Usagef("%s must be positive, got %v", flag, v)
	}
	return nil
}

// ZeroOrPositive: see Positive.
func ZeroOrPositive[T number](flag string, v T, zero string) error {
	if v >= 0 {
		return nil
	}
	if zero != "" {
		return exitcode.Usagef("%s must be 0 (%s) or positive, got %v", flag, zero, v)
	}
	return exitcode.Usagef("%s must be 0 or positive, got %v", flag, v)
}

// AtLeast: see Positive.
func AtLeast[T number](flag string, v, least T) error {
	if v < least {
		return exitcode.Usagef("%s must be at least %v, got %v", flag, least, v)
	}
	return nil
}

// annotationValues lists a flag's values for shell completion: flags
// register them with setFlagValues where they are bound, and the root
// command turns them into completions (registerFlagValueCompletion), so
// that binding a flag needs no *cobra.Command.
const AnnotationValues = "kubectl-rv.dev/values"

// setFlagValues says which values flag name takes, for completion.
func SetFlagValues(fs *pflag.FlagSet, name string, values ...string) {
	_ = fs.SetAnnotation(name, AnnotationValues, values)
}

// addFailOnFlag binds --fail-on to value, with the words of vocab in its
// help and completion; def is its default ("" is none). The command
// turns it into a findings.Policy once, in Validate (vocab.Parse).
func AddFailOnFlag(fs *pflag.FlagSet, value *string, vocab findings.Vocabulary, def string) {
	fs.StringVar(value, "fail-on", def, vocab.Help(""))
	SetFlagValues(fs, "fail-on", vocab.Words()...)
}

// addFailOnAlias binds name, the boolean flag earlier releases took for
// --fail-on class, deprecated (cobra says so when it is used) and hidden
// from help; withFailOnAlias adds class to --fail-on's value when it is
// set.
func AddFailOnAlias(fs *pflag.FlagSet, set *bool, name, class string) {
	fs.BoolVar(set, name, false, "Deprecated: use --fail-on "+class+".")
	_ = fs.MarkDeprecated(name, "use --fail-on "+class)
}

// withFailOnAlias is value with class added when alias is set.
func WithFailOnAlias(value string, alias bool, class string) string {
	switch {
	case !alias:
		return value
	case value == "":
		return class
	}
	return value + "," + class
}

// countOf is how many of ss are s (stdin, -, may be read once).
func CountOf(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}
