package text

import "strings"

// Wrap breaks s into lines of at most width columns between words,
// folding runs of spaces and line breaks into one space. A word longer
// than width stands on a line of its own.
func Wrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
