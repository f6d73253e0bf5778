package jsonvalue

import "encoding/json"

// AppendString appends s as encoding/json writes it: quoted, with <, > and
// & escaped for HTML, invalid UTF-8 replaced by U+FFFD. Printable ASCII,
// nearly every string an object holds, takes a fast path; anything else is
// left to encoding/json, so that the two can never differ.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', c)
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
