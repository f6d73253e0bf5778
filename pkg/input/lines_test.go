package input

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type cut struct {
	Doc  string
	Line int
}

// split cuts r's documents at "---" lines, as pkg/objects does.
func split(t *testing.T, r io.Reader, max int) ([]cut, error) {
	t.Helper()
	l := NewLines("in.yaml", r, max)
	l.Separator = func(line []byte) bool { return strings.HasPrefix(string(line), "---") }
	var out []cut
	for {
		doc, at, err := l.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, cut{string(doc), at})
	}
}

func TestLinesSplitsDocuments(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []cut
	}{
		{"one document", "a: 1\nb: 2\n", []cut{{"a: 1\nb: 2\n", 1}}},
		{"documents keep their first line", "a: 1\n---\nb: 2\nc: 3\n---\nd: 4", []cut{{"a: 1\n", 1}, {"b: 2\nc: 3\n", 3}, {"d: 4\n", 6}}},
		{"CRLF endings become LF", "a: 1\r\n---\r\nb: 2\r\n", []cut{{"a: 1\n", 1}, {"b: 2\n", 3}}},
		{"a last line without its ending", "a: 1\r", []cut{{"a: 1\n", 1}}},
		{"empty", "", []cut{{"", 1}}},
		{"a leading separator", "---\na: 1\n", []cut{{"", 1}, {"a: 1\n", 2}}},
		{"a trailing separator", "a: 1\n---\n", []cut{{"a: 1\n", 1}, {"", 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := split(t, strings.NewReader(tt.in), 1<<10)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("documents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLinesCap(t *testing.T) {
	const max = 100
	line := strings.Repeat("x", 49) + "\n" // 50 bytes
	tests := []struct {
		name    string
		in      string
		wantErr *TooLargeError
	}{
		{"a document of exactly the cap", line + line, nil},
		{"documents of exactly the cap", line + line + "--- # a separator is in no document\n" + line + line, nil},
		{"one byte over", line + line + "\n", &TooLargeError{Name: "in.yaml", Line: 1, Document: 1, Max: max}},
		{"a long line without an end", strings.Repeat("y", 10*max), &TooLargeError{Name: "in.yaml", Line: 1, Document: 1, Max: max}},
		{"the second document", "a: 1\n---\n" + line + line + line, &TooLargeError{Name: "in.yaml", Line: 3, Document: 2, Max: max}},
		{"a leading separator does not count", "---\n" + line + line + line, &TooLargeError{Name: "in.yaml", Line: 2, Document: 1, Max: max}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := split(t, strings.NewReader(tt.in), max)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			var got *TooLargeError
			if !errors.As(err, &got) || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("want a *TooLargeError, got %v", err)
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// zeros is an endless stream of zero bytes, like /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestLinesJustUnderMaxDocument(t *testing.T) {
	// One line of MaxDocument-1 bytes and its "\n": the cap exactly.
	r := io.MultiReader(io.LimitReader(zeros{}, MaxDocument-1), strings.NewReader("\n"))
	l := NewLines("big.json", r, MaxDocument)
	doc, _, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(doc) != MaxDocument {
		t.Errorf("document of %d bytes, want %d", len(doc), MaxDocument)
	}
	if _, _, err := l.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("want io.EOF after the line, got %v", err)
	}
}

func TestLinesEachLineADocument(t *testing.T) {
	l := NewLines("rec.jsonl", strings.NewReader("a\r\n\nbb\ncccc"), 3)
	l.Unit = "line"
	var got []cut
	for {
		doc, at, err := l.Next()
		if errors.Is(err, io.EOF) {
			t.Fatal("want an error for the line over the cap")
		}
		if err != nil {
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Line != 4 || tl.Unit != "line" {
				t.Errorf("want a *TooLargeError for line 4, got %v", err)
			}
			break
		}
		got = append(got, cut{string(doc), at})
	}
	if diff := cmp.Diff([]cut{{"a\n", 1}, {"\n", 2}, {"bb\n", 3}}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestTooLargeErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  *TooLargeError
		want string
	}{
		{"a document of a file", &TooLargeError{Name: "deploy.yaml", Line: 12, Document: 2, Max: MaxDocument},
			"deploy.yaml:12: document 2 is larger than 64 MiB, the most one document may hold: split it into smaller documents (--- between YAML documents), or check that this is the file you meant"},
		{"standard input, one file", &TooLargeError{Name: "-", Unit: "file", Max: 10},
			"<stdin>: the file is larger than 10 bytes, the most one file may hold: check that this is the file you meant"},
		{"the caller names the place", &TooLargeError{Unit: "line", Fix: "check that it is a recording", Max: MaxDocument},
			"the line is larger than 64 MiB, the most one line may hold: check that it is a recording"},
		{"a name with control characters", &TooLargeError{Name: "a\x1b]0;x\a.yaml", Line: 1, Document: 1, Max: 10},
			`a^[]0;x^G.yaml:1: document 1 is larger than 10 bytes, the most one document may hold: split it into smaller documents (--- between YAML documents), or check that this is the file you meant`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestReadAll(t *testing.T) {
	got, err := ReadAll("p.json", strings.NewReader("0123456789"), 10, "")
	if err != nil || string(got) != "0123456789" {
		t.Errorf("the cap exactly: got %q, %v", got, err)
	}
	_, err = ReadAll("p.json", strings.NewReader("0123456789a"), 10, "")
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Name != "p.json" || tl.Unit != "file" {
		t.Errorf("one byte over: want a *TooLargeError for the file p.json, got %#v", err)
	}
}
