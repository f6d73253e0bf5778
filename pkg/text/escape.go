package text

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes a string from a file or a server safe to write to a
// terminal, showing what it escapes:
//
//   - ESC and CR as kubectl (cli-runtime's printers.EscapeTerminal) writes
//     them, ^[ and \r;
//   - the other C0 controls and DEL in caret notation (^G, ^I, ^J, ^?),
//     since a BEL, a tab or a newline in a manager name would ring or break
//     a table's alignment;
//   - what has no caret form as Go's %q writes it: the C1 controls
//     (U+0080 to U+009F: U+009B is CSI and U+009D OSC, ESC [ and ESC ] in
//     one character) and the bidirectional controls (Unicode's Bidi_Control:
//     U+202E would show the rest of a cell backwards) as \u009b, \u202e;
//     a byte that is not UTF-8 as \x9b (a lone 0x9b is CSI on a terminal
//     reading 8-bit controls).
//
// Everything else is kept as it is. Tables, errors and messages all use it.
// For example "evil\x1b[31m\u202e" becomes `evil^[[31m\u202e`.
func Escape(s string) string {
	i := indexTerminal(s)
	if i < 0 {
		// Most text: nothing to escape.
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i >= 0 {
		b.WriteString(s[:i])
		r, size := utf8.DecodeRuneInString(s[i:])
		writeTerminal(&b, r, size, s[i])
		s = s[i+size:]
		i = indexTerminal(s)
	}
	b.WriteString(s)
	return b.String()
}

// indexTerminal is the index of the first rune of s that Escape changes,
// or -1.
func indexTerminal(s string) int {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !terminalSafe(r, size) {
			return i
		}
		i += size
	}
	return -1
}

// terminalSafe says whether Escape keeps the rune r, decoded from size
// bytes, as it is: a rune that is not a control (C0, DEL, C1; unicode.Cc)
// nor a bidirectional control, and not a byte that fails to decode.
func terminalSafe(r rune, size int) bool {
	if r == utf8.RuneError && size == 1 {
		return false
	}
	return !unicode.IsControl(r) && !unicode.Is(unicode.Bidi_Control, r)
}

const hexDigits = "0123456789abcdef"

// writeTerminal writes the visible form of a rune Escape does not keep;
// c is its first byte, written as \xNN when it is not UTF-8.
func writeTerminal(b *strings.Builder, r rune, size int, c byte) {
	switch {
	case r == utf8.RuneError && size == 1:
		b.WriteString(`\x`)
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	case r == '\r':
		b.WriteString(`\r`)
	case r < 0x20 || r == 0x7f:
		b.WriteByte('^')
		b.WriteByte(byte(r) ^ 0x40)
	default:
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte(hexDigits[(r>>shift)&0xf])
		}
	}
}

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

// EscapeMarkup makes a string from a file or a server safe as text or an
// attribute value in XML, SVG and HTML (the report pictures and pages):
// it drops what XML 1.0 does not allow in a document, so that the picture
// still parses (the C0 controls but tab, newline and CR; U+FFFE and
// U+FFFF; bytes that are not UTF-8, among them encoded surrogates), then
// escapes markup (< > & ' ") with html.EscapeString, whose entities XML
// reads too. For example "a\x1b<b>\uffff" becomes "a&lt;b&gt;".
func EscapeMarkup(s string) string { return html.EscapeString(dropNonXML(s)) }

// dropNonXML is s without the runes XML 1.0 does not allow.
func dropNonXML(s string) string {
	i := indexNonXML(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i >= 0 {
		b.WriteString(s[:i])
		_, size := utf8.DecodeRuneInString(s[i:])
		s = s[i+size:]
		i = indexNonXML(s)
	}
	b.WriteString(s)
	return b.String()
}

// indexNonXML is the index of the first rune of s that XML does not
// allow, or -1.
func indexNonXML(s string) int {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !xmlChar(r, size) {
			return i
		}
		i += size
	}
	return -1
}

// xmlChar says whether the rune r, decoded from size bytes, is in XML
// 1.0's Char production: tab, newline, CR, U+0020 to U+D7FF, U+E000 to
// U+FFFD and U+10000 to U+10FFFF. A surrogate or anything past U+10FFFF
// does not decode (utf8.RuneError of size 1), so the check is short.
func xmlChar(r rune, size int) bool {
	switch {
	case r == utf8.RuneError:
		return size > 1 // U+FFFD itself, not a byte that failed to decode
	case r < 0x20:
		return r == '\t' || r == '\n' || r == '\r'
	}
	return r != 0xfffe && r != 0xffff
}
