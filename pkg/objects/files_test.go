package objects

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type got struct {
	Kind, Name, Source string
}

func summarize(objs []Object) []got {
	var out []got
	for _, o := range objs {
		out = append(out, got{o.Object.GetKind(), o.Object.GetName(), o.Source.String()})
	}
	return out
}

func TestReadFiles(t *testing.T) {
	tests := []struct {
		name      string
		paths     []string
		recursive bool
		stdin     string
		want      []got
	}{
		{
			name:  "multi-document YAML with a List",
			paths: []string{"testdata/multi.yaml"},
			want: []got{
				{"ConfigMap", "one", "testdata/multi.yaml:2"},
				{"Deployment", "web", "testdata/multi.yaml:9"},
				{"Secret", "s1", "testdata/multi.yaml:19 (items[0])"},
				{"Service", "svc", "testdata/multi.yaml:19 (items[1])"},
			},
		},
		{
			name:  "directory, not recursive, manifests only",
			paths: []string{"testdata/dir"},
			want: []got{
				{"ConfigMap", "a", "testdata/dir/a.yaml:1"},
				{"ConfigMap", "b", "testdata/dir/b.json:1"},
			},
		},
		{
			name:      "directory, recursive",
			paths:     []string{"testdata/dir"},
			recursive: true,
			want: []got{
				{"ConfigMap", "a", "testdata/dir/a.yaml:1"},
				{"ConfigMap", "b", "testdata/dir/b.json:1"},
				{"ConfigMap", "c", "testdata/dir/sub/c.yaml:1"},
			},
		},
		{
			name:  "stdin",
			paths: []string{"-"},
			stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
			want:  []got{{"Pod", "p", "<stdin>:1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Read(context.Background(), tt.paths, tt.recursive, strings.NewReader(tt.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(objs)); diff != "" {
				t.Errorf("objects mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumbersDecodeAsInt64(t *testing.T) {
	objs, err := Decode("x.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 4}\nspec: {replicas: 3, ratio: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	spec := objs[0].Object.Object["spec"].(map[string]any)
	if _, ok := spec["replicas"].(int64); !ok {
		t.Errorf("replicas decoded as %T, want int64", spec["replicas"])
	}
	if _, ok := spec["ratio"].(float64); !ok {
		t.Errorf("ratio decoded as %T, want float64", spec["ratio"])
	}
	if g := objs[0].Object.GetGeneration(); g != 4 {
		t.Errorf("generation = %d, want 4", g)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"malformed YAML names the file line", "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v1\nkind: [unclosed\n", "bad.yaml:5: invalid YAML"},
		{"not a mapping", "- a\n- b\n", "bad.yaml:1: document is not a Kubernetes object: want a mapping with apiVersion and kind, got a list"},
		{"missing kind", "apiVersion: v1\nmetadata: {name: x}\n", "bad.yaml:1: document is not a Kubernetes object: kind is missing"},
		{"missing apiVersion", "kind: Pod\n", "bad.yaml:1: Pod object: apiVersion is missing"},
		{"list item without kind", "apiVersion: v1\nkind: List\nitems:\n- metadata: {name: x}\n", "bad.yaml:1 (items[0]): document is not a Kubernetes object: kind is missing"},
		{"apiVersion not a string", "apiVersion: 5\nkind: Pod\n", "bad.yaml:1: apiVersion must be a string, got a number"},
		{"kind not a string", "apiVersion: v1\nkind: [a]\n", "bad.yaml:1: kind must be a string, got a list"},
		{"metadata not a mapping", "apiVersion: v1\nkind: Pod\nmetadata: x\n", "bad.yaml:1: metadata must be a mapping, got a string"},
		{"name not a string", "apiVersion: v1\nkind: Pod\nmetadata: {name: 5}\n", "bad.yaml:1: metadata.name must be a string, got a number (quote it)"},
		{"bad JSON", "{\"apiVersion\": \"v1\",", "bad.yaml:1: invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("bad.yaml", []byte(tt.input))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestReadFilesErrors(t *testing.T) {
	_, err := Read(context.Background(), []string{"testdata/missing.yaml"}, false, nil)
	if want := "--live testdata/missing.yaml: no such file or directory"; err == nil || WithFlag("--live", err).Error() != want {
		t.Errorf("missing file: error = %v, want %q with the flag", err, want)
	}
	_, err = Read(context.Background(), []string{"-"}, false, strings.NewReader("# only a comment\n"))
	if want := "<stdin>: no objects found"; !errors.Is(err, ErrNoObjects) || err.Error() != want {
		t.Errorf("a comment only: error = %v, want ErrNoObjects, %q", err, want)
	}
	_, err = Read(context.Background(), []string{"-"}, false, strings.NewReader("---\n"))
	if want := "<stdin>: no objects found"; !errors.Is(err, ErrNoObjects) || err.Error() != want {
		t.Errorf("a separator only: error = %v, want ErrNoObjects, %q", err, want)
	}
	_, err = Read(context.Background(), []string{"-"}, false, strings.NewReader(" \n"))
	if want := "<stdin>: no objects found: standard input was empty"; !errors.Is(err, ErrNoObjects) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("empty stdin: error = %v, want ErrNoObjects, %q", err, want)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\napiVersion: v1\nkind: List\nitems: []\n"))
	f.Add([]byte("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"))
	f.Add([]byte("---\n--- # c\n:\n"))
	f.Add([]byte("apiVersion: 5\nkind: ConfigMap\nmetadata: {name: x}\n"))
	f.Add([]byte("apiVersion: v1\nkind: \"\\e]0;title\\a\"\nmetadata: {name: \"a\\rb\"}\n"))
	f.Add([]byte("apiVersion: v1\nkind: A\nmetadata: 5\n"))
	f.Add([]byte("apiVersion: v1\nkind: A\nmetadata: {resourceVersion: 12}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := Decode("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, o := range objs {
			if o.Object.GetKind() == "" || o.Object.GetAPIVersion() == "" {
				t.Fatalf("decoded an object without kind or apiVersion: %v", o.Object.Object)
			}
			if d := o.Describe(); strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("Describe() = %q: a control character reaches the terminal", d)
			}
		}
	})
}

func TestDescribeEscapes(t *testing.T) {
	objs, err := Decode("x.yaml", []byte("apiVersion: v1\nkind: \"A\\e]0;title\\a\"\nmetadata: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objs[0].Describe(), "A^[]0;title^G (no metadata.name) (x.yaml:1)"; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
}

// TestReadFilesKeepsBytes: ReadFiles returns the objects Read returns and
// the bytes of each file read, named as the objects' Sources name it,
// standard input among them.
func TestReadFilesKeepsBytes(t *testing.T) {
	const stdin = "# from a pipe\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: piped}\n"
	paths := []string{"testdata/multi.yaml", "-"}
	objs, files, err := ReadFiles(t.Context(), paths, false, strings.NewReader(stdin))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Read(t.Context(), paths, false, strings.NewReader(stdin))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summarize(plain), summarize(objs)); diff != "" {
		t.Errorf("objects (-Read +ReadFiles):\n%s", diff)
	}
	multi, err := os.ReadFile("testdata/multi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []File{{Name: "testdata/multi.yaml", Data: multi}, {Name: "-", Data: []byte(stdin)}}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}
