package output

import (
	"fmt"
	"io"
)

// The terminal controls of live views: cursor home and clear the screen;
// carriage return; erase to the end of the line.
const (
	clearScreen = "\x1b[H\x1b[2J"
	eraseLine   = "\x1b[K"
)

// LiveView redraws a view in place on a terminal, as top does: the one
// helper for every --for and --watch redraw (churn, lag), so that no
// command or engine writes terminal controls of its own. When not live
// (not a terminal, or structured output) it clears nothing and frames
// follow each other.
type LiveView struct {
	w    io.Writer
	live bool
}

// NewLiveView returns a view on w, redrawn in place when live.
func NewLiveView(w io.Writer, live bool) *LiveView { return &LiveView{w: w, live: live} }

// Live reports whether frames are redrawn in place.
func (v *LiveView) Live() bool { return v.live }

// Redraw clears the screen when live and renders a frame with draw.
func (v *LiveView) Redraw(draw func() error) error {
	v.Clear()
	return draw()
}

// Clear clears the screen when live: before the final report, so that it
// does not follow the last frame.
func (v *LiveView) Clear() {
	if v.live {
		fmt.Fprint(v.w, clearScreen)
	}
}

// StatusLine is a one-line status (a scan's progress) rewritten in place on
// a terminal's error stream.
type StatusLine struct {
	w     io.Writer
	wrote bool
}

// NewStatusLine returns a status line on w, which should be a terminal.
func NewStatusLine(w io.Writer) *StatusLine { return &StatusLine{w: w} }

// Set replaces the line with msg.
func (s *StatusLine) Set(msg string) {
	fmt.Fprint(s.w, "\r"+msg+eraseLine)
	s.wrote = true
}

// Clear erases the line, if it was ever set.
func (s *StatusLine) Clear() {
	if s.wrote {
		fmt.Fprint(s.w, "\r"+eraseLine)
		s.wrote = false
	}
}
