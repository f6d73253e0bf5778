package text

import (
	"testing"

	cliprinters "k8s.io/cli-runtime/pkg/printers"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"kubectl", "kubectl"},
		{"a\x1b[31mred", "a^[[31mred"},
		{"bell\x07", "bell^G"},
		{"tab\tnew\nline", "tab^Inew^Jline"},
		{"del\x7f", "del^?"},
		{"cr\r", `cr\r`},
		{"héllo", "héllo"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzEscape: nothing a terminal acts on survives, and kubectl's own
// escaping (ESC, CR) is kept as kubectl writes it.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b]0;t\a", "\r\n\t", "\x7f\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		for _, r := range got {
			if isControl(r) {
				t.Fatalf("Escape(%q) = %q keeps control character %U", s, got, r)
			}
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
