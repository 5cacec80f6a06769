package cpp

import (
	"slices"
	"strings"
)

// hideset is the set of macro names a token may no longer be expanded by
// (C99 6.10.3.4p2). It is immutable; nil is the empty set.
type hideset struct{ names []string } // sorted

func (h *hideset) has(name string) bool {
	if h == nil {
		return false
	}
	_, ok := slices.BinarySearch(h.names, name)
	return ok
}

func (h *hideset) add(name string) *hideset {
	if h.has(name) {
		return h
	}
	var names []string
	if h != nil {
		names = append(names, h.names...)
	}
	i, _ := slices.BinarySearch(names, name)
	return &hideset{names: slices.Insert(names, i, name)}
}

// hideKey is a hide set and a name added to it, the key of the
// preprocessor's table of hide sets: a chain of macros expanded a million
// times makes the same few sets, which are shared rather than copied.
type hideKey struct {
	h    *hideset
	name string
}

// add returns h with name added, shared with earlier calls.
func (p *pp) add(h *hideset, name string) *hideset {
	if h.has(name) {
		return h
	}
	k := hideKey{h, name}
	if r, ok := p.hides[k]; ok {
		return r
	}
	r := h.add(name)
	p.hides[k] = r
	return r
}

// union returns the union of h and o, shared with earlier calls.
func (p *pp) union(h, o *hideset) *hideset {
	switch {
	case o == nil || h == o:
		return h
	case h == nil:
		return o
	}
	k := [2]*hideset{h, o}
	if r, ok := p.unions[k]; ok {
		return r
	}
	r := h
	for _, n := range o.names {
		r = p.add(r, n)
	}
	p.unions[k] = r
	return r
}

func (h *hideset) intersect(o *hideset) *hideset {
	if h == nil || o == nil {
		return nil
	}
	var names []string
	for _, n := range h.names {
		if o.has(n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &hideset{names: names}
}

// defineLine defines the macro of a #define line: name is the macro's
// name token, rest the tokens after it.
func (p *pp) defineLine(name Token, rest []Token, needs []string) {
	if name.Kind != Ident {
		p.errorf(name.Pos, "macro name must be an identifier")
		return
	}
	if name.Text == "defined" {
		p.errorf(name.Pos, `"defined" cannot be used as a macro name`)
		return
	}
	m := &macro{name: name.Text, pos: name.Pos}
	if len(rest) > 0 && rest[0].Text == "(" && !rest[0].Space {
		var ok bool
		rest, ok = p.macroParams(m, rest[1:], name)
		if !ok {
			return
		}
	}
	body := slices.Clone(rest)
	if len(body) > 0 {
		body[0].Space = false
	}
	for i := range body {
		body[i].BOL = false
	}
	if !p.checkBody(m, body) {
		return
	}
	m.body, m.needs = body, needs
	p.macros[m.name] = m
}

// macroParams reads a function-like macro's parameter list, after its '(',
// and returns the tokens after the ')'.
func (p *pp) macroParams(m *macro, toks []Token, name Token) ([]Token, bool) {
	m.funcLike = true
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Text == ")" && len(m.params) == 0:
			return toks[i+1:], true
		case t.Text == "...":
			m.variadic = true
			m.params = append(m.params, "__VA_ARGS__")
		case t.Kind == Ident && i+1 < len(toks) && toks[i+1].Text == "...":
			m.variadic = true
			m.params = append(m.params, t.Text)
			i++
		case t.Kind == Ident && !slices.Contains(m.params, t.Text):
			m.params = append(m.params, t.Text)
		default:
			p.errorf(t.Pos, "invalid parameter list of macro %s", name.Text)
			return nil, false
		}
		if i+1 >= len(toks) {
			break
		}
		i++
		switch {
		case toks[i].Text == ")":
			return toks[i+1:], true
		case toks[i].Text == "," && !m.variadic:
		default:
			p.errorf(toks[i].Pos, "invalid parameter list of macro %s", name.Text)
			return nil, false
		}
	}
	p.errorf(name.Pos, "missing ')' in the parameter list of macro %s", name.Text)
	return nil, false
}

// checkBody checks the constraints of C99 6.10.3.2 and 6.10.3.3.
func (p *pp) checkBody(m *macro, body []Token) bool {
	for i, t := range body {
		if t.Kind != Punct {
			continue
		}
		if t.Text == "##" && (i == 0 || i == len(body)-1) {
			p.errorf(t.Pos, "'##' cannot be at either end of a macro's replacement list")
			return false
		}
		if t.Text == "#" && m.funcLike && (i+1 >= len(body) || m.param(body[i+1].Text) < 0) {
			p.errorf(t.Pos, "'#' is not followed by a macro parameter")
			return false
		}
	}
	return true
}

func (m *macro) param(name string) int {
	if !m.funcLike {
		return -1
	}
	return slices.Index(m.params, name)
}

// subst returns m's replacement list with its parameters replaced by the
// arguments (C99 6.10.3.1 to 6.10.3.3), before rescanning.
func (p *pp) subst(m *macro, args [][]Token, use Token) []Token {
	var out []Token
	expanded := make([][]Token, len(args))
	done := make([]bool, len(args))
	lastEmpty := false // the last item placed was an empty argument
	body := m.body
	for i := 0; i < len(body); i++ {
		b := body[i]
		if b.Kind == Punct && b.Text == "#" && m.funcLike {
			i++
			s := stringize(args[m.param(body[i].Text)])
			s.Space, s.Pos = b.Space, use.Pos
			out, lastEmpty = append(out, s), false
			continue
		}
		if b.Kind == Punct && b.Text == "##" {
			i++
			out, lastEmpty = p.pasteNext(m, args, out, body[i], lastEmpty, use)
			continue
		}
		k := m.param(b.Text)
		if k < 0 {
			out, lastEmpty = append(out, b), false
			continue
		}
		arg := args[k]
		if i+1 >= len(body) || body[i+1].Text != "##" {
			if !done[k] {
				expanded[k], done[k] = p.expandAll(arg), true
			}
			arg = expanded[k]
		}
		start := len(out)
		out = append(out, arg...)
		if len(out) > start {
			out[start].Space = b.Space
		}
		lastEmpty = len(arg) == 0
	}
	return out
}

// pasteNext handles "## rhs": the last token of out is pasted with the
// first of rhs (an argument, unexpanded, or a token of the body).
func (p *pp) pasteNext(m *macro, args [][]Token, out []Token, rhs Token, lastEmpty bool, use Token) ([]Token, bool) {
	rs := []Token{rhs}
	if k := m.param(rhs.Text); k >= 0 {
		rs = args[k]
		// GNU: ", ## __VA_ARGS__" drops the comma when there are no
		// variable arguments.
		if m.variadic && k == len(m.params)-1 && len(out) > 0 && out[len(out)-1].Text == "," && !lastEmpty {
			if len(rs) == 0 {
				return out[:len(out)-1], false
			}
			return append(out, rs...), false
		}
	}
	if len(rs) == 0 {
		return out, lastEmpty
	}
	if lastEmpty || len(out) == 0 {
		return append(out, rs...), false
	}
	l := out[len(out)-1]
	pasted, ok := paste(l, rs[0])
	if !ok {
		p.errorf(use.Pos, "pasting %q and %q does not give a valid preprocessing token", l.Text, rs[0].Text)
		return append(out, rs...), false
	}
	out[len(out)-1] = pasted
	return append(out, rs[1:]...), false
}

// paste joins two tokens into one, as ## does.
func paste(l, r Token) (Token, bool) {
	text := l.Text + r.Text
	toks, errs := lex("", text)
	if len(toks) != 1 || len(errs) > 0 || toks[0].Text != text {
		return l, false
	}
	t := l
	t.Kind, t.Text = toks[0].Kind, text
	return t, true
}

// stringize spells an argument as a string literal (C99 6.10.3.2).
func stringize(arg []Token) Token {
	var b strings.Builder
	for i, t := range arg {
		if i > 0 && t.Space {
			b.WriteByte(' ')
		}
		if t.Kind == String || t.Kind == Char {
			b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(t.Text))
			continue
		}
		b.WriteString(t.Text)
	}
	return Token{Kind: String, Text: `"` + b.String() + `"`}
}
