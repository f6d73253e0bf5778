package text

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
)

func TestEscape(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain ASCII is kept", "kubectl", "kubectl"},
		{"ESC as kubectl writes it", "a\x1b[31mred", "a^[[31mred"},
		{"BEL in caret notation", "bell\x07", "bell^G"},
		{"tab and newline in caret notation", "tab\tnew\nline", "tab^Inew^Jline"},
		{"DEL in caret notation", "del\x7f", "del^?"},
		{"CR as kubectl writes it", "cr\r", `cr\r`},
		{"printable Unicode is kept", "héllo 世界 ☃ \U0001F600", "héllo 世界 ☃ \U0001F600"},
		{"U+FFFD is kept", "\ufffd", "\ufffd"},
		{"U+FFFF is kept: a terminal does nothing with it", "w\uffff", "w\uffff"},
		{"C1 CSI", "a\u009b31mred", `a\u009b31mred`},
		{"C1 OSC setting the title", "\u009d0;owned\x07", `\u009d0;owned^G`},
		{"C1 NEL and the ends of the block", "\u0080\u0085\u009f", `\u0080\u0085\u009f`},
		{"right-to-left override", "evil\u202egnp.exe", `evil\u202egnp.exe`},
		{"embeddings, overrides and their end", "\u202a\u202b\u202c\u202d", `\u202a\u202b\u202c\u202d`},
		{"isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`},
		{"implicit marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"a byte that is not UTF-8", "caf\xe9", `caf\xe9`},
		{"a lone 8-bit CSI byte", "\x9b31m", `\x9b31m`},
		{"an encoded surrogate, byte by byte", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"several at once", "é\x1b\u009b\u202e\xff", `é^[\u009b\u202e\xff`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// terminalControl says whether a terminal may act on r: the C0 and C1
// controls, DEL, and the bidirectional controls (written out here, not
// taken from the code under test).
func terminalControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// FuzzEscape: nothing a terminal acts on survives (and the result is
// UTF-8, so no lone 8-bit control byte either), every other rune is kept
// as it is wherever it stands, and kubectl's own escaping (ESC, CR) is
// kept as kubectl writes it.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b]0;t\a", "\r\n\t", "\x7f\u0085", "\u009b1m\u202e", "é\xff\u2066", "\uffff\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not UTF-8", s, got)
		}
		for _, r := range got {
			if terminalControl(r) {
				t.Fatalf("Escape(%q) = %q keeps control %U", s, got, r)
			}
		}
		// Rune by rune: a printable rune is kept, and escaping does not
		// depend on the neighbours.
		var pieces strings.Builder
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			piece := Escape(s[i : i+size])
			if !(r == utf8.RuneError && size == 1) && !terminalControl(r) && piece != s[i:i+size] {
				t.Fatalf("Escape(%q) = %q changes the printable %U", s[i:i+size], piece, r)
			}
			pieces.WriteString(piece)
			i += size
		}
		if pieces.String() != got {
			t.Fatalf("Escape(%q) = %q, rune by rune %q", s, got, pieces.String())
		}
		if kubectl := cliprinters.EscapeTerminal(s); Escape(kubectl) != got {
			t.Fatalf("Escape(%q) = %q differs from Escape(EscapeTerminal) = %q", s, got, Escape(kubectl))
		}
	})
}

func TestEscapeMarkup(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text is kept", "plain", "plain"},
		{"markup is escaped", `<script>"a" & 'b'</script>`, "&lt;script&gt;&#34;a&#34; &amp; &#39;b&#39;&lt;/script&gt;"},
		{"C0 controls are dropped", "bell\x07<\x1b[31m\x00", "bell&lt;[31m"},
		{"tab, newline and CR are kept", "a\tb\nc\rd", "a\tb\nc\rd"},
		{"U+FFFF is dropped", "writer\uffff", "writer"},
		{"U+FFFE is dropped", "\ufffewriter", "writer"},
		{"a byte that is not UTF-8 is dropped", "caf\xe9<", "caf&lt;"},
		{"an encoded surrogate is dropped", "a\xed\xa0\x80b", "ab"},
		{"U+FFFD is kept", "\ufffd", "\ufffd"},
		{"DEL, C1 and bidi controls are kept: XML allows them", "\x7f\u009b\u202e", "\x7f\u009b\u202e"},
		{"the last characters of the planes are kept", "\ufffd\U0001F600\U0010FFFD", "\ufffd\U0001F600\U0010FFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EscapeMarkup(tt.in); got != tt.want {
				t.Errorf("EscapeMarkup(%q) = %q, want %q", tt.in, got, tt.want)
			}
			assertXMLReads(t, tt.in)
			assertHTMLReads(t, tt.in)
		})
	}
}

// FuzzEscapeMarkup holds EscapeMarkup to the real parsers: XML
// (encoding/xml) and HTML (golang.org/x/net/html) read it, in an
// attribute and as text, back as the string without what XML forbids,
// and it never opens a tag.
func FuzzEscapeMarkup(f *testing.F) {
	for _, s := range []string{"", "<b>", "a\uffff\x07b", "\xed\xa0\x80", "</p><script>", "&amp;", "\r\n\r", `"'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assertXMLReads(t, s)
		assertHTMLReads(t, s)
	})
}

// readBack is what a parser gives back for s escaped: s without what XML
// forbids, each CR or CR LF read as a newline.
func readBack(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		bad := r == utf8.RuneError && size == 1 || r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xfffe || r == 0xffff
		if !bad {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return strings.ReplaceAll(strings.ReplaceAll(b.String(), "\r\n", "\n"), "\r", "\n")
}

func assertXMLReads(t *testing.T, s string) {
	t.Helper()
	e := EscapeMarkup(s)
	doc := `<t a="` + e + `">` + e + `</t>`
	dec := xml.NewDecoder(strings.NewReader(doc))
	var attr, chars string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("EscapeMarkup(%q) = %q: XML does not read it: %v", s, e, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local != "t" || len(tok.Attr) != 1 {
				t.Fatalf("EscapeMarkup(%q) = %q opens an element: %v", s, e, tok)
			}
			attr = tok.Attr[0].Value
		case xml.CharData:
			chars += string(tok)
		}
	}
	if want := readBack(s); attr != want || chars != want {
		t.Fatalf("EscapeMarkup(%q) = %q: XML reads the attribute %q and the text %q, want %q", s, e, attr, chars, want)
	}
}

func assertHTMLReads(t *testing.T, s string) {
	t.Helper()
	e := EscapeMarkup(s)
	z := html.NewTokenizer(strings.NewReader(`<p title="` + e + `">` + e + `</p>`))
	var attr, chars string
	tags := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatalf("EscapeMarkup(%q) = %q: %v", s, e, z.Err())
			}
			break
		}
		tok := z.Token()
		switch tt {
		case html.StartTagToken:
			if tags++; tok.Data != "p" || len(tok.Attr) != 1 {
				t.Fatalf("EscapeMarkup(%q) = %q opens a tag: %v", s, e, tok)
			}
			attr = tok.Attr[0].Val
		case html.TextToken:
			chars += tok.Data
		case html.EndTagToken:
			if tags++; tok.Data != "p" {
				t.Fatalf("EscapeMarkup(%q) = %q closes a tag: %v", s, e, tok)
			}
		default:
			t.Fatalf("EscapeMarkup(%q) = %q makes a %v", s, e, tt)
		}
	}
	if want := readBack(s); tags != 2 || attr != want || chars != want {
		t.Fatalf("EscapeMarkup(%q) = %q: HTML reads %d tags, the attribute %q and the text %q, want 2, %q", s, e, tags, attr, chars, want)
	}
}
