// Command funclen lists the non-test Go functions under a folder that are
// longer than a limit, longest first, and exits 1 when there is one:
//
//	go run ./hack/funclen -max 80 pkg
//
// A function's length is the number of lines from its func keyword to its
// closing brace, both included, as an editor shows them. Function literals
// count towards the function that holds them. Test files (_test.go) and
// folders named testdata are skipped.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Func is one function and its length in lines.
type Func struct {
	// Pos is file:line of the func keyword.
	Pos   string
	Name  string
	Lines int
}

func main() {
	maxLines := flag.Int("max", 80, "the longest a function may be, in lines")
	top := flag.Int("top", 0, "list the N longest functions whatever their length, and do not fail")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: funclen [-max N | -top N] DIR...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	funcs, err := Scan(flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "funclen: %v\n", err)
		os.Exit(2)
	}
	if *top > 0 {
		list(os.Stdout, funcs[:min(*top, len(funcs))])
		return
	}
	var over []Func
	for _, f := range funcs {
		if f.Lines > *maxLines {
			over = append(over, f)
		}
	}
	if len(over) > 0 {
		fmt.Fprintf(os.Stderr, "%d functions are over %d lines:\n", len(over), *maxLines)
		list(os.Stderr, over)
		os.Exit(1)
	}
}

func list(w io.Writer, funcs []Func) {
	for _, f := range funcs {
		fmt.Fprintf(w, "%5d  %s  %s\n", f.Lines, f.Name, f.Pos)
	}
}

// Scan returns the non-test functions of the Go files under dirs, longest
// first (then by position).
func Scan(dirs []string) ([]Func, error) {
	var funcs []Func
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			funcs = append(funcs, fileFuncs(fset, f)...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(funcs, func(i, j int) bool {
		if funcs[i].Lines != funcs[j].Lines {
			return funcs[i].Lines > funcs[j].Lines
		}
		return funcs[i].Pos < funcs[j].Pos
	})
	return funcs, nil
}

// fileFuncs returns the functions and methods declared in f that have a body.
func fileFuncs(fset *token.FileSet, f *ast.File) []Func {
	var out []Func
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, Func{
			Pos:   fmt.Sprintf("%s:%d", start.Filename, start.Line),
			Name:  funcName(fd),
			Lines: end.Line - start.Line + 1,
		})
	}
	return out
}

// funcName is "Name" for a function and "(*T).Name" or "T.Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	// Strip type parameters: T[K] -> T.
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	if star != "" {
		return "(*" + name + ")." + fd.Name.Name
	}
	return name + "." + fd.Name.Name
}
