package text

import (
	"strings"
	"testing"
	"unicode/utf8"

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
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{`<script>"a" & 'b'</script>`, "&lt;script&gt;&#34;a&#34; &amp; &#39;b&#39;&lt;/script&gt;"},
		{"bell\x07<", "bell^G&lt;"},
	}
	for _, tt := range tests {
		if got := EscapeMarkup(tt.in); got != tt.want {
			t.Errorf("EscapeMarkup(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
