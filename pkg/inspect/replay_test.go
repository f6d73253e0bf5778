package inspect

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

// TestReplayRecording: a file (read twice) and a pipe (read whole) replay
// to the same rows; a last line cut short is handed to the sink's opener
// and the lines before it replayed; a bad line in the middle opens no sink
// and is a *RecordingError naming the line.
func TestReplayRecording(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	w, err := NewRecordingWriter(&buf, NewRecordingHeader(t0, []string{"deployments.apps"}, true))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []follow.Event{
		{Type: follow.List, Time: t0, Resource: "apps/v1/deployments", Reason: follow.SyncInitial, Object: sampleObject("10", 3)},
		{Type: follow.Synced, Time: t0, Resource: "apps/v1/deployments", Reason: follow.SyncInitial, ResourceVersion: "10"},
		{Type: follow.Modified, Time: t0.Add(time.Second), Resource: "apps/v1/deployments", Object: sampleObject("15", 5)},
	} {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	whole := buf.String()
	cut := whole[:len(whole)-20]
	lines := bytes.Split([]byte(whole), []byte("\n"))
	broken := string(bytes.Join([][]byte{lines[0], []byte("{not json"), lines[1]}, []byte("\n"))) + "\n"
	file := func(content string) io.Reader {
		p := filepath.Join(t.TempDir(), "rec.jsonl")
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	pipe := func(content string) io.Reader { return io.MultiReader(bytes.NewReader([]byte(content))) }
	// What watch --replay opens: a file read under a context.
	inputFile := func(content string) io.Reader {
		f, err := input.Open(t.Context(), file(content).(*os.File).Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for _, src := range []struct {
		name string
		open func(string) io.Reader
	}{{"file", file}, {"pipe", pipe}, {"input.File", inputFile}} {
		for _, tc := range []struct {
			name, content string
			rows, cutLine int
			badLine       int
		}{
			{"whole", whole, 2, 0, 0},
			{"cut short", cut, 1, 4, 0},
			{"bad line", broken, 0, 0, 2},
		} {
			t.Run(src.name+"/"+tc.name, func(t *testing.T) {
				sink := &recordingSink{}
				opened, cutLine := false, 0
				_, err := ReplayRecording(src.open(tc.content), NewConfig(), func(_ RecordingHeader, c *RecordingError) (Sink, error) {
					opened = true
					if c != nil {
						cutLine = c.Line
					}
					return sink, nil
				})
				var bad *RecordingError
				if tc.badLine != 0 {
					if !errors.As(err, &bad) || bad.Line != tc.badLine || opened {
						t.Fatalf("ReplayRecording = %v (sink opened: %v), want line %d's error and no sink", err, opened, tc.badLine)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(sink.events) != tc.rows || cutLine != tc.cutLine {
					t.Errorf("%d rows, cut line %d; want %d rows, cut line %d", len(sink.events), cutLine, tc.rows, tc.cutLine)
				}
			})
		}
	}
}
