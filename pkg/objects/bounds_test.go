package objects

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/internal/fifotest"
	"github.com/kubectl-rv/kubectl-rv/pkg/input"
)

func TestReadDevZeroStopsAtTheCap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(t.Context(), []string{"/dev/zero"}, false, nil)
	runtime.ReadMemStats(&after)
	var tl *input.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("want a *input.TooLargeError, got %v", err)
	}
	want := "/dev/zero:1: document 1 is larger than 64 MiB, the most one document may hold: split it into smaller documents (--- between YAML documents), or check that this is the file you meant"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*input.MaxDocument {
		t.Errorf("allocated %d MiB reading /dev/zero, want under %d MiB", alloc>>20, 4*input.MaxDocument>>20)
	}
}

// configMap is a ConfigMap of about size bytes of YAML.
func configMap(name string, size int) string {
	head := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\ndata: {v: "
	return head + strings.Repeat("x", size-len(head)-2) + "}\n"
}

func TestReadCapsEachDocument(t *testing.T) {
	const max = 1 << 10
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := configMap("small", 100)
	atCap := write("at-cap.yaml", configMap("at-cap", max))
	twoAtCap := write("two.yaml", configMap("one", max)+"---\n"+configMap("two", max))
	secondOver := write("second-over.yaml", "# a comment\n"+small+"---\n"+configMap("big", max+1)+"---\n"+small)

	objs, err := read(t.Context(), []string{atCap, twoAtCap}, false, nil, max, nil)
	if err != nil {
		t.Fatalf("documents of exactly the cap: %v", err)
	}
	if diff := cmp.Diff([]got{
		{"ConfigMap", "at-cap", atCap + ":1"},
		{"ConfigMap", "one", twoAtCap + ":1"},
		{"ConfigMap", "two", twoAtCap + ":6"},
	}, summarize(objs)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	_, err = read(t.Context(), []string{atCap, secondOver}, false, nil, max, nil)
	var tl *input.TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("want a *input.TooLargeError, got %v", err)
	}
	if diff := cmp.Diff(&input.TooLargeError{Name: secondOver, Line: 7, Document: 2, Max: max}, tl); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}

	_, err = read(t.Context(), []string{"-"}, false, strings.NewReader(small+"---\n"+configMap("big", 2*max)), max, nil)
	if want := "<stdin>:6: document 2 is larger than 1024 bytes"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("stdin: error = %v, want prefix %q", err, want)
	}
}

func TestReadFIFOStopsOnCancel(t *testing.T) {
	// A writer that opens the FIFO, writes half an object and never ends.
	path := fifotest.Stalled(t, "fifo", "apiVersion: v1\nkind: ConfigMap\n")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := Read(ctx, []string{path}, false, nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("want an error wrapping context.Canceled, got %v", err)
		}
		if want := path + ": reading stopped: context canceled"; err == nil || err.Error() != want {
			t.Errorf("error = %v, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not stop when the context was cancelled")
	}
}

// splitDocuments is the splitter that read whole files before
// splitStream: the two must agree.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur bytes.Buffer
	start := 1
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.HasPrefix(t, "---") && strings.TrimSpace(strings.SplitN(t[3:], "#", 2)[0]) == "" {
			docs = append(docs, document{data: bytes.Clone(cur.Bytes()), line: start})
			cur.Reset()
			start = line + 1
			continue
		}
		cur.WriteString(t)
		cur.WriteByte('\n')
	}
	docs = append(docs, document{data: cur.Bytes(), line: start})
	return docs
}

func FuzzSplitStream(f *testing.F) {
	f.Add([]byte("a: 1\n---\nb: 2\r\n--- # c\n---x\n\n"))
	f.Add([]byte("---"))
	f.Add([]byte("\r\r\n---\r\n\xe2\x80\x83---\n--- \xc2\xa0#\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		want := splitDocuments(data)
		var got []document
		_, err := splitStream("fuzz.yaml", bytes.NewReader(data), input.MaxDocument, func(d document) error {
			got = append(got, document{data: bytes.Clone(d.data), line: d.line})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d documents, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].data, want[i].data) || got[i].line != want[i].line {
				t.Fatalf("document %d: %q at line %d, want %q at line %d", i, got[i].data, got[i].line, want[i].data, want[i].line)
			}
		}
	})
}
