package objects

import (
	"errors"
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
			objs, err := ReadFiles(tt.paths, tt.recursive, strings.NewReader(tt.stdin))
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
	if _, err := ReadFiles([]string{"testdata/missing.yaml"}, false, nil); err == nil || !strings.Contains(err.Error(), "-f testdata/missing.yaml") {
		t.Errorf("missing file: error = %v, want it to name -f testdata/missing.yaml", err)
	}
	_, err := ReadFiles([]string{"-"}, false, strings.NewReader("# only a comment\n"))
	if !errors.Is(err, ErrNoObjects) {
		t.Errorf("empty input: error = %v, want ErrNoObjects", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\napiVersion: v1\nkind: List\nitems: []\n"))
	f.Add([]byte("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"))
	f.Add([]byte("---\n--- # c\n:\n"))
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
		}
	})
}
