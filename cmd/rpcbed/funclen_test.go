package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines bounds a non-test function of internal/ and cmd/: a function
// longer than this does several jobs, each of which wants a name.
const maxFuncLines = 120

// longFuncs are the functions allowed over maxFuncLines: generated code and
// the callgrind parser (one state machine over callgrind's format) for good,
// and the ones being split now, until they are.
var longFuncs = map[string]string{
	"internal/cost/callgrind.go Parse":    "the callgrind parser: one state machine over the format",
	"internal/plan/spec.go Spec.Validate": "being split by rule",
}

// TestFunctionLength fails on a non-test function of internal/ or cmd/ longer
// than maxFuncLines lines (internal/gen, generated, aside), and on an entry of
// longFuncs that is no longer long.
func TestFunctionLength(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	long := map[string]int{}
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() && rel == filepath.Join("internal", "gen") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFuncLines {
					long[filepath.ToSlash(rel)+" "+funcName(fd)] = n
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for name, n := range long {
		if _, ok := longFuncs[name]; !ok {
			t.Errorf("%s: %d lines; want at most %d (split it by job)", name, n, maxFuncLines)
		}
	}
	for name := range longFuncs {
		if _, ok := long[name]; !ok {
			t.Errorf("%s is listed in longFuncs but is %d lines or fewer: take it off the list", name, maxFuncLines)
		}
	}
}

// funcName is Recv.Name for a method, Name for a function.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
