package audit

import (
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Eight bytes at a time: most of an event's bytes are inside strings, and
// a string ends at the first quote, backslash, control or non-ASCII byte.
const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

// special is non-zero when one of the eight bytes in x is '"', '\\',
// below 0x20 or above 0x7f (the usual "has zero byte" bit trick), and its
// lowest set bit is the high bit of the first such byte. Bits above it may
// be set for other bytes (a borrow), and below it only for bytes above
// 0x7f: a byte minus one or 0x20 has its high bit set, with no borrow
// from below, only when the byte is above 0x7f (0x20 and the xors keep
// the high bit), which x's own high bits mark anyway.
func special(x uint64) uint64 {
	q := x ^ (swarOnes * '"')
	b := x ^ (swarOnes * '\\')
	return ((q - swarOnes) | (b - swarOnes) | (x - swarOnes*0x20) | x) & swarHighs
}

// word is the eight bytes of b, the first the lowest.
func word(b string) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// skipString validates and skips a string, as encoding/json's scanner
// does: no control byte, only the JSON escapes; other bytes, even invalid
// UTF-8, are allowed. esc and nonASCII say whether the value needs
// unquoting.
func (s *scanner) skipString() bool {
	_, _, ok := s.scanString()
	return ok
}

func (s *scanner) scanString() (esc, nonASCII, ok bool) {
	if !s.byte('"') {
		return false, false, false
	}
	// Eight bytes at a time to the first quote, backslash, control or
	// non-ASCII byte: the lowest bit special sets marks it. Most strings
	// are plain: their first such byte is the closing quote.
	str, i := s.s, s.i
	for {
		for {
			if i+8 > len(str) {
				// The line's last bytes, one at a time.
				for i < len(str) && !isSpecial(str[i]) {
					i++
				}
				break
			}
			if m := special(word(str[i : i+8])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		if i >= len(str) {
			return false, false, false
		}
		switch c := str[i]; {
		case c == '"':
			s.i = i + 1
			return esc, nonASCII, true
		case c == '\\':
			n := escapeLen(str[i:])
			if n == 0 {
				return false, false, false
			}
			esc = true
			i += n
		case c < 0x20:
			return false, false, false
		default:
			nonASCII = true
			i++
		}
	}
}

// isSpecial says whether c is a byte special marks.
func isSpecial(c byte) bool {
	return c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
}

// escapeLen is the length of the escape at the start of s, 0 if invalid.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(s) >= 6 && hex4(s[2:6]) >= 0 {
			return 6
		}
	}
	return 0
}

// hex4 reads four hex digits, -1 if they are not.
func hex4(s string) rune {
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// stringValue reads a string's value: a substring of the line when it
// has no escape and is valid UTF-8, else unquoted as encoding/json does.
func (s *scanner) stringValue() (string, bool) {
	start := s.i + 1
	esc, nonASCII, ok := s.scanString()
	if !ok {
		return "", false
	}
	raw := s.s[start : s.i-1]
	if !esc && (!nonASCII || utf8.ValidString(raw)) {
		return raw, true
	}
	return unquote(raw), true
}

// unquote decodes the validated contents of a string the way
// encoding/json does: a surrogate pair is one rune, a lone surrogate and
// each byte of invalid UTF-8 become U+FFFD.
func unquote(raw string) string {
	var b strings.Builder
	b.Grow(len(raw) + 8)
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\' && raw[r+1] == 'u':
			rr := hex4(raw[r+2 : r+6])
			r += 6
			if utf16.IsSurrogate(rr) {
				if r+6 <= len(raw) && raw[r] == '\\' && raw[r+1] == 'u' {
					if dec := utf16.DecodeRune(rr, hex4(raw[r+2:r+6])); dec != unicode.ReplacementChar {
						b.WriteRune(dec)
						r += 6
						continue
					}
				}
				rr = unicode.ReplacementChar
			}
			b.WriteRune(rr)
		case c == '\\':
			b.WriteByte(unescape[raw[r+1]])
			r += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			r++
		default:
			rr, size := utf8.DecodeRuneInString(raw[r:])
			b.WriteRune(rr)
			r += size
		}
	}
	return b.String()
}

var unescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
