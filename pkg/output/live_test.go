package output

import (
	"bytes"
	"testing"
)

func TestLiveView(t *testing.T) {
	for _, tt := range []struct {
		name string
		live bool
		want string
	}{
		{"live: each frame clears the screen", true, "\x1b[H\x1b[2Jone\x1b[H\x1b[2Jtwo\x1b[H\x1b[2J"},
		{"not live: frames follow each other", false, "onetwo"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			v := NewLiveView(&b, tt.live)
			for _, f := range []string{"one", "two"} {
				if err := v.Redraw(func() error { b.WriteString(f); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			v.Clear()
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}

func TestStatusLine(t *testing.T) {
	var b bytes.Buffer
	s := NewStatusLine(&b)
	s.Clear()
	s.Set("scanning: 1/2 types")
	s.Set("scanning: 2/2 types")
	s.Clear()
	s.Clear()
	if want := "\rscanning: 1/2 types\x1b[K\rscanning: 2/2 types\x1b[K\r\x1b[K"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
