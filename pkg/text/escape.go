package text

import (
	"html"
	"strings"
)

// terminalEscaper is kubectl's (cli-runtime's printers.EscapeTerminal):
// ESC and CR.
var terminalEscaper = strings.NewReplacer("\x1b", "^[", "\r", "\\r")

// Escape makes a string from a file or a server safe to write to a
// terminal: ESC and CR as kubectl escapes them (^[ and \r), then every
// other control character in caret notation, since a BEL, a tab or a
// newline in a manager name would ring or break a table's alignment.
// Tables, errors and messages all use it.
func Escape(s string) string {
	if PrintableASCII(s) {
		// Most text is; nothing to escape.
		return s
	}
	s = terminalEscaper.Replace(s)
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

// PrintableASCII says whether s is printable ASCII only: what Escape
// leaves as it is and what a terminal shows one column per byte.
func PrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// EscapeMarkup makes a string from a file or a server safe in XML and
// HTML (the report pictures and pages): control characters, which XML 1.0
// does not allow, as Escape writes them, then markup.
func EscapeMarkup(s string) string { return html.EscapeString(Escape(s)) }
