package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"slices"
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

// checkPrograms runs the front end over every program's source, with the
// declared types, and returns what it made of each: the phases after it
// take that value (checkKernels, emit), and nothing of it is kept on the
// programs.
func (s *state) checkPrograms(d *declared) fronts {
	fr := fronts{}
	uses := map[*global][]*program{}
	for _, p := range d.programs {
		f := s.frontEnd(p, d)
		fr[p] = f
		for _, g := range f.table {
			uses[g] = append(uses[g], p)
		}
	}
	for _, g := range d.globals {
		if ps := uses[g]; g.imageScope && len(ps) > 1 {
			var names []string
			for _, p := range ps {
				names = append(names, p.name)
			}
			s.errorf(g.pos, "device global %s with device_image_scope is used in more than one device image (%s)", g.name, strings.Join(names, ", "))
		}
	}
	return fr
}

// frontEnd reads one program's source and makes its device image, then
// lets go of what later phases do not read: a package of several large
// programs holds one program's tokens at a time.
func (s *state) frontEnd(prog *program, d *declared) *front {
	p := &front{program: prog}
	s.readProgram(p, d)
	if p.pp != nil {
		p.pp.Tokens, p.pp.Inactive = nil, nil
		for path := range p.pp.Files {
			p.pp.Files[path] = "" // emit needs the names only
		}
	}
	if p.unit != nil {
		for _, k := range p.unit.Kernels {
			k.Body = nil
		}
	}
	return p
}

// readProgram preprocesses and reads p's source, makes its device image
// and reports what is wrong with it.
func (s *state) readProgram(p *front, d *declared) {
	if p.source == "" {
		return // the directive's error is reported
	}
	p.clPath = filepath.Join(s.l.dir, filepath.FromSlash(p.source))
	arg, _ := p.dir.Arg("source")
	if !filepath.IsLocal(filepath.FromSlash(p.source)) {
		s.errorf(arg.ValuePos, "program %s: source %s is outside the package directory: a source must be in it or below it, as for go:embed", p.name, p.source)
		return
	}
	if real, err := filepath.EvalSymlinks(p.clPath); err == nil && !within(s.l.dir, real) {
		s.errorf(arg.ValuePos, "program %s: source %s is a link to a file outside the package directory: a source must be in it or below it, as for go:embed", p.name, p.source)
		return
	}
	src, err := readSource(p.clPath)
	if err != nil {
		s.errorf(arg.ValuePos, "program %s: cannot read source %s: %v", p.name, p.source, unwrapPath(err))
		return
	}
	if s.sourceBytes += len(src); s.sourceBytes > MaxTotalSource {
		s.errorf(arg.ValuePos, "program %s: with source %s the package's programs read more than %d MiB of OpenCL C, more than dgen reads in one run; split the package", p.name, p.source, MaxTotalSource>>20)
		return
	}
	cfg, absDirs, err := s.cppConfig(p, d)
	if err != nil {
		opt, _ := p.dir.Arg("options")
		s.errorf(opt.ValuePos, "program %s: %v", p.name, err)
		return
	}
	p.pp = cpp.Preprocess(cfg, p.clPath, src)
	p.absolute = absoluteHeaders(p, absDirs)
	p.unit = clsrc.ParseUnit(p.pp.Tokens)
	s.clErrors(p, p.pp.Errors)
	if !p.pp.Stopped { // else the unit ends where the preprocessor stopped
		s.clErrors(p, p.unit.Errors)
	}
	s.clErrors(p, s.encodingErrors(p))
	s.specRedefined(p, d)
	s.checkEmbeds(p)
	if len(p.pp.Errors) > 0 {
		p.unit = nil // no kernel is reported missing from a source that did not preprocess
		return
	}
	if len(p.unit.Errors) > 0 {
		return // the rewriting would only repeat what is reported
	}
	in := &inlined{}
	if err := s.inline(p, in, p.clPath, 0, nil); err != nil {
		s.errorf(arg.ValuePos, "program %s: %v", p.name, err)
		return
	}
	p.kernels = map[string]clsrc.KernelGlobals{}
	rewritten, ok := s.thread(p, in, d)
	if !ok {
		return
	}
	cls := make([]string, len(p.table))
	for i, g := range p.table {
		cls[i] = d.globalTypes[g].cl
	}
	p.image = string(clsrc.Image(d.structs.prelude(cls), s.imageName(p, p.clPath), rewritten))
}

// encodingErrors returns, for each file the preprocessor read, its first
// byte that the device compiler refuses: a NUL byte or one that is not
// UTF-8.
func (s *state) encodingErrors(p *front) scanner.ErrorList {
	var errs scanner.ErrorList
	for path, text := range p.pp.Files {
		if pos, msg := badByte([]byte(text)); msg != "" {
			pos.Filename = path
			errs.Add(pos, msg+" in OpenCL C source: the device compiler refuses it (save the file as UTF-8 text)")
		}
	}
	errs.Sort()
	return errs
}

// specRedefined reports a #define or #undef, in the source or its
// options, of a specialization constant's name (the kernel would see that
// value, never the one SpecConst.Set sets), and a #define of a device
// global's name (the kernel would never read the global).
func (s *state) specRedefined(p *front, decls *declared) {
	specs := map[string]decl{}
	for _, sc := range decls.specs {
		specs[sc.name] = sc
	}
	if len(specs) == 0 && len(decls.globals) == 0 {
		return
	}
	globals := map[string]*global{}
	for _, g := range decls.globals {
		globals[g.name] = g
	}
	for _, d := range p.pp.Defined {
		if g, ok := globals[d.Name]; ok && !d.Undef {
			at := s.l.fset.Position(g.pos)
			s.diag(d.Pos, fmt.Sprintf("#define %s: %s is device global %s (%s:%d:%d): the macro would replace the global in the kernels, which would never read it; rename one of them", d.Name, d.Name, g.name, s.rel(at.Filename), at.Line, at.Column))
			continue
		}
		sc, ok := specs[d.Name]
		if !ok {
			continue
		}
		at := s.l.fset.Position(sc.pos)
		verb := "#define"
		if d.Undef {
			verb = "#undef"
		}
		s.diag(d.Pos, fmt.Sprintf("%s %s: %s is specialization constant %s (%s:%d:%d), which dgen defines: the kernel would see this, never the value SpecConst.Set sets; remove the %s (a default goes in //dgen:specconst default=…)", verb, d.Name, d.Name, sc.name, s.rel(at.Filename), at.Line, at.Column, verb))
	}
	defs, _, _ := cpp.ParseOptions(p.options)
	for _, d := range defs {
		if sc, ok := specs[d.Name]; ok {
			opt, _ := p.dir.Arg("options")
			s.errorf(opt.ValuePos, "program %s: options define %s, which is specialization constant %s: the kernel would see this, never the value SpecConst.Set sets; remove it from the options", p.name, d.Name, sc.name)
		}
	}

}

// cppConfig returns the preprocessor's configuration for a program: OpenCL
// C's predefined macros, the spec constants at their defaults, then the
// -D, -U and -I of the program's options; -I directories are relative to
// the package directory, and those given as absolute paths are returned
// too, for absoluteHeaders.
func (s *state) cppConfig(p *front, d *declared) (cfg *cpp.Config, absDirs []string, err error) {
	defs, dirs, err := cpp.ParseOptions(p.options)
	if err != nil {
		return nil, nil, err
	}
	all := cpp.OpenCL()
	for _, sc := range d.specs {
		all = append(all, cpp.Define{Name: sc.name, Value: d.specDefaultOr0(sc.name).cl})
	}
	for i, d := range dirs {
		if filepath.IsAbs(d) {
			absDirs = append(absDirs, filepath.Clean(d))
		} else {
			dirs[i] = filepath.Join(s.l.dir, d)
		}
	}
	return &cpp.Config{Defines: append(all, defs...), IncludeDirs: dirs, ReadFile: readSource}, absDirs, nil
}

// bom is the UTF-8 byte order mark, which clang accepts at the start of a
// source file.
const bom = "\xef\xbb\xbf"

// readSource reads an OpenCL C file, a source or a header, refusing what
// is not a regular file (a FIFO would block the generator) and dropping a
// byte order mark. Headers may lie outside the package directory (-I of a
// shared directory): they are inlined into the image, and the generated
// file, which cannot embed them, records their hashes (emitProgram).
func readSource(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "read", Path: path, Err: errNotRegular}
	}
	if fi.Size() > MaxSourceSize {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, more than dgen reads (%d MiB)", errTooLarge, fi.Size(), MaxSourceSize>>20)}
	}
	src, err := os.ReadFile(path)
	if len(src) > MaxSourceSize { // it grew since Stat
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than dgen reads (%d MiB)", errTooLarge, MaxSourceSize>>20)}
	}
	return bytes.TrimPrefix(src, []byte(bom)), err
}

// MaxSourceSize is the largest OpenCL C file, source or header, that dgen
// reads, and MaxTotalSource the most that the programs of one package may
// read together: with dgen's memory limit (cmd/dgen), a run stays under a
// gigabyte whatever it is given (a 5 MB source peaks near 570 MB, an 8 MB
// one near 790 MB).
const (
	MaxSourceSize  = 8 << 20
	MaxTotalSource = 16 << 20
)

var errTooLarge = errors.New("file too large")

var errNotRegular = errors.New("not a regular file")

// within reports whether path, symbolic links resolved, lies in dir or
// below it.
func within(dir, path string) bool {
	root, err := filepath.EvalSymlinks(dir)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, abs)
	return err == nil && filepath.IsLocal(rel)
}

// origin is where a line of the inlined source comes from.
type origin struct {
	file string
	line int // 0 for a line dgen wrote
}

// inlined is a program's source with its headers inlined: the text, the
// same text with the tokens of #if branches not taken blanked out (for the
// rewriting, which does not evaluate conditionals; offsets are the same),
// and the origin of each line.
type inlined struct {
	text, masked strings.Builder
	lines        []origin
}

func (in *inlined) write(text, masked string, o origin) {
	in.text.WriteString(text)
	in.masked.WriteString(masked)
	in.lines = append(in.lines, o)
}

// inline writes path with every #include that the preprocessor followed
// replaced by the included text, between #line directives that keep the
// names and line numbers of the user's files.
func (s *state) inline(p *front, in *inlined, path string, id int, stack []string) error {
	if slices.Contains(stack, path) {
		return fmt.Errorf("%s includes itself: a device image cannot hold a recursive #include", s.rel(path))
	}
	stack = append(stack, path)
	byLine := map[int]cpp.Include{}
	for _, inc := range p.pp.Includes {
		if inc.FromID == id {
			byLine[inc.Line] = inc
		}
	}
	inactive := map[int][]cpp.Span{}
	for _, sp := range p.pp.Inactive[id] {
		inactive[sp.Line] = append(inactive[sp.Line], sp)
	}
	src := strings.SplitAfter(p.pp.Files[path], "\n")
	for i := 0; i < len(src); i++ {
		inc, ok := byLine[i+1]
		if !ok {
			in.write(src[i], mask(src[i], inactive[i+1]), origin{path, i + 1})
			continue
		}
		end := min(inc.EndLine, len(src))
		if inc.Repeated {
			for ; i < end; i++ {
				in.write("\n", "\n", origin{path, i + 1}) // #pragma once: nothing, on as many lines
			}
			i--
			continue
		}
		dir := fmt.Sprintf("#line 1 %s\n", strconv.Quote(s.imageName(p, inc.Path)))
		in.write(dir, dir, origin{})
		if err := s.inline(p, in, inc.Path, inc.ID, stack); err != nil {
			return err
		}
		if t := p.pp.Files[inc.Path]; !strings.HasSuffix(t, "\n") {
			in.text.WriteString("\n")
			in.masked.WriteString("\n")
		}
		dir = fmt.Sprintf("#line %d %s\n", end+1, strconv.Quote(s.imageName(p, path)))
		in.write(dir, dir, origin{})
		i = end - 1
	}
	return nil
}

// constraintOf describes a file's build constraint for a message.
func constraintOf(build string) string {
	if build == "" {
		return "in a file every build has"
	}
	return fmt.Sprintf("under %q", build)
}

// mask blanks out the given tokens of a line.
func mask(line string, spans []cpp.Span) string {
	if len(spans) == 0 {
		return line
	}
	b := []byte(line)
	for _, sp := range spans {
		for k := sp.Col - 1; k < sp.Col-1+sp.Len && k < len(b); k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
	}
	return string(b)
}

// thread rewrites the inlined source for the device globals that the
// preprocessed source names, and fills the program's table of globals. A
// global that is named only where the rewriting cannot reach (a kernel
// that a macro expansion defines) is diagnosed.
func (s *state) thread(p *front, in *inlined, d *declared) ([]byte, bool) {
	gs, byName := s.imageGlobals(p, d)
	if len(gs) == 0 {
		return []byte(in.text.String()), true
	}
	uses := kernelUses(p.unit, byName)
	// The rewriting parses the source again: the preprocessor's tokens
	// are not needed beyond this point, and a large source would hold
	// both at once.
	p.pp.Tokens = nil
	for _, k := range p.unit.Kernels {
		k.Body = nil
	}
	rw, err := clsrc.RewriteMasked([]byte(in.text.String()), []byte(in.masked.String()), gs)
	if err != nil {
		names := make([]string, len(gs))
		for i, g := range gs {
			names[i] = g.Name
		}
		s.clErrorsAt(p, err, in.lines, fmt.Sprintf("cannot thread device globals (%s) through this source: ", strings.Join(names, ", ")))
		return nil, false
	}
	for _, k := range rw.Kernels {
		p.kernels[k.Kernel] = k
	}
	for _, name := range rw.Globals {
		p.table = append(p.table, byName[name])
	}
	return rw.Source, s.allThreaded(p, uses)
}

// globalUse is the first token of a kernel's body that names a device
// global, and the global.
type globalUse struct {
	tok cpp.Token
	g   *global
}

// kernelUses returns, by kernel, the first use of a global of byName in
// the kernel's body.
func kernelUses(u *clsrc.Unit, byName map[string]*global) map[*clsrc.Kernel]globalUse {
	uses := map[*clsrc.Kernel]globalUse{}
	for _, k := range u.Kernels {
		for _, t := range k.Body {
			if g := byName[t.Text]; g != nil && t.Kind == cpp.Ident {
				uses[k] = globalUse{t, g}
				break
			}
		}
	}
	return uses
}

// imageGlobals returns the device globals that p's preprocessed source
// names and that p's build sees, to be threaded, by name too. A global the
// source names but whose declaration p's build does not see (a test file's,
// or one under another build constraint) is diagnosed at the global.
func (s *state) imageGlobals(p *front, d *declared) ([]clsrc.Global, map[string]*global) {
	named := map[string]bool{}
	for _, t := range p.pp.Tokens {
		if t.Kind == cpp.Ident {
			named[t.Text] = true
		}
	}
	var gs []clsrc.Global
	byName := map[string]*global{}
	for _, g := range d.globals {
		if !named[g.name] {
			continue
		}
		if gp, pp := g.file.ast.Name.Name, p.file.ast.Name.Name; gp != pp {
			s.errorf(g.pos, "device global %s is in package %s but used by program %s of package %s, whose generated code cannot reach its registration; declare them in one package", g.name, gp, p.name, pp)
			continue
		}
		testOnly := g.file.test && !p.file.test
		otherBuild := g.file.build != "" && g.file.build != p.file.build
		if testOnly {
			s.errorf(g.pos, "device global %s is declared in a test file but used by program %s, whose image is in the package's own build; declare it in a non-test file", g.name, p.name)
		}
		if otherBuild {
			s.errorf(g.pos, "device global %s is declared under the build constraint %q but used by program %s, declared %s; declare them under the same constraint", g.name, g.file.build, p.name, constraintOf(p.file.build))
		}
		gt, typed := d.globalTypes[g]
		if testOnly || otherBuild || !typed {
			continue
		}
		gs = append(gs, clsrc.Global{Name: g.name, Type: gt.cl})
		byName[g.name] = g
	}
	return gs, byName
}

// allThreaded reports whether the rewriting reached every kernel of p that
// uses a global (uses, from kernelUses), diagnosing each it did not.
func (s *state) allThreaded(p *front, uses map[*clsrc.Kernel]globalUse) bool {
	ok := true
	for _, k := range p.unit.Kernels {
		if _, seen := p.kernels[k.Name]; seen {
			continue
		}
		if u, used := uses[k]; used {
			s.diag(k.Pos, unthreaded(k, u.tok, u.g))
			ok = false
		}
	}
	return ok
}

// unthreaded says why the rewriting could not thread global g, named by t,
// into kernel k.
func unthreaded(k *clsrc.Kernel, t cpp.Token, g *global) string {
	if t.Macro != "" {
		return fmt.Sprintf("kernel %s is defined by a macro expansion (%s): dgen cannot thread device global %s into it; define the kernel outside the macro", k.Name, t.Macro, g.name)
	}
	return fmt.Sprintf("dgen cannot find the definition of kernel %s in its source text (macros around its body?), so cannot thread device global %s into it", k.Name, g.name)
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
func (s *state) clErrors(p *front, errs scanner.ErrorList) {
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
func (s *state) clErrorsAt(p *front, err error, lines []origin, prefix string) {
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
