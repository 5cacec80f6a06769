package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
)

// prune removes from src, a generated file, the converters (toCore…,
// fromCore…) that nothing in it calls, and then those that only the
// removed ones called: a type's converters are written with the type,
// whether or not a forwarder needs them.
func prune(src []byte) ([]byte, error) {
	for {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		uses := map[string]int{}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				uses[id.Name]++
			}
			return true
		})
		type span struct{ from, to int }
		var dead []span
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isConverter(fn.Name.Name) || uses[fn.Name.Name] > 1 {
				continue // its own name is one use
			}
			from := fn.Pos()
			if fn.Doc != nil {
				from = fn.Doc.Pos()
			}
			dead = append(dead, span{fset.Position(from).Offset, fset.Position(fn.End()).Offset})
		}
		if len(dead) == 0 {
			return src, nil
		}
		slices.Reverse(dead)
		for _, s := range dead {
			to := s.to
			for to < len(src) && src[to] == '\n' {
				to++
			}
			src = append(src[:s.from:s.from], src[to:]...)
		}
	}
}

// isConverter reports whether name is one of the converters that
// mkfacade writes between rt's types and the core's.
func isConverter(name string) bool {
	return strings.HasPrefix(name, "toCore") || strings.HasPrefix(name, "fromCore")
}
