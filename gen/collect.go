package gen

import (
	"errors"
	"go/ast"
	"go/token"
	"strings"

	"github.com/dgen-go/dgen/annotations"
)

// collect finds every directive, reporting those in the wrong place, and
// returns the model of the declarations that carry one.
func (s *state) collect() model {
	var m model
	for _, f := range s.l.files {
		attached := map[*ast.CommentGroup]bool{}
		for _, d := range f.ast.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
					attached[fd.Doc] = true
					s.misplaced(fd.Doc, "a function")
				}
				continue
			}
			groups := []*ast.CommentGroup{}
			for _, sp := range gd.Specs {
				cg := gd.Doc
				switch sp := sp.(type) {
				case *ast.ValueSpec:
					if sp.Doc != nil {
						cg = sp.Doc
					}
				case *ast.TypeSpec:
					if sp.Doc != nil {
						cg = sp.Doc
					}
				}
				if cg == nil {
					continue
				}
				if len(gd.Specs) > 1 && cg == gd.Doc {
					// A directive on a grouped declaration applies to each spec
					// only when written on the spec itself.
					if hasDirective(cg) {
						attached[cg] = true
						s.misplaced(cg, "a grouped declaration (put it on the spec)")
					}
					continue
				}
				groups = append(groups, cg)
				attached[cg] = true
				s.attach(&m, f, gd, sp, cg)
			}
			if gd.Doc != nil && !attached[gd.Doc] {
				// Every spec has its own doc, which hides the group's.
				attached[gd.Doc] = true
				s.misplaced(gd.Doc, "the doc of a grouped declaration whose spec has its own doc (move it into that doc)")
			}
			_ = groups
		}
		for _, cg := range f.ast.Comments {
			if !attached[cg] {
				s.misplaced(cg, "a comment inside a function or detached from a declaration")
			}
			s.nearMisses(cg)
		}
	}
	return m
}

func hasDirective(cg *ast.CommentGroup) bool {
	for _, c := range cg.List {
		if annotations.IsDirective(c.Text) {
			return true
		}
	}
	return false
}

func (s *state) misplaced(cg *ast.CommentGroup, what string) {
	for _, c := range cg.List {
		if annotations.IsDirective(c.Text) {
			verb, _, _ := strings.Cut(strings.TrimPrefix(c.Text, annotations.Prefix), " ")
			s.errorf(c.Pos(), "//dgen:%s must be attached to a package-level declaration, not %s", verb, what)
		}
	}
}

// attach adds to m the declarations of the directives in cg, on spec sp.
func (s *state) attach(m *model, f *srcFile, gd *ast.GenDecl, sp ast.Spec, cg *ast.CommentGroup) {
	ds, err := annotations.ParseCommentGroup(cg)
	var el annotations.ErrorList
	if errors.As(err, &el) {
		for _, e := range el {
			s.errorf(e.Pos, "%s", e.Msg)
		}
	} else if err != nil {
		s.errorf(cg.Pos(), "%v", err)
	}
	for _, d := range ds {
		if err := annotations.CheckDeclOf(d, gd, sp); err != nil {
			var ae *annotations.Error
			if errors.As(err, &ae) {
				s.errorf(ae.Pos, "%s", ae.Msg)
			} else {
				s.errorf(d.Pos, "%v", err)
			}
			continue
		}
		dc := decl{file: f, dir: d}
		switch sp := sp.(type) {
		case *ast.ValueSpec:
			if len(sp.Names) != 1 {
				s.errorf(d.Pos, "//dgen:%s must be attached to a declaration of one variable", d.Verb)
				continue
			}
			dc.name, dc.pos, dc.spec = sp.Names[0].Name, sp.Names[0].Pos(), sp
		case *ast.TypeSpec:
			dc.name, dc.pos, dc.ts = sp.Name.Name, sp.Name.Pos(), sp
		}
		if dc.name == "_" {
			s.errorf(dc.pos, "//dgen:%s on the blank identifier: nothing can refer to it, give it a name", d.Verb)
			continue
		}
		if strings.HasPrefix(dc.name, "_dgen") {
			s.errorf(dc.pos, "//dgen:%s on %s: names starting with _dgen are reserved for generated code", d.Verb, dc.name)
			continue
		}
		switch d.Verb {
		case annotations.VerbProgram:
			p, _ := d.Program()
			m.programs = append(m.programs, &program{decl: dc, source: p.Source.Value, options: p.Options.Value})
		case annotations.VerbKernel:
			k, _ := d.Kernel()
			name := k.Name.Value
			if k.Name.Pos == token.NoPos {
				name = dc.name
			}
			m.kernels = append(m.kernels, &kernel{decl: dc, clName: name})
		case annotations.VerbGlobal:
			g, _ := d.Global()
			m.globals = append(m.globals, &global{decl: dc, imageScope: g.DeviceImageScope, access: g.HostAccess})
		case annotations.VerbAlloc:
			m.allocs = append(m.allocs, dc)
		case annotations.VerbSpecConst:
			m.specs = append(m.specs, dc)
		}
	}
}

// nearMisses reports comments that look like directives but are not
// read as ones: ignoring them would only move the failure to run time.
func (s *state) nearMisses(cg *ast.CommentGroup) {
	for _, c := range cg.List {
		if fix, ok := annotations.Fix(c.Text); ok {
			s.errorf(c.Pos(), "%q is not a directive; write %s (no space, lower case, a line comment)", firstLine(c.Text), fix)
		}
	}
}

// firstLine returns text up to its first newline, shortened.
func firstLine(text string) string {
	text, _, _ = strings.Cut(text, "\n")
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	return text
}
