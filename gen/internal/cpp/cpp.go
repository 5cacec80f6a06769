// Package cpp is the C99 preprocessor of dgen's OpenCL C front end.
//
// It expands object-like and function-like macros with #, ## and
// __VA_ARGS__, rescanning as C99 6.10.3.4 says (with hide sets, as in
// Prosser's algorithm); evaluates #if and #elif with full integer constant
// expressions and defined; follows #ifdef, #ifndef, #else, #endif, #undef,
// #include "…" and <…> (against the including file's directory and the -I
// directories), #line, #error (an error) and #pragma (kept as one token,
// and #pragma once honoured). OpenCL C 1.2's predefined macros come from
// [OpenCL]; -D, -U and -I come from [ParseOptions].
//
// The output is a token list, not text: each token keeps the position it
// has in the user's files, through #include and #line, and a token that a
// macro expansion produced has the position of the macro's name at the use
// site. Errors are collected, never panics, whatever the input.
package cpp

import (
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Define is a macro definition or removal given from outside the source, as
// -D and -U give them.
type Define struct {
	Name  string
	Value string // the replacement list; "1" for a plain -D NAME
	Undef bool   // -U NAME: remove the definition
	// Extension marks an extension macro (cl_khr_fp16): the regions of
	// the source that a test of it keeps are listed in Result.Guards.
	Extension bool
}

// Guard is a region of a file that a conditional keeps because extension
// macros are defined: what lies there exists only on a device with those
// extensions.
type Guard struct {
	File     string // as positions name it
	From, To int    // the lines of the branch, its directives included
	// Needs lists what the region needs, each entry one extension or
	// alternatives joined by "|" ("cl_khr_fp64|cl_amd_fp64"), sorted.
	Needs []string
}

// Config is what the preprocessor needs besides the source.
type Config struct {
	// IncludeDirs are searched, in order, after the including file's own
	// directory for #include "…" and alone for #include <…>.
	IncludeDirs []string
	// Defines are applied in order before the source is read.
	Defines []Define
	// ReadFile reads an included file; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// MaxTokens bounds the work of one run beyond the main file's own
	// tokens: the tokens read from included files (each inclusion counted
	// again) plus the tokens that macro expansions produce. Past it the
	// preprocessor stops with an error at the macro use or #include that
	// crossed it. 0 means DefaultMaxTokens.
	MaxTokens int
}

// DefaultMaxTokens is the budget of a run when Config.MaxTokens is 0:
// about twice the tokens of a 5 MB source, some 500 MB and 2 s at most
// where a macro bomb (#define L1 L0 L0, … L60) would otherwise grow
// without bound.
const DefaultMaxTokens = 2 << 20

// Include is an #include that the preprocessor followed.
type Include struct {
	Pos      token.Position // the directive's '#', where the user sees it
	From     string         // the including file, as opened
	FromID   int            // the inclusion of From that holds the directive
	ID       int            // this inclusion's number; -1 when Repeated
	Line     int            // the directive's first physical line in From
	EndLine  int            // its last physical line (continuations)
	Name     string         // the file name as the directive spells it
	Path     string         // the included file, as opened
	Repeated bool           // skipped because of #pragma once
}

// Result is the output of Preprocess.
type Result struct {
	Tokens []Token
	// Files maps every file read, the main file included, to its text.
	Files map[string]string
	// Includes lists every #include followed, in the order they were met.
	Includes []Include
	// Inactive lists, by inclusion (0 is the main file, then each
	// Include.ID), the tokens that lie in #if branches not taken,
	// directives left out.
	Inactive map[int][]Span
	// Guards lists the regions kept by tests of extension macros, in the
	// order their branches ended.
	Guards []Guard
	// Defined lists every #define and #undef of the files read, in the
	// order met, branches not taken left out.
	Defined []MacroSite
	// Stopped reports that the budget ran out: the tokens end early.
	Stopped bool
	// Errors are the problems found, in the order they were found.
	Errors scanner.ErrorList
}

// MacroSite is a #define or #undef of a file.
type MacroSite struct {
	Name  string
	Pos   token.Position // the macro's name in the directive
	Undef bool
}

// Span is where a token is in its file: physical line, byte column and
// length in bytes.
type Span struct {
	Line, Col, Len int
}

// NeedsAt returns the extensions that the code at pos needs: the union of
// the needs of the guards around it, sorted.
func (r *Result) NeedsAt(pos token.Position) []string {
	var needs []string
	for _, g := range r.Guards {
		if g.File == pos.Filename && g.From <= pos.Line && pos.Line <= g.To {
			for _, n := range g.Needs {
				if !slices.Contains(needs, n) {
					needs = append(needs, n)
				}
			}
		}
	}
	slices.Sort(needs)
	return needs
}

// IncludedFrom returns the positions of the #include directives through
// which file was first reached, innermost first; none for the main file.
func (r *Result) IncludedFrom(file string) []token.Position {
	var chain []token.Position
	for depth := 0; depth < maxDepth; depth++ {
		found := false
		for _, in := range r.Includes {
			if in.Path == file {
				chain = append(chain, in.Pos)
				file, found = in.From, true
				break
			}
		}
		if !found {
			break
		}
	}
	return chain
}

const maxDepth = 200 // nesting of #include

type macro struct {
	name     string
	pos      token.Position // where #define names it; no Filename for a builtin or -D
	funcLike bool
	params   []string
	variadic bool
	body     []Token
	builtin  func(t Token) Token // __LINE__ and __FILE__
	// needs is what the macro's definition needs: the extension macro's
	// own name, or the needs of the guard it was defined in.
	needs []string
}

type cond struct {
	pos     token.Position
	needs   []string // what the active branch needs, the outer's included
	from    int      // the line of the active branch's directive
	tested  []string // the extensions the tests so far named
	active  bool     // the current branch is taken
	taken   bool     // some branch was taken
	sawElse bool
	outer   bool // the enclosing branch is active
}

// file is the state of a file being read.
type file struct {
	id    int    // the inclusion's number, 0 for the main file
	path  string // as opened
	name  string // as __FILE__ and positions name it (#line may change it)
	delta int    // added to physical lines (#line)
	conds []cond
}

// frame is a token list being read: a file, or a macro expansion.
type frame struct {
	toks []Token
	i    int
	file *file // nil for an expansion
}

type pp struct {
	cfg    *Config
	macros map[string]*macro
	res    *Result
	lexed  map[string][]Token
	once   map[string]bool
	depth  int
	files  int // inclusions so far
	// work counts the tokens read and produced so far, against budget;
	// stopped is set when it ran out, and then nothing more is read.
	work, budget int
	limit        int // the budget configured, for messages
	stopped      bool
	cycles       map[string]bool // #include cycles reported, by "from\x00to"
	hides        map[hideKey]*hideset
	unions       map[[2]*hideset]*hideset
}

// spend adds n tokens of work, reporting at pos, once, when the budget is
// spent: the work is the expansion of the macro named or, without one,
// the inclusion of path.
func (p *pp) spend(n int, pos token.Position, macro, path string) bool {
	if p.stopped {
		return false
	}
	p.work += n
	if p.work <= p.budget {
		return true
	}
	p.stopped, p.res.Stopped = true, true
	what := "including " + filepath.Base(path)
	if macro != "" {
		what = p.describe(macro)
	}
	p.errorf(pos, "%s exceeds the preprocessor's budget of %d tokens beyond the source's own: a macro or #include that multiplies without end? (preprocessing stopped here)", what, p.limit)
	return false
}

// Preprocess preprocesses src, the text of the file at path.
func Preprocess(cfg *Config, path string, src []byte) *Result {
	if cfg == nil {
		cfg = &Config{}
	}
	p := &pp{cfg: cfg, macros: map[string]*macro{}, lexed: map[string][]Token{}, once: map[string]bool{},
		cycles: map[string]bool{}, hides: map[hideKey]*hideset{}, unions: map[[2]*hideset]*hideset{},
		res: &Result{Files: map[string]string{}, Inactive: map[int][]Span{}}, budget: cfg.MaxTokens}
	if p.budget <= 0 {
		p.budget = DefaultMaxTokens
	}
	p.limit = p.budget
	p.builtins()
	for _, d := range cfg.Defines {
		p.define(d)
	}
	e := &expander{p: p, out: make([]Token, 0, len(src)/4)}
	toks, errs := lex(path, string(src))
	p.res.Errors = append(p.res.Errors, errs...)
	p.lexed[path], p.res.Files[path] = toks, string(src)
	p.budget += len(toks) // the main file's own tokens are not work to bound
	e.pushFile(path, string(src))
	e.run()
	return p.res
}

func (p *pp) builtins() {
	p.macros["__LINE__"] = &macro{name: "__LINE__", builtin: func(t Token) Token {
		return Token{Kind: Number, Text: fmt.Sprint(t.Pos.Line)}
	}}
	p.macros["__FILE__"] = &macro{name: "__FILE__", builtin: func(t Token) Token {
		return Token{Kind: String, Text: quote(t.Pos.Filename)}
	}}
}

// define applies a -D or -U.
func (p *pp) define(d Define) {
	if d.Undef {
		delete(p.macros, d.Name)
		return
	}
	name, params, hasParams := d.Name, "", false
	if i := strings.IndexByte(name, '('); i >= 0 {
		name, params, hasParams = name[:i], name[i:], true
	}
	text := "#define " + name + params + " " + d.Value + "\n"
	if !hasParams {
		text = "#define " + name + " " + d.Value + "\n"
	}
	toks, errs := lex("<command line>", text)
	p.res.Errors = append(p.res.Errors, errs...)
	if len(toks) > 2 {
		p.defineLine(toks[2], toks[3:], nil)
		if m := p.macros[name]; m != nil && d.Extension {
			m.needs = []string{name}
		}
	}
}

func (p *pp) errorf(pos token.Position, format string, args ...any) {
	p.res.Errors = append(p.res.Errors, &scanner.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// expander reads tokens from a stack of frames and expands macros.
type expander struct {
	p     *pp
	stack []*frame
	out   []Token
}

func (e *expander) pushFile(path, src string) {
	e.pushFileAt(path, src, token.Position{Filename: path})
}

// pushFileAt pushes a file that the directive at pos includes; the main
// file's pos is its own start.
func (e *expander) pushFileAt(path, src string, pos token.Position) bool {
	toks, ok := e.p.lexed[path]
	if !ok {
		var errs []*scanner.Error
		toks, errs = lex(path, src)
		e.p.res.Errors = append(e.p.res.Errors, errs...)
		e.p.lexed[path] = toks
		e.p.res.Files[path] = src
	}
	if !e.p.spend(len(toks), pos, "", path) {
		return false
	}
	e.stack = append(e.stack, &frame{toks: toks, file: &file{id: e.p.files, path: path, name: path}})
	e.p.files++
	e.p.depth++
	return true
}

// next returns the next token and the frame it came from, popping
// exhausted frames; ok is false at the end of everything.
func (e *expander) next() (t Token, f *frame, ok bool) {
	for len(e.stack) > 0 && !e.p.stopped {
		f = e.stack[len(e.stack)-1]
		if f.i < len(f.toks) {
			t = f.toks[f.i]
			f.i++
			if f.file != nil {
				t.Pos.Filename = f.file.name
				t.Pos.Line += f.file.delta
			}
			return t, f, true
		}
		if f.file != nil {
			e.endFile(f.file)
		}
		e.stack = e.stack[:len(e.stack)-1]
	}
	return Token{}, nil, false
}

func (e *expander) endFile(f *file) {
	for _, c := range f.conds {
		e.p.errorf(c.pos, "unterminated conditional directive")
	}
	e.p.depth--
}

func (f *file) skipping() bool { return len(f.conds) > 0 && !f.conds[len(f.conds)-1].active }

// run reads everything, processing directives and expanding macros into
// the result's tokens.
func (e *expander) run() {
	for {
		t, f, ok := e.next()
		if !ok {
			e.p.res.Tokens = e.out
			return
		}
		if f.file != nil && t.BOL && t.Kind == Punct && t.Text == "#" {
			e.directive(f, t)
			continue
		}
		if f.file != nil && f.file.skipping() {
			raw := f.toks[f.i-1]
			e.p.res.Inactive[f.file.id] = append(e.p.res.Inactive[f.file.id], Span{raw.Pos.Line, raw.Pos.Column, len(raw.Text)})
			continue
		}
		if t.Kind == Ident && e.expand(t) {
			continue
		}
		e.out = append(e.out, t)
	}
}

// expandAll expands toks completely, in isolation, as a macro argument is.
func (p *pp) expandAll(toks []Token) []Token {
	e := &expander{p: p, stack: []*frame{{toks: toks}}}
	for {
		t, _, ok := e.next()
		if !ok {
			return e.out
		}
		if t.Kind == Ident && e.expand(t) {
			continue
		}
		e.out = append(e.out, t)
	}
}

// peekParen reports whether the next token is '(' without consuming it.
// It does not look past the end of a file nor at a directive.
func (e *expander) peekParen() bool {
	for i := len(e.stack) - 1; i >= 0; i-- {
		f := e.stack[i]
		if f.i < len(f.toks) {
			t := f.toks[f.i]
			if f.file != nil && t.BOL && t.Text == "#" {
				return false
			}
			return t.Kind == Punct && t.Text == "("
		}
		if f.file != nil {
			return false
		}
	}
	return false
}

// expand expands the macro named by t, if there is one to expand there,
// pushing its expansion to be read next.
func (e *expander) expand(t Token) bool {
	m := e.p.macros[t.Text]
	if m == nil || t.hide.has(t.Text) {
		return false
	}
	origin := t.Macro
	if origin == "" {
		origin = m.name
	}
	if m.builtin != nil {
		r := m.builtin(t)
		r.Pos, r.Space, r.Macro, r.hide = t.Pos, t.Space, origin, t.hide
		e.stack = append(e.stack, &frame{toks: []Token{r}})
		return true
	}
	var body []Token
	hs := e.p.add(t.hide, m.name)
	if !m.funcLike {
		body = e.p.subst(m, nil, t)
	} else {
		if !e.peekParen() {
			return false
		}
		e.next() // (
		args, rparen, ok := e.readArgs(m, t)
		if !ok {
			return true
		}
		hs = e.p.add(t.hide.intersect(rparen.hide), m.name)
		body = e.p.subst(m, args, t)
	}
	if !e.p.spend(len(body), t.Pos, origin, "") {
		return true
	}
	for i := range body {
		body[i].hide = e.p.union(body[i].hide, hs)
		body[i].Pos, body[i].Macro, body[i].BOL = t.Pos, origin, false
	}
	if len(body) > 0 {
		body[0].Space = t.Space
	}
	e.stack = append(e.stack, &frame{toks: body})
	return true
}

// describe names the expansion of the macro name for a message, with
// where it is defined.
func (p *pp) describe(name string) string {
	m := p.macros[name]
	if m == nil || m.pos.Filename == "" || m.pos.Filename == "<command line>" {
		return "expanding macro " + m.name
	}
	return fmt.Sprintf("expanding macro %s (defined at %s:%d:%d)", m.name, filepath.Base(m.pos.Filename), m.pos.Line, m.pos.Column)
}

// readArgs reads the arguments of an invocation of m, after its '('.
func (e *expander) readArgs(m *macro, name Token) (args [][]Token, rparen Token, ok bool) {
	depth := 0
	var cur []Token
	for {
		t, f, more := e.next()
		if !more {
			e.p.errorf(name.Pos, "unterminated argument list invoking macro %s", m.name)
			return nil, t, false
		}
		if f.file != nil && t.BOL && t.Text == "#" {
			e.p.errorf(t.Pos, "directive inside the arguments of macro %s", m.name)
		}
		t.BOL = false
		if t.Kind == Punct {
			switch t.Text {
			case "(":
				depth++
			case ")":
				if depth == 0 {
					args = append(args, cur)
					return e.p.checkArgs(m, name, args), t, true
				}
				depth--
			case ",":
				if depth == 0 && !(m.variadic && len(args) == len(m.params)-1) {
					args = append(args, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, t)
	}
}

// checkArgs checks the number of arguments, reporting a mismatch, and
// returns one (possibly empty) argument per parameter.
func (p *pp) checkArgs(m *macro, name Token, args [][]Token) [][]Token {
	if len(m.params) == 0 && len(args) == 1 && len(args[0]) == 0 {
		return nil
	}
	n := len(m.params)
	switch {
	case m.variadic && len(args) == n-1:
		args = append(args, nil)
	case len(args) < n:
		p.errorf(name.Pos, "macro %s requires %d arguments, but only %d given", m.name, n, len(args))
	case len(args) > n:
		p.errorf(name.Pos, "macro %s passed %d arguments, but takes just %d", m.name, len(args), n)
	}
	for len(args) < n {
		args = append(args, nil)
	}
	return args[:n]
}

// ErrNotFound is wrapped by the error of an #include whose file is in
// none of the directories searched.
var ErrNotFound = errors.New("file not found")

func (p *pp) readFile(path string) ([]byte, error) {
	if p.cfg.ReadFile != nil {
		return p.cfg.ReadFile(path)
	}
	return os.ReadFile(path)
}

// resolve finds an included file; the source is its text.
func (p *pp) resolve(from, name string, angled bool) (string, string, error) {
	var dirs []string
	if !angled {
		dirs = append(dirs, filepath.Dir(from))
	}
	dirs = append(dirs, p.cfg.IncludeDirs...)
	if filepath.IsAbs(name) {
		dirs = []string{""}
	}
	for _, d := range dirs {
		path := filepath.Clean(filepath.Join(d, name))
		if src, ok := p.res.Files[path]; ok {
			return path, src, nil
		}
		b, err := p.readFile(path)
		if err == nil {
			return path, string(b), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// There, but not to be read (a FIFO, a file outside the
			// package): say so rather than look further.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is the name, said already
			}
			return "", "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return "", "", fmt.Errorf("%s: %w", name, ErrNotFound)
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
