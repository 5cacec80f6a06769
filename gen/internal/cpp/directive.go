package cpp

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// line returns the rest of the logical line in f.
func (f *frame) line() []Token {
	start := f.i
	for f.i < len(f.toks) && !f.toks[f.i].BOL {
		f.i++
	}
	toks := make([]Token, f.i-start)
	for i, t := range f.toks[start:f.i] {
		t.Pos.Filename = f.file.name
		t.Pos.Line += f.file.delta
		toks[i] = t
	}
	return toks
}

// directive processes the directive whose '#' is hash, read from f.
func (e *expander) directive(f *frame, hash Token) {
	physLine := f.toks[f.i-1].Pos.Line
	toks := f.line()
	fl := f.file
	if len(toks) == 0 {
		return // the null directive
	}
	name := toks[0].Text
	args := toks[1:]
	if e.conditional(fl, name, toks[0], args) {
		return
	}
	if fl.skipping() {
		return
	}
	p := e.p
	switch name {
	case "define":
		if len(args) == 0 {
			p.errorf(toks[0].Pos, "macro name missing")
			return
		}
		p.res.Defined = append(p.res.Defined, MacroSite{Name: args[0].Text, Pos: args[0].Pos})
		p.defineLine(args[0], args[1:], fl.needs())
	case "undef":
		if len(args) == 0 || args[0].Kind != Ident {
			p.errorf(toks[0].Pos, "macro name missing")
			return
		}
		p.res.Defined = append(p.res.Defined, MacroSite{Name: args[0].Text, Pos: args[0].Pos, Undef: true})
		delete(p.macros, args[0].Text)
	case "include":
		e.include(f, hash, physLine, args)
	case "line":
		e.lineDirective(f, physLine, hash, args)
	case "error":
		p.errorf(hash.Pos, "#error %s", spell(args))
	case "warning", "ident", "sccs":
	case "pragma":
		if len(args) == 1 && args[0].Text == "once" {
			p.once[fl.path] = true
		}
		e.out = append(e.out, Token{Kind: Pragma, Text: "#pragma " + spell(args), Pos: hash.Pos, BOL: true})
	default:
		p.errorf(toks[0].Pos, "invalid preprocessing directive #%s", name)
	}
}

// conditional processes #if, #ifdef, #ifndef, #elif, #else and #endif,
// reporting whether name was one of them.
func (e *expander) conditional(fl *file, name string, at Token, args []Token) bool {
	p := e.p
	switch name {
	case "if", "ifdef", "ifndef":
		outer := !fl.skipping()
		c := cond{pos: at.Pos, outer: outer}
		if outer {
			c.active = e.test(name, at, args)
			c.taken = c.active
			if c.active {
				c.needs, c.from = p.testNeeds(fl.needs(), args), at.Pos.Line
			}
			c.tested = p.testNeeds(nil, args)
		}
		fl.conds = append(fl.conds, c)
	case "elif", "else":
		if len(fl.conds) == 0 {
			p.errorf(at.Pos, "#%s without #if", name)
			return true
		}
		c := &fl.conds[len(fl.conds)-1]
		if c.sawElse {
			p.errorf(at.Pos, "#%s after #else", name)
		}
		p.endBranch(fl, c, at.Pos.Line)
		c.sawElse = c.sawElse || name == "else"
		switch {
		case !c.outer || c.taken:
			c.active = false
		case name == "else":
			// Taken because the tests before failed: where one of them
			// named an extension (#ifndef cl_khr_fp16), so does this.
			c.active = true
			c.needs, c.from = union(fl.outerNeeds(), c.tested), at.Pos.Line
		default:
			c.active = e.test("if", at, args)
			if c.active {
				c.needs, c.from = p.testNeeds(union(fl.outerNeeds(), c.tested), args), at.Pos.Line
			}
			c.tested = union(c.tested, p.testNeeds(nil, args))
		}
		c.taken = c.taken || c.active
	case "endif":
		if len(fl.conds) == 0 {
			p.errorf(at.Pos, "#endif without #if")
			return true
		}
		p.endBranch(fl, &fl.conds[len(fl.conds)-1], at.Pos.Line)
		fl.conds = fl.conds[:len(fl.conds)-1]
	default:
		return false
	}
	return true
}

// union returns the sorted union of two sorted sets.
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// needs returns what the code at the current point of f needs.
func (f *file) needs() []string {
	if len(f.conds) == 0 {
		return nil
	}
	return f.conds[len(f.conds)-1].needs
}

// outerNeeds returns what the code around the innermost conditional of f
// needs.
func (f *file) outerNeeds() []string {
	if len(f.conds) < 2 {
		return nil
	}
	return f.conds[len(f.conds)-2].needs
}

// endBranch records the guard of c's branch, ending at line, when it was
// active and needs extensions beyond what surrounds it.
func (p *pp) endBranch(f *file, c *cond, line int) {
	if c.active && len(c.needs) > 0 {
		p.res.Guards = append(p.res.Guards, Guard{File: f.name, From: c.from, To: line, Needs: c.needs})
	}
}

// testNeeds returns outer with what the test of a conditional, args, makes
// its branch need: the extension macros it names, directly or through
// macros defined under such a test. A test with || makes them
// alternatives; otherwise each is needed.
func (p *pp) testNeeds(outer []string, args []Token) []string {
	var names, others []string
	or := false
	for _, t := range args {
		if t.Kind == Punct && t.Text == "||" {
			or = true
		}
		if t.Kind == Ident && p.macros[t.Text] == nil && strings.HasPrefix(t.Text, "cl_") && !slices.Contains(others, t.Text) {
			others = append(others, t.Text) // an extension this compiler does not define
		}
		if m := p.macros[t.Text]; t.Kind == Ident && m != nil {
			for _, n := range m.needs {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	if len(names) == 0 {
		return outer
	}
	if or {
		// Any of them: those this compiler does not define too, since a
		// device may have one of those instead.
		names = append(names, others...)
		slices.Sort(names)
		names = []string{strings.Join(names, "|")}
	}
	needs := slices.Clone(outer)
	for _, n := range names {
		if !slices.Contains(needs, n) {
			needs = append(needs, n)
		}
	}
	slices.Sort(needs)
	return needs
}

// test evaluates the condition of an #if, #ifdef or #ifndef.
func (e *expander) test(name string, at Token, args []Token) bool {
	if name == "if" {
		return e.p.evalIf(at, args)
	}
	if len(args) == 0 || args[0].Kind != Ident {
		e.p.errorf(at.Pos, "#%s needs a macro name", name)
		return false
	}
	_, def := e.p.macros[args[0].Text]
	return def == (name == "ifdef")
}

// include follows an #include.
func (e *expander) include(f *frame, hash Token, physLine int, args []Token) {
	p := e.p
	if len(args) > 0 && args[0].Kind == Ident {
		args = p.expandAll(args)
	}
	name, angled, ok := includeName(args)
	if !ok {
		p.errorf(hash.Pos, "#include expects \"FILENAME\" or <FILENAME>")
		return
	}
	in := Include{Pos: hash.Pos, From: f.file.path, FromID: f.file.id, ID: -1, Line: physLine, EndLine: physLine, Name: name}
	if f.i > 0 {
		in.EndLine = f.toks[f.i-1].Pos.Line
	}
	path, src, err := p.resolve(f.file.path, name, angled)
	if err != nil {
		p.errorf(hash.Pos, "#include: %v", err)
		return
	}
	in.Path = path
	if cycle := e.openFiles(path); cycle != nil {
		key := f.file.path + "\x00" + path
		if p.cycles[key] {
			return
		}
		p.cycles[key] = true
		p.errorf(hash.Pos, "#include cycle: %s includes %s, which is being read (%s): dgen follows no recursive #include", filepath.Base(f.file.path), filepath.Base(path), strings.Join(cycle, " → "))
		return
	}
	if p.once[path] {
		in.Repeated = true
		p.res.Includes = append(p.res.Includes, in)
		return
	}
	if p.depth >= maxDepth {
		p.errorf(hash.Pos, "#include nested more than %d deep", maxDepth)
		return
	}
	in.ID = p.files
	p.res.Includes = append(p.res.Includes, in)
	e.pushFileAt(path, src, hash.Pos)
}

// openFiles returns the chain of files being read from the first
// inclusion of path to the innermost, base names, or nil when path is not
// being read.
func (e *expander) openFiles(path string) []string {
	var chain []string
	for _, f := range e.stack {
		if f.file == nil {
			continue
		}
		if f.file.path == path || chain != nil {
			chain = append(chain, filepath.Base(f.file.path))
		}
	}
	if chain != nil {
		chain = append(chain, filepath.Base(path))
	}
	return chain
}

// includeName returns the file name of an #include's operand.
func includeName(args []Token) (name string, angled, ok bool) {
	if len(args) == 0 {
		return "", false, false
	}
	if t := args[0].Text; args[0].Kind == String && len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' {
		return args[0].Text[1 : len(args[0].Text)-1], false, true
	}
	if args[0].Text != "<" {
		return "", false, false
	}
	var b strings.Builder
	for i, t := range args[1:] {
		if t.Text == ">" {
			return b.String(), true, true
		}
		if i > 0 && t.Space {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return "", false, false
}

// lineDirective processes #line N ["name"].
func (e *expander) lineDirective(f *frame, physLine int, hash Token, args []Token) {
	args = e.p.expandAll(args)
	if len(args) == 0 || args[0].Kind != Number {
		e.p.errorf(hash.Pos, "#line expects a line number")
		return
	}
	n, err := strconv.ParseUint(args[0].Text, 10, 31)
	if err != nil {
		e.p.errorf(args[0].Pos, "#line: bad line number %s", args[0].Text)
		return
	}
	// The line after the directive is line n.
	next := physLine + 1
	if f.i > 0 {
		next = f.toks[f.i-1].Pos.Line + 1
	}
	f.file.delta = int(n) - next
	if len(args) > 1 && args[1].Kind == String {
		if s, err := strconv.Unquote(args[1].Text); err == nil {
			f.file.name = s
		}
	}
}

// spell returns tokens as text, one space where the source had space.
func spell(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && t.Space {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}
