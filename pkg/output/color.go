package output

import (
	"io"
	"os"

	"golang.org/x/term"
)

// Style is how a table cell or a line is colored.
type Style int

// The styles. None is plain text.
const (
	None Style = iota
	Bold
	Faint
	Red
	Yellow
	Green
	Cyan
)

var ansi = map[Style]string{
	Bold:   "\x1b[1m",
	Faint:  "\x1b[2m",
	Red:    "\x1b[31m",
	Yellow: "\x1b[33m",
	Green:  "\x1b[32m",
	Cyan:   "\x1b[36m",
}

const reset = "\x1b[0m"

// Paint wraps s in the style's color when color is on.
func Paint(on bool, st Style, s string) string {
	if !on || st == None || s == "" {
		return s
	}
	return ansi[st] + s + reset
}

// Codes returns the escape sequences that start and end the style when
// color is on, for text written in pieces; empty strings otherwise.
func Codes(on bool, st Style) (start, end string) {
	if !on || st == None {
		return "", ""
	}
	return ansi[st], reset
}

// Paint colors s when the printer colors.
func (p *Printer) Paint(st Style, s string) string { return Paint(p.Color, st, s) }

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
