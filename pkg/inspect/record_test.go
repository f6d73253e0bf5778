package inspect

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-rv/kubectl-rv/pkg/follow"
)

func sampleObject(rv string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "default", "resourceVersion": rv, "generation": int64(2),
		},
		"spec": map[string]any{"replicas": replicas, "paused": false, "ratio": 0.5},
	}}
}

func TestRecordingRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	events := []follow.Event{
		{Type: follow.List, Time: t0, Resource: "apps/v1/deployments", Reason: follow.SyncInitial, Object: sampleObject("10", 3)},
		{Type: follow.Synced, Time: t0, Resource: "apps/v1/deployments", Reason: follow.SyncInitial, ResourceVersion: "12"},
		{Type: follow.Modified, Time: t0.Add(time.Second), Resource: "apps/v1/deployments", Object: sampleObject("15", 5)},
		{Type: follow.Bookmark, Time: t0.Add(2 * time.Second), Resource: "apps/v1/deployments", ResourceVersion: "20"},
		{Type: follow.Synced, Time: t0.Add(3 * time.Second), Resource: "apps/v1/deployments", Reason: follow.SyncRelist, ResourceVersion: "40", GapFrom: "20", GapError: "too old resource version: 20 (30)"},
		{Type: follow.Deleted, Time: t0.Add(4 * time.Second), Resource: "apps/v1/deployments", Object: sampleObject("41", 5)},
	}
	var buf bytes.Buffer
	h := NewRecordingHeader(t0, []string{"deployments.apps -n default"}, true)
	w, err := NewRecordingWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != len(events)+1 {
		t.Fatalf("want %d lines, got %d:\n%s", len(events)+1, n, buf.String())
	}
	got, err := ReadRecording(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := &Recording{Header: h, Events: events}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestReadRecordingErrors(t *testing.T) {
	header := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z","secretsRedacted":true}` + "\n"
	tests := []struct {
		name, in, want string
		notRecording   bool
	}{
		{name: "empty file", in: "", want: "line 1: not a kubectl rv watch recording", notRecording: true},
		{name: "yaml instead of a recording", in: "apiVersion: v1\nkind: Pod\n", want: "line 1: not a kubectl rv watch recording", notRecording: true},
		{name: "other kind", in: `{"kind":"WatchEvent"}` + "\n", want: "line 1: not a kubectl rv watch recording", notRecording: true},
		{name: "future format", in: `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":2}` + "\n", want: "line 1: recording format rv.kubectl-rv.dev/v1alpha1 2 is not supported"},
		{name: "bad json line", in: header + "\n{oops\n", want: "line 3: invalid JSON"},
		{name: "unknown type", in: header + `{"type":"ERROR","resource":"v1/pods"}` + "\n", want: `line 2: type "ERROR": want ADDED`},
		{name: "event without object", in: header + `{"type":"MODIFIED","resource":"v1/pods"}` + "\n", want: "line 2: a MODIFIED line needs an object"},
		{name: "object without name", in: header + `{"type":"ADDED","resource":"v1/pods","object":{"kind":"Pod"}}` + "\n", want: "line 2: ADDED object has no metadata.name"},
		{name: "object not an object", in: header + `{"type":"ADDED","resource":"v1/pods","object":[1]}` + "\n", want: "line 2: object: "},
		{name: "missing resource", in: header + `{"type":"BOOKMARK"}` + "\n", want: "line 2: resource is missing"},
		{name: "bad sync reason", in: header + `{"type":"SYNCED","resource":"v1/pods","reason":"later"}` + "\n", want: `line 2: SYNCED reason "later"`},
		{name: "resourceVersion not a number", in: header + `{"type":"MODIFIED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":"abc"}}}` + "\n", want: `line 2: object metadata.resourceVersion "abc" is not a resourceVersion: want a positive integer`},
		{name: "negative resourceVersion", in: header + `{"type":"ADDED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":"-1"}}}` + "\n", want: `line 2: object metadata.resourceVersion "-1" is not a resourceVersion`},
		{name: "26-digit resourceVersion", in: header + `{"type":"ADDED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":"12345678901234567890123456"}}}` + "\n", want: `line 2: object metadata.resourceVersion "12345678901234567890123456" is not a resourceVersion`},
		{name: "escape sequence in a resourceVersion", in: header + `{"type":"ADDED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":"\u001b]0;x\u0007"}}}` + "\n", want: `line 2: object metadata.resourceVersion "\x1b]0;x\a" is not a resourceVersion`},
		{name: "resourceVersion a JSON number", in: header + `{"type":"ADDED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":5}}}` + "\n", want: `line 2: object metadata.resourceVersion 5 is not a resourceVersion: want a string`},
		{name: "leading zero bookmark", in: header + `{"type":"BOOKMARK","resource":"v1/pods","resourceVersion":"007"}` + "\n", want: `line 2: resourceVersion "007" is not a resourceVersion`},
		{name: "bad gapFrom", in: header + `{"type":"SYNCED","resource":"v1/pods","reason":"relist","resourceVersion":"9","gapFrom":"0"}` + "\n", want: `line 2: gapFrom "0" is not a resourceVersion`},
		{name: "list without reason", in: header + `{"type":"LIST","resource":"v1/pods","object":{"metadata":{"name":"a"}}}` + "\n", want: `line 2: LIST reason ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadRecording(strings.NewReader(tt.in))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("want error starting %q, got %v", tt.want, err)
			}
			if got := errors.Is(err, ErrNotRecording); got != tt.notRecording {
				t.Errorf("errors.Is(err, ErrNotRecording) = %v, want %v", got, tt.notRecording)
			}
		})
	}
}

// TestReadRecordingCutShort: only a last line without its newline (what a
// recorder stopped mid-write leaves) is cut short; the lines before it are
// read.
func TestReadRecordingCutShort(t *testing.T) {
	header := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z"}` + "\n"
	list := `{"type":"LIST","resource":"v1/pods","reason":"initial","object":{"metadata":{"name":"a","resourceVersion":"5"}}}` + "\n"
	tests := []struct {
		name   string
		in     string
		events int
		cut    bool
		line   int
	}{
		{"cut mid-line", header + list + `{"type":"MODIF`, 1, true, 3},
		{"cut after a whole object", header + list + list[:len(list)-2], 1, true, 3},
		{"cut line ended by a newline", header + list + `{"type":"MODIF` + "\n", 0, false, 3},
		{"cut line in the middle", header + `{"type":"MODIF` + "\n" + list, 0, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := ReadRecording(strings.NewReader(tt.in))
			var re *RecordingError
			if !errors.As(err, &re) || re.Line != tt.line || errors.Is(err, ErrCutShort) != tt.cut {
				t.Fatalf("want a RecordingError at line %d (cut short: %v), got %v", tt.line, tt.cut, err)
			}
			if got := 0; tt.cut {
				if rec != nil {
					got = len(rec.Events)
				}
				if got != tt.events {
					t.Errorf("read %d events before the cut, want %d", got, tt.events)
				}
			} else if rec != nil {
				t.Errorf("damage in the middle returned a recording: %+v", rec)
			}
			if _, err := CheckRecording(strings.NewReader(tt.in)); errors.Is(err, ErrCutShort) != tt.cut {
				t.Errorf("CheckRecording: cut short %v, want %v (%v)", errors.Is(err, ErrCutShort), tt.cut, err)
			}
		})
	}
}

func TestReadRecordingKeepsIntegers(t *testing.T) {
	in := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z"}
{"type":"ADDED","time":"2026-11-21T15:00:01Z","resource":"apps/v1/deployments","object":{"kind":"Deployment","metadata":{"name":"web","generation":3},"spec":{"replicas":5}}}
`
	rec, err := ReadRecording(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	n, found, err := unstructured.NestedInt64(rec.Events[0].Object.Object, "spec", "replicas")
	if err != nil || !found || n != 5 {
		t.Errorf("spec.replicas = %d, %v, %v; want 5 as int64", n, found, err)
	}
}

func FuzzReadRecording(f *testing.F) {
	header := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z"}` + "\n"
	f.Add("")
	f.Add(header)
	f.Add(header + `{"type":"LIST","resource":"v1/pods","reason":"initial","object":{"metadata":{"name":"a","resourceVersion":"5"}}}` + "\n")
	f.Add(header + `{"type":"SYNCED","resource":"v1/pods","reason":"relist","resourceVersion":"9","gapFrom":"5"}` + "\n")
	f.Add(header + `{"type":"MODIFIED","resource":"v1/pods","object":{"metadata":{"name":"a"},"spec":{"x":1.5e300}}}` + "\n")
	f.Add(header + `{"type":"ADDED","resource":"v1/pods","object":{"metadata":{"name":"a","resourceVersion":"-1"}}}` + "\n")
	f.Add(header + `{"type":"BOOKMARK","resource":"v1/pods","resourceVersion":"12345678901234567890123456"}` + "\n")
	f.Add(header + `{"type":"LIST","resource":"v1/pods","reason":"initial","object":{"metadata":{"name":"a","resourceVersion":"5"}}}` + "\n" + `{"type":"MODIFIED","resource":"v1/po`)
	f.Fuzz(func(t *testing.T, in string) {
		rec, err := ReadRecording(strings.NewReader(in))
		if errors.Is(err, ErrCutShort) {
			// The lines before a cut are read whole.
			if rec == nil {
				t.Fatalf("a recording cut short returned no events: %v", err)
			}
		} else if err != nil {
			return
		}
		// What was read must write back and read again to the same thing.
		var buf bytes.Buffer
		w, err := NewRecordingWriter(&buf, rec.Header)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range rec.Events {
			if err := w.Write(ev); err != nil {
				t.Fatal(err)
			}
		}
		again, err := ReadRecording(&buf)
		if err != nil {
			t.Fatalf("re-reading a written recording: %v\n%s", err, buf.String())
		}
		if len(again.Events) != len(rec.Events) {
			t.Fatalf("re-read %d events, want %d", len(again.Events), len(rec.Events))
		}
	})
}

// FuzzReplay feeds arbitrary recordings through the tracker: whatever a
// recording holds, a replay must not panic.
func FuzzReplay(f *testing.F) {
	header := `{"apiVersion":"rv.kubectl-rv.dev/v1alpha1","kind":"WatchRecording","format":1,"started":"2026-11-21T15:00:00Z"}` + "\n"
	obj := func(rv, mf string) string {
		return `{"kind":"Deployment","metadata":{"name":"web","uid":"u","resourceVersion":"` + rv + `","generation":1,"managedFields":` + mf + `},"spec":{"replicas":1,"l":[{"name":"a"}]}}`
	}
	f.Add(header + `{"type":"LIST","resource":"apps/v1/deployments","reason":"initial","object":` + obj("5", `[{"manager":"a","operation":"Update","time":"2026-11-21T15:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]`) + "}\n" +
		`{"type":"SYNCED","resource":"apps/v1/deployments","reason":"initial","resourceVersion":"5"}` + "\n" +
		`{"type":"MODIFIED","resource":"apps/v1/deployments","object":` + obj("7", `[{"manager":"b","operation":"Apply","fieldsV1":{"f:spec":{"f:l":{"k:{\"name\":\"a\"}":{}}}}}]`) + "}\n")
	f.Add(header + `{"type":"MODIFIED","resource":"v1/pods","object":` + obj("x", `"bad"`) + "}\n" +
		`{"type":"SYNCED","resource":"v1/pods","reason":"relist","resourceVersion":"9","gapFrom":"x"}` + "\n")
	f.Add(header + `{"type":"MODIFIED","resource":"v1/pods","object":` + obj("3", `[{"manager":"a","operation":"Update","time":"bad"}]`) + "}\n" +
		`{"type":"MODIFIED","resource":"v1/pods","object":` + obj("4", `[{"manager":"a","operation":"Update","fieldsV1":{"q:x":1}}]`) + "}\n" +
		`{"type":"DELETED","resource":"v1/pods","object":` + obj("5", `[]`) + "}\n")
	f.Fuzz(func(t *testing.T, in string) {
		rec, err := ReadRecording(strings.NewReader(in))
		if err != nil && !errors.Is(err, ErrCutShort) {
			return
		}
		tr := NewTracker(TrackerConfig{FightThreshold: 1, ShowBookmarks: true})
		for _, ev := range rec.Events {
			tr.Observe(ev)
		}
		_ = tr.Summary(time.Time{})
	})
}
