package objects

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kubectl-rv/kubectl-rv/pkg/input"
	"github.com/kubectl-rv/kubectl-rv/pkg/text"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Source says where an object was read from.
type Source struct {
	// File is the path, "-" for standard input, or empty for the cluster.
	File string
	// Line is the 1-based line the object's document starts on (0 if unknown).
	Line int
	// Item is the index in a List, or -1.
	Item int
}

func (s Source) String() string {
	name := text.Escape(s.File)
	if name == "-" {
		name = "<stdin>"
	}
	if name == "" {
		return "cluster"
	}
	out := name
	if s.Line > 0 {
		out += ":" + strconv.Itoa(s.Line)
	}
	if s.Item >= 0 {
		out += fmt.Sprintf(" (items[%d])", s.Item)
	}
	return out
}

// Object is one object and where it came from.
type Object struct {
	Object *unstructured.Unstructured
	Source Source
}

// Describe names the object for messages: "Deployment default/web
// (deploy.yaml:3)", "Scenario (no metadata.name)". The kind and name come
// from a file or a server, so they are escaped for the terminal.
func (o Object) Describe() string {
	name := o.Object.GetName()
	if name == "" {
		name = "(no metadata.name)"
	}
	if ns := o.Object.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	desc := text.Escape(o.Object.GetKind() + " " + name)
	if o.Source.File == "" {
		return desc
	}
	return fmt.Sprintf("%s (%s)", desc, o.Source)
}

// WithFlag puts flag in front of a *PathError (-f deploy.yaml: no such file
// or directory) and returns other errors as they are: they name the file
// and line already.
func WithFlag(flag string, err error) error {
	var pe *PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %w", flag, err)
	}
	return err
}

// ErrNoObjects is returned when the input holds no object at all.
var ErrNoObjects = errors.New("no objects found")

var manifestExt = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// Read reads every object in paths. A path may be a file, a directory
// (its .yaml, .yml and .json files, recursively if recursive is set) or "-"
// for stdin. Objects come back in the order they appear.
//
// A document over input.MaxDocument is a *input.TooLargeError naming the
// file and line; once ctx is done (Ctrl-C) reading stops, also in a read
// waiting on a FIFO or a terminal, with an error wrapping ctx.Err().
//
// Errors begin with the path (or <stdin>), never with a flag: the caller
// names the flag the path came from (-f, --live, --base), in front of a
// *PathError at least.
func Read(ctx context.Context, paths []string, recursive bool, stdin io.Reader) ([]Object, error) {
	return read(ctx, paths, recursive, stdin, input.MaxDocument, nil)
}

// File is a file Read read (or standard input, "-"), with its bytes.
type File struct {
	// Name is the path as Source.File names it.
	Name string
	Data []byte
}

// ReadFiles reads as Read does, and returns the bytes of every file it
// read besides, in the order read, for what needs the text and not only
// the objects: pkg/positions places the objects (by their Source) and
// their fields on its lines.
func ReadFiles(ctx context.Context, paths []string, recursive bool, stdin io.Reader) ([]Object, []File, error) {
	var files []File
	objs, err := read(ctx, paths, recursive, stdin, input.MaxDocument, &files)
	if err != nil {
		return nil, nil, err
	}
	return objs, files, nil
}

func read(ctx context.Context, paths []string, recursive bool, stdin io.Reader, max int, keep *[]File) ([]Object, error) {
	var out []Object
	emptyStdin := false
	for _, p := range paths {
		if p == "-" {
			r, done := keepBytes(input.NewReader(ctx, "-", stdin), "-", keep)
			objs, content, err := decodeStream("-", r, max)
			if err != nil {
				return nil, err
			}
			done()
			emptyStdin = !content
			out = append(out, objs...)
			continue
		}
		files, err := expand(p, recursive)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			objs, err := readFile(ctx, f, max, keep)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	if len(out) == 0 {
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = Source{File: p, Item: -1}.String()
		}
		if emptyStdin && len(paths) == 1 {
			return nil, fmt.Errorf("<stdin>: %w: standard input was empty: pipe the objects in, for example from kubectl get -o yaml", ErrNoObjects)
		}
		return nil, fmt.Errorf("%s: %w", strings.Join(names, ", "), ErrNoObjects)
	}
	return out, nil
}

func readFile(ctx context.Context, path string, max int, keep *[]File) ([]Object, error) {
	f, err := input.Open(ctx, path, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &PathError{Path: path, Err: err}
	}
	defer f.Close()
	r, done := keepBytes(f, path, keep)
	objs, _, err := decodeStream(path, r, max)
	if err == nil {
		done()
	}
	return objs, err
}

// keepBytes returns r, and when keep is set a reader that also copies
// what is read from r, and a done func that adds the copy to keep as the
// File name.
func keepBytes(r io.Reader, name string, keep *[]File) (io.Reader, func()) {
	if keep == nil {
		return r, func() {}
	}
	var b bytes.Buffer
	return io.TeeReader(r, &b), func() { *keep = append(*keep, File{Name: name, Data: b.Bytes()}) }
}

// PathError is a path given to Read that cannot be read: the caller
// puts the flag that named it in front ("-f deploy.yaml: no such file or
// directory").
type PathError struct {
	Path string
	Err  error
}

// Error is the path and why it could not be read, without Go's "stat PATH"
// or "open PATH" in front, since it names the path already.
func (e *PathError) Error() string {
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		return e.Path + ": " + pe.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *PathError) Unwrap() error { return e.Err }

func expand(p string, recursive bool) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, &PathError{Path: p, Err: err}
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != p && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if manifestExt[strings.ToLower(filepath.Ext(path))] {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	sort.Strings(files)
	return files, nil
}

// document is one YAML document of a stream and the line it starts on.
type document struct {
	data []byte
	line int
}

// splitStream splits the YAML stream r on "---" lines, keeping line
// numbers, and calls fn with each document (its data valid during the
// call only). A document over max bytes is a *input.TooLargeError. It
// reports whether r held anything but white space.
func splitStream(name string, r io.Reader, max int, fn func(document) error) (content bool, err error) {
	lines := input.NewLines(name, r, max)
	lines.Separator = input.YAMLSeparator
	for n := 0; ; n++ {
		data, line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return content, nil
		}
		if err != nil {
			return content, readError(name, err)
		}
		// A second document means a "---" line.
		content = content || n > 0 || len(bytes.TrimSpace(data)) > 0
		if err := fn(document{data: data, line: line}); err != nil {
			return content, err
		}
	}
}

// readError returns the errors that name the file already (a document
// over the cap, a read ctx stopped) as they are, others as a *PathError.
func readError(name string, err error) error {
	if errors.Is(err, input.ErrTooLarge) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if name == "-" {
		return fmt.Errorf("<stdin>: %w", err)
	}
	return &PathError{Path: name, Err: err}
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

// Decode decodes every object in data, a YAML stream or JSON, read from the
// file name (used in errors and Sources).
func Decode(name string, data []byte) ([]Object, error) {
	objs, _, err := decodeStream(name, bytes.NewReader(data), input.MaxDocument)
	return objs, err
}

// decodeStream decodes every object r holds, as Decode does, reading one
// document of at most max bytes at a time. It reports whether r held
// anything but white space.
func decodeStream(name string, r io.Reader, max int) ([]Object, bool, error) {
	display := name
	if display == "-" {
		display = "<stdin>"
	}
	var out []Object
	content, err := splitStream(name, r, max, func(doc document) error {
		objs, err := decodeDocument(name, display, doc)
		out = append(out, objs...)
		return err
	})
	if err != nil {
		return nil, content, err
	}
	return out, content, nil
}

func decodeDocument(name, display string, doc document) ([]Object, error) {
	if isBlank(doc.data) {
		return nil, nil
	}
	// Leading comment lines count towards the document's first line.
	first := doc.line + input.LeadingComments(doc.data)
	js, err := yaml.YAMLToJSON(doc.data)
	if err != nil {
		return nil, yamlError(display, doc.line, first, err)
	}
	if string(bytes.TrimSpace(js)) == "null" {
		return nil, nil
	}
	return decodeJSONStream(js, Source{File: name, Line: first, Item: -1})
}

// yamlError rewrites a YAML parser error, whose line numbers count from the
// start of the document, into "file:line: invalid YAML: reason" with the line
// counted from the start of the file.
func yamlError(file string, docLine, firstLine int, err error) error {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := firstLine
	if m := yamlLine().FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		line = docLine + n - 1
		msg = strings.TrimLeft(msg[:m[0]]+msg[m[1]:], ": ")
	}
	return fmt.Errorf("%s:%d: invalid YAML: %s", file, line, msg)
}

func decodeJSONStream(js []byte, src Source) ([]Object, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var out []Object
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %w", src, err)
		}
		objs, err := toObjects(v, src)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

func toObjects(v any, src Source) ([]Object, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: document is not a Kubernetes object: want a mapping with apiVersion and kind, got %s", src, describeJSON(v))
	}
	m = normalizeNumbers(m).(map[string]any)
	if err := checkTypes(m, src); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		return nil, fmt.Errorf("%s: document is not a Kubernetes object: kind is missing", src)
	}
	if u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("%s: %s object: apiVersion is missing", src, u.GetKind())
	}
	if items, found := m["items"]; found && strings.HasSuffix(u.GetKind(), "List") {
		list, ok := items.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s.items must be a list", src, u.GetKind())
		}
		var out []Object
		for i, it := range list {
			s := src
			s.Item = i
			objs, err := toObjects(it, s)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	return []Object{{Object: u, Source: src}}, nil
}

// checkTypes rejects the identifying fields of an object when they are
// present with the wrong type (apiVersion: 5), which the unstructured
// getters would read as absent ("apiVersion is missing").
func checkTypes(m map[string]any, src Source) error {
	for _, f := range []string{"apiVersion", "kind"} {
		if v, ok := m[f]; ok {
			if _, isString := v.(string); !isString {
				return fmt.Errorf("%s: %s must be a string, got %s", src, f, describeJSON(v))
			}
		}
	}
	md, ok := m["metadata"]
	if !ok || md == nil {
		return nil
	}
	mm, ok := md.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: metadata must be a mapping, got %s", src, describeJSON(md))
	}
	for _, f := range []string{"name", "namespace", "resourceVersion", "uid"} {
		if v, ok := mm[f]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return fmt.Errorf("%s: metadata.%s must be a string, got %s (quote it)", src, f, describeJSON(v))
			}
		}
	}
	return nil
}

// normalizeNumbers turns json.Number into int64 or float64, as the
// unstructured helpers expect.
func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeNumbers(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = normalizeNumbers(e)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

func describeJSON(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case json.Number, float64, int64:
		return "a number"
	case map[string]any:
		return "a mapping"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

func isBlank(data []byte) bool {
	for _, l := range bytes.Split(data, []byte("\n")) {
		t := bytes.TrimSpace(l)
		if len(t) != 0 && t[0] != '#' {
			return false
		}
	}
	return true
}
