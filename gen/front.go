package gen

import (
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/gen/internal/clsrc"
	"github.com/dgen-go/dgen/gen/internal/cpp"
)

// The OpenCL C phase: each program's source is preprocessed under the
// program's options, its declarations read, its included headers inlined
// into the device image and the device globals it uses threaded through
// it.

// checkPrograms runs the front end over every program's source.
func (s *state) checkPrograms() {
	uses := map[*global][]*program{}
	for _, p := range s.programs {
		s.frontEnd(p)
		for _, g := range p.table {
			uses[g] = append(uses[g], p)
		}
	}
	for _, g := range s.globals {
		if ps := uses[g]; g.imageScope && len(ps) > 1 {
			var names []string
			for _, p := range ps {
				names = append(names, p.name)
			}
			s.errorf(g.pos, "device global %s with device_image_scope is used in more than one device image (%s)", g.name, strings.Join(names, ", "))
		}
	}
}

// frontEnd reads one program's source and makes its device image.
func (s *state) frontEnd(p *program) {
	p.clPath = filepath.Join(s.l.dir, filepath.FromSlash(p.source))
	arg, _ := p.dir.Arg("source")
	src, err := os.ReadFile(p.clPath)
	if err != nil {
		s.errorf(arg.ValuePos, "program %s: cannot read source %s: %v", p.name, p.source, unwrapPath(err))
		return
	}
	cfg, err := s.cppConfig(p)
	if err != nil {
		opt, _ := p.dir.Arg("options")
		s.errorf(opt.ValuePos, "program %s: %v", p.name, err)
		return
	}
	p.pp = cpp.Preprocess(cfg, p.clPath, src)
	p.unit = clsrc.ParseUnit(p.pp.Tokens)
	s.clErrors(p, p.pp.Errors)
	s.clErrors(p, p.unit.Errors)
	if len(p.pp.Errors) > 0 {
		p.unit = nil // no kernel is reported missing from a source that did not preprocess
		return
	}
	text, lines, err := s.inline(p, p.clPath, nil)
	if err != nil {
		s.errorf(arg.ValuePos, "program %s: %v", p.name, err)
		return
	}
	p.kernels = map[string]clsrc.KernelGlobals{}
	rewritten, ok := s.thread(p, text, lines)
	if !ok {
		return
	}
	var prelude strings.Builder
	need := map[string]bool{}
	for _, g := range p.table {
		s.structDeps(g.cl, need)
	}
	for _, key := range s.preludeOrder {
		if need[key] {
			prelude.WriteString(s.prelude[key])
			prelude.WriteString("\n")
		}
	}
	p.image = string(clsrc.Image(prelude.String(), filepath.Base(p.source), rewritten))
}

// cppConfig returns the preprocessor's configuration for a program: OpenCL
// C's predefined macros, the spec constants at their defaults, then the
// -D, -U and -I of the program's options; -I directories are relative to
// the package directory.
func (s *state) cppConfig(p *program) (*cpp.Config, error) {
	defs, dirs, err := cpp.ParseOptions(p.options)
	if err != nil {
		return nil, err
	}
	all := cpp.OpenCL()
	for _, sc := range s.specs {
		all = append(all, cpp.Define{Name: sc.name, Value: "0"})
	}
	for i, d := range dirs {
		if !filepath.IsAbs(d) {
			dirs[i] = filepath.Join(s.l.dir, d)
		}
	}
	return &cpp.Config{Defines: append(all, defs...), IncludeDirs: dirs}, nil
}

// origin is where a line of the inlined source comes from.
type origin struct {
	file string
	line int // 0 for a line dgen wrote
}

// inline returns the text of path with every #include that the
// preprocessor followed replaced by the included text, between #line
// directives that keep the names and line numbers of the user's files, and
// the origin of each line.
func (s *state) inline(p *program, path string, stack []string) (string, []origin, error) {
	for _, f := range stack {
		if f == path {
			return "", nil, fmt.Errorf("%s includes itself: a device image cannot hold a recursive #include", s.rel(path))
		}
	}
	stack = append(stack, path)
	byLine := map[int]cpp.Include{}
	for _, in := range p.pp.Includes {
		if in.From == path {
			byLine[in.Line] = in
		}
	}
	var b strings.Builder
	var lines []origin
	src := strings.SplitAfter(p.pp.Files[path], "\n")
	for i := 0; i < len(src); i++ {
		in, ok := byLine[i+1]
		if !ok {
			b.WriteString(src[i])
			lines = append(lines, origin{path, i + 1})
			continue
		}
		end := min(in.EndLine, len(src))
		if in.Repeated {
			for ; i < end; i++ {
				b.WriteString("\n") // #pragma once: nothing, on as many lines
				lines = append(lines, origin{path, i + 1})
			}
			i--
			continue
		}
		text, sub, err := s.inline(p, in.Path, stack)
		if err != nil {
			return "", nil, err
		}
		fmt.Fprintf(&b, "#line 1 %s\n%s", strconv.Quote(s.rel(in.Path)), text)
		lines = append(append(lines, origin{}), sub...)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "#line %d %s\n", end+1, strconv.Quote(s.rel(path)))
		lines = append(lines, origin{})
		i = end - 1
	}
	return b.String(), lines, nil
}

// thread rewrites the inlined source for the device globals that the
// preprocessed source names, and fills the program's table of globals. A
// global that is named only where the rewriting cannot reach (a kernel
// that a macro expansion defines) is diagnosed.
func (s *state) thread(p *program, text string, lines []origin) ([]byte, bool) {
	named := map[string]bool{}
	for _, t := range p.pp.Tokens {
		if t.Kind == cpp.Ident {
			named[t.Text] = true
		}
	}
	var gs []clsrc.Global
	byName := map[string]*global{}
	for _, g := range s.globals {
		if g.cl == "" || !named[g.name] || (g.file.test && !p.file.test) || g.file.build != "" && g.file.build != p.file.build {
			continue
		}
		gs = append(gs, clsrc.Global{Name: g.name, Type: g.cl})
		byName[g.name] = g
	}
	if len(gs) == 0 {
		return []byte(text), true
	}
	rw, err := clsrc.Rewrite([]byte(text), gs)
	if err != nil {
		names := make([]string, len(gs))
		for i, g := range gs {
			names[i] = g.Name
		}
		s.clErrorsAt(p, err, lines, fmt.Sprintf("cannot thread device globals (%s) through this source: ", strings.Join(names, ", ")))
		return nil, false
	}
	for _, k := range rw.Kernels {
		p.kernels[k.Kernel] = k
	}
	for _, name := range rw.Globals {
		p.table = append(p.table, byName[name])
	}
	ok := true
	for _, k := range p.unit.Kernels {
		if _, seen := p.kernels[k.Name]; seen {
			continue
		}
		for _, t := range k.Body {
			if g := byName[t.Text]; g != nil && t.Kind == cpp.Ident {
				s.diag(k.Pos, fmt.Sprintf("kernel %s is defined by a macro expansion (%s): dgen cannot thread device global %s into it; define the kernel outside the macro", k.Name, t.Macro, g.name))
				ok = false
				break
			}
		}
	}
	return rw.Source, ok
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// clErrors reports errors of the front end at their positions, naming
// the #include directives through which a header was reached.
func (s *state) clErrors(p *program, errs scanner.ErrorList) {
	for _, e := range errs {
		msg := e.Msg
		for _, at := range p.pp.IncludedFrom(e.Pos.Filename) {
			at.Filename = s.rel(at.Filename)
			msg += fmt.Sprintf(" (in file included from %s:%d)", at.Filename, at.Line)
		}
		s.diag(e.Pos, msg)
	}
}

// clErrorsAt reports errors of the rewriting, whose lines are lines of the
// inlined source, at the user's files and lines, each message after prefix.
func (s *state) clErrorsAt(p *program, err error, lines []origin, prefix string) {
	var list clsrc.ErrorList
	var one *clsrc.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = clsrc.ErrorList{one}
	default:
		s.errorf(p.pos, "program %s: %s%v", p.name, prefix, err)
		return
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Pos.Offset < list[j].Pos.Offset })
	for _, e := range list {
		pos := token.Position{Filename: p.clPath, Line: e.Pos.Line, Column: e.Pos.Column}
		if e.Pos.Line >= 1 && e.Pos.Line <= len(lines) && lines[e.Pos.Line-1].line > 0 {
			o := lines[e.Pos.Line-1]
			pos.Filename, pos.Line = o.file, o.line
		}
		s.diag(pos, prefix+e.Msg)
	}
}
