// Package output is kubectl-rv's printing layer. Engines return plain structs;
// commands hand them here to be rendered by -o: a table in kubectl's plain
// look (the default), a wide table, JSON or YAML.
//
// Structured output (JSON and YAML) is a versioned object with
// apiVersion rv.kubectl-rv.dev/v1alpha1 and one kind per report, documented
// in docs/output.md, so that CI scripts can depend on it.
//
// Every table cell is passed through text.Escape (kubectl's escaping of
// ESC and CR, extended to every C0 and C1 control and the bidirectional
// controls) before it is written, because manager names, messages and
// object names come from the server and may carry terminal control
// sequences. Color is used only on a terminal or when asked
// (--color=always), and never when NO_COLOR is set.
//
// The report pictures (simulate's, conflicts' and leases' --report) are
// drawn on one swimlane renderer (Swimlanes: lanes, labels, a time axis at
// round ticks; the printers add their own marks) and framed by one page
// (HTMLOpen, HTMLClose); all their text from outside is escaped with
// text.EscapeMarkup, which drops what XML forbids and escapes markup.
//
// Package output owns how results look; it does not decide what they are,
// and binds no flags: pkg/cmd turns -o, --color and --no-headers into
// Options.
// It is the only package that imports tablewriter, whose display width
// (ANSI-aware, East Asian wide characters count two) sizes the columns;
// the columns are laid out here, which is about 50 times faster than
// tablewriter's renderer for large tables.
package output
