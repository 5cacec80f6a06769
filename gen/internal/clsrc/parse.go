package clsrc

import (
	"strings"
)

// AddrSpace is an OpenCL C address space qualifier.
type AddrSpace int

// The address spaces. AddrNone means no qualifier was written, which for a
// kernel's pointer parameter means private.
const (
	AddrNone AddrSpace = iota
	AddrPrivate
	AddrGlobal
	AddrConstant
	AddrLocal
)

// String returns the qualifier's canonical spelling ("__global"), or ""
// for AddrNone.
func (a AddrSpace) String() string {
	switch a {
	case AddrPrivate:
		return "__private"
	case AddrGlobal:
		return "__global"
	case AddrConstant:
		return "__constant"
	case AddrLocal:
		return "__local"
	}
	return ""
}

var addrSpaces = map[string]AddrSpace{
	"__global": AddrGlobal, "global": AddrGlobal,
	"__constant": AddrConstant, "constant": AddrConstant,
	"__local": AddrLocal, "local": AddrLocal,
	"__private": AddrPrivate, "private": AddrPrivate,
}

// qualifiers are words that may precede or follow a type without naming it.
var qualifiers = map[string]bool{
	"const": true, "volatile": true, "restrict": true, "__restrict": true, "__restrict__": true,
	"static": true, "inline": true, "__inline": true, "extern": true, "register": true,
	"__read_only": true, "read_only": true, "__write_only": true, "write_only": true,
	"__read_write": true, "read_write": true,
}

// typeWords are the builtin type names that are not in the size table.
var typeWords = map[string]bool{
	"void": true, "bool": true, "size_t": true, "ptrdiff_t": true, "intptr_t": true,
	"uintptr_t": true, "unsigned": true, "signed": true, "image1d_t": true, "image2d_t": true,
	"image3d_t": true, "image1d_array_t": true, "image1d_buffer_t": true, "image2d_array_t": true,
	"sampler_t": true, "event_t": true,
}

// notCalls are words that may be followed by '(' without being calls.
var notCalls = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"__attribute__": true, "__attribute": true, "vec_step": true, "do": true, "else": true,
	"case": true, "goto": true,
}

// Param is a parameter of a function, as the rewriting needs it.
type Param struct {
	Name string // the parameter's name; "" when unnamed
	Pos  Pos    // position of the name, or of the first token when unnamed
	Text string // the parameter's source text with spaces normalised
}

// Call is a call, or a function-like macro invocation, in a body.
type Call struct {
	Name   string // the callee's name
	Pos    Pos    // the position of the name
	LParen int    // offset of the '('
	RParen int    // offset of the matching ')'
	NoArgs bool   // nothing but space and comments between the parentheses
}

// Use is a use of an identifier in a body.
type Use struct {
	Name string
	Pos  Pos
	End  int // offset just past the identifier
}

// Function is a function definition or prototype.
type Function struct {
	Name   string  // the function's name
	Pos    Pos     // the position of the name
	Kernel bool    // marked __kernel or kernel
	Return string  // the return type, spaces normalised, qualifiers kept
	Params []Param // the parameters; empty for (void) and ()
	// HasBody is false for a prototype (a declaration ending in ';').
	HasBody bool
	// LParen and RParen are the offsets of the parameter list's parentheses;
	// VoidParam is the offset of the 'void' in a (void) list, or -1.
	LParen, RParen, VoidParam int
	// BodyStart and BodyEnd are the offsets of the body's braces (-1
	// without body).
	BodyStart, BodyEnd int
	// Calls lists the calls in the body, in source order.
	Calls []Call

	file       *File
	tokLo      int // body token range (exclusive of braces)
	tokHi      int
	paramNames []string
}

// Macro is a #define.
type Macro struct {
	Name     string   // the macro's name
	Pos      Pos      // position of the name
	FuncLike bool     // a function-like macro
	Params   []string // the parameter names of a function-like macro
	Calls    []Call   // calls in the body
	body     []Token
}

// File is a parsed OpenCL C source file.
type File struct {
	Src       []byte
	Tokens    []Token     // all tokens but comments
	Functions []*Function // definitions and prototypes, in source order
	Macros    []*Macro    // #define directives, in source order
	Typedefs  []string    // typedef names, in source order

	li       lineIndex
	str      string // Src as a string, which token texts are slices of
	match    []int  // index of the matching bracket token, or -1
	typedefs map[string]bool
}

// Parse tokenizes and parses src. Lexical errors and unbalanced brackets
// are returned as an ErrorList; the File is returned only without errors.
func Parse(src []byte) (*File, error) {
	s := &srcScanner{src: src, str: string(src), li: newLineIndex(src), noComments: true}
	f := &File{Src: src, str: s.str, li: s.li, typedefs: map[string]bool{}, Tokens: s.scan(0, len(src), true)}
	errs := s.errs
	f.match, errs = matchBrackets(f.Tokens, errs)
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	f.parseTop()
	for _, m := range f.Macros {
		m.Calls = calls(m.body, 0, len(m.body), nil)
	}
	return f, nil
}

func sortErrors(errs ErrorList) {
	// Insertion sort keeps it stable and the lists are short.
	for i := 1; i < len(errs); i++ {
		for j := i; j > 0 && errs[j].Pos.Offset < errs[j-1].Pos.Offset; j-- {
			errs[j], errs[j-1] = errs[j-1], errs[j]
		}
	}
}

var closer = map[string]string{"(": ")", "[": "]", "{": "}"}

func matchBrackets(toks []Token, errs ErrorList) ([]int, ErrorList) {
	match := make([]int, len(toks))
	var stack []int
	for i, t := range toks {
		match[i] = -1
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			stack = append(stack, i)
		case ")", "]", "}":
			if len(stack) == 0 {
				errs = append(errs, &Error{Pos: t.Pos, Msg: "unbalanced " + t.Text})
				continue
			}
			o := stack[len(stack)-1]
			if closer[toks[o].Text] != t.Text {
				k := len(stack) - 1
				for k >= 0 && closer[toks[stack[k]].Text] != t.Text {
					k--
				}
				if k < 0 {
					errs = append(errs, &Error{Pos: t.Pos, Msg: "unexpected " + t.Text + ", want " +
						closer[toks[o].Text] + " to close " + toks[o].Text + " at " + toks[o].Pos.String()})
					continue
				}
				// The closer matches an outer opener: the openers above it
				// were never closed.
				for _, u := range stack[k+1:] {
					errs = append(errs, &Error{Pos: toks[u].Pos, Msg: "unclosed " + toks[u].Text})
				}
				stack = stack[:k+1]
				o = stack[k]
			}
			stack = stack[:len(stack)-1]
			match[o], match[i] = i, o
		}
	}
	for _, o := range stack {
		errs = append(errs, &Error{Pos: toks[o].Pos, Msg: "unclosed " + toks[o].Text})
	}
	return match, errs
}

func (f *File) is(i int, text string) bool {
	return i >= 0 && i < len(f.Tokens) && f.Tokens[i].Text == text && f.Tokens[i].Kind != String && f.Tokens[i].Kind != Char
}

// parseTop walks the file-scope declarations.
func (f *File) parseTop() {
	toks := f.Tokens
	start := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind == Preproc {
			f.parseDirective(t)
			start = i + 1
			continue
		}
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case ";":
			f.declaration(start, i, -1)
			start = i + 1
		case "{":
			if name := f.funcName(start, i); name >= 0 {
				f.declaration(start, i, i)
				i = f.match[i]
				start = i + 1
				continue
			}
			// A struct, union or enum body, or an initializer: skip it;
			// the declaration goes on to the ';'.
			i = f.match[i]
		case "(", "[":
			i = f.match[i]
		}
	}
}

// funcName returns the index of the name token of the function declared
// by toks[lo:hi], or -1. The name is the identifier before the first
// parenthesised group that is not an attribute's.
func (f *File) funcName(lo, hi int) int {
	toks := f.Tokens
	for i := lo; i < hi; i++ {
		if !f.is(i, "(") {
			continue
		}
		rp := f.match[i]
		if i > lo && toks[i-1].Kind == Ident && !notCalls[toks[i-1].Text] && rp < hi {
			// Only attributes may follow the parameter list.
			k := rp + 1
			for k+1 < hi && (f.is(k, "__attribute__") || f.is(k, "__attribute")) && f.is(k+1, "(") {
				k = f.match[k+1] + 1
			}
			if k == hi {
				return i - 1
			}
		}
		i = rp
	}
	return -1
}

// declaration records the file-scope declaration toks[lo:hi]; body is
// the index of the body's '{', or -1.
func (f *File) declaration(lo, hi, body int) {
	toks := f.Tokens
	if lo >= hi {
		return
	}
	if toks[lo].Text == "typedef" {
		// The name is the last identifier outside brackets.
		for i := lo + 1; i < hi; i++ {
			switch {
			case f.is(i, "(") || f.is(i, "[") || f.is(i, "{"):
				i = f.match[i]
			case toks[i].Kind == Ident && !qualifiers[toks[i].Text]:
				if i == hi-1 || f.is(i+1, "[") || f.is(i+1, ",") || f.is(i+1, ";") {
					if !f.typedefs[toks[i].Text] {
						f.typedefs[toks[i].Text] = true
						f.Typedefs = append(f.Typedefs, toks[i].Text)
					}
				}
			}
		}
		return
	}
	ni := f.funcName(lo, hi)
	if ni < 0 {
		return
	}
	lp := ni + 1
	rp := f.match[lp]
	fn := &Function{
		Name: toks[ni].Text, Pos: toks[ni].Pos, file: f,
		LParen: toks[lp].Pos.Offset, RParen: toks[rp].Pos.Offset, VoidParam: -1,
		BodyStart: -1, BodyEnd: -1,
	}
	// Return type: the words before the name, minus kernel markers and
	// attributes.
	var ret []string
	for i := lo; i < ni; i++ {
		w := toks[i].Text
		switch {
		case w == "__kernel" || w == "kernel":
			fn.Kernel = true
		case (w == "__attribute__" || w == "__attribute") && f.is(i+1, "("):
			i = f.match[i+1]
		default:
			ret = append(ret, w)
		}
	}
	fn.Return = joinTokens(ret)
	fn.Params = f.params(lp, rp, fn)
	if body >= 0 {
		fn.HasBody = true
		end := f.match[body]
		fn.BodyStart, fn.BodyEnd = toks[body].Pos.Offset, toks[end].Pos.Offset
		fn.tokLo, fn.tokHi = body+1, end
		fn.Calls = calls(toks, body+1, end, f.match)
	}
	for _, p := range fn.Params {
		if p.Name != "" {
			fn.paramNames = append(fn.paramNames, p.Name)
		}
	}
	f.Functions = append(f.Functions, fn)
}

// joinTokens joins words with single spaces, gluing '*' to its left.
func joinTokens(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 && w != "*" && w != "[" && w != "]" && words[i-1] != "[" {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	return b.String()
}

// params parses the parameter list between toks[lp] and toks[rp].
func (f *File) params(lp, rp int, fn *Function) []Param {
	toks := f.Tokens
	if rp == lp+1 {
		return nil
	}
	if rp == lp+2 && toks[lp+1].Text == "void" {
		fn.VoidParam = toks[lp+1].Pos.Offset
		return nil
	}
	var ps []Param
	start := lp + 1
	for i := lp + 1; i <= rp; i++ {
		if f.is(i, "(") || f.is(i, "[") || f.is(i, "{") {
			if i < rp {
				i = f.match[i]
			}
			continue
		}
		if i == rp || f.is(i, ",") {
			ps = append(ps, f.param(start, i))
			start = i + 1
		}
	}
	return ps
}

// canonical spellings of multi-word builtin types.
var multiWord = map[string]string{
	"unsigned char": "uchar", "unsigned short": "ushort", "unsigned int": "uint",
	"unsigned long": "ulong", "unsigned": "uint", "signed char": "char", "signed short": "short",
	"signed int": "int", "signed long": "long", "signed": "int", "short int": "short",
	"long int": "long", "unsigned short int": "ushort", "unsigned long int": "ulong",
	"signed short int": "short", "signed long int": "long",
}

func (f *File) param(lo, hi int) Param {
	toks := f.Tokens
	p := Param{}
	if lo < len(toks) {
		p.Pos = toks[lo].Pos
	}
	var words []string
	typeSeen := false
	for i := lo; i < hi; i++ {
		t := toks[i]
		words = append(words, t.Text)
		switch {
		case t.Text == "[":
			words = append(words, strings.Fields(string(f.Src[t.End:toks[f.match[i]].Pos.Offset]))...)
			words = append(words, "]")
			i = f.match[i]
		case t.Kind != Ident || qualifiers[t.Text] || addrSpaces[t.Text] != AddrNone:
		case t.Text == "struct" || t.Text == "union" || t.Text == "enum":
			if i+1 < hi && toks[i+1].Kind == Ident {
				words = append(words, toks[i+1].Text)
				i++
			}
			typeSeen = true
		case !typeSeen:
			typeSeen = true // the first word names the type: a builtin or a typedef
		case isTypeWord(t.Text) && p.Name == "":
			// "unsigned int": more of the type
		default:
			p.Name, p.Pos = t.Text, t.Pos
		}
	}
	p.Text = joinTokens(words)
	return p
}

func isTypeWord(w string) bool {
	if typeWords[w] {
		return true
	}
	switch w {
	case "char", "short", "int", "long", "float", "double", "half":
		return true
	}
	_, ok := LookupType(w)
	return ok
}

func canonicalType(words []string) string {
	s := strings.Join(words, " ")
	if c, ok := multiWord[s]; ok {
		return c
	}
	return s
}

// calls finds the calls in toks[lo:hi]. match may be nil, in which case
// brackets are matched locally.
func calls(toks []Token, lo, hi int, match []int) []Call {
	if match == nil {
		match, _ = matchBrackets(toks, nil)
	}
	var cs []Call
	for i := lo; i+1 < hi; i++ {
		t := toks[i]
		if t.Kind != Ident || notCalls[t.Text] || toks[i+1].Text != "(" || toks[i+1].Kind != Punct {
			continue
		}
		if isTypeWord(t.Text) {
			continue // a constructor-like cast such as (float4)(...) has no name before '('
		}
		if i > lo && (toks[i-1].Text == "." || toks[i-1].Text == "->") {
			continue
		}
		rp := match[i+1]
		if rp < 0 {
			continue
		}
		cs = append(cs, Call{Name: t.Text, Pos: t.Pos, LParen: toks[i+1].Pos.Offset,
			RParen: toks[rp].Pos.Offset, NoArgs: rp == i+2})
	}
	return cs
}

// parseDirective records a #define.
func (f *File) parseDirective(t Token) {
	s := &srcScanner{src: f.Src, str: f.str, li: f.li}
	sub := s.scan(t.Pos.Offset+1, t.End, false)
	var toks []Token
	for _, st := range sub {
		if st.Kind != Comment {
			toks = append(toks, st)
		}
	}
	if len(toks) < 2 || toks[0].Text != "define" || toks[1].Kind != Ident {
		return
	}
	m := &Macro{Name: toks[1].Text, Pos: toks[1].Pos}
	rest := toks[2:]
	if len(rest) > 0 && rest[0].Text == "(" && rest[0].Pos.Offset == toks[1].End {
		m.FuncLike = true
		m.Params = []string{}
		j := 1
		for ; j < len(rest) && rest[j].Text != ")"; j++ {
			if rest[j].Kind == Ident || rest[j].Text == "..." {
				name := rest[j].Text
				if name == "..." {
					name = "__VA_ARGS__"
				}
				m.Params = append(m.Params, name)
			}
		}
		if j < len(rest) {
			j++
		}
		rest = rest[j:]
	}
	m.body = rest
	f.Macros = append(f.Macros, m)
}

// Function returns the definition of the named function, or its first
// prototype when there is no definition, or nil.
func (f *File) Function(name string) *Function {
	var proto *Function
	for _, fn := range f.Functions {
		if fn.Name == name {
			if fn.HasBody {
				return fn
			}
			if proto == nil {
				proto = fn
			}
		}
	}
	return proto
}

// Kernels returns the kernel definitions in source order.
func (f *File) Kernels() []*Function {
	var ks []*Function
	for _, fn := range f.Functions {
		if fn.Kernel && fn.HasBody {
			ks = append(ks, fn)
		}
	}
	return ks
}

// Macro returns the last #define of the named macro, or nil.
func (f *File) Macro(name string) *Macro {
	for i := len(f.Macros) - 1; i >= 0; i-- {
		if f.Macros[i].Name == name {
			return f.Macros[i]
		}
	}
	return nil
}

// Uses returns the uses, in the macro's body, of the given names; a
// macro parameter of the same name shadows a name.
func (m *Macro) Uses(names ...string) []Use {
	want := nameSet(names)
	var us []Use
	for i, t := range m.body {
		if t.Kind != Ident || !want[t.Text] || contains(m.Params, t.Text) {
			continue
		}
		if i > 0 && isMemberOrTag(m.body[i-1].Text) {
			continue
		}
		us = append(us, Use{Name: t.Text, Pos: t.Pos, End: t.End})
	}
	return us
}

// idents returns every identifier in the macro body that is not a parameter.
func (m *Macro) idents() []string {
	var ids []string
	for _, t := range m.body {
		if t.Kind == Ident && !contains(m.Params, t.Text) {
			ids = append(ids, t.Text)
		}
	}
	return ids
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func nameSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

type scope struct {
	end   int // token index of the scope's last token
	names map[string]bool
}

// Uses returns the uses, in the function's body, of the given names that
// refer to file-scope entities: an identifier declared as a parameter or
// as a local variable (in a simple declaration whose type is a builtin
// type, struct/union/enum, or a typedef of the file) shadows a name within
// its scope. Member names after '.' and '->' are not uses.
func (fn *Function) Uses(names ...string) []Use {
	if !fn.HasBody {
		return nil
	}
	return fn.file.uses(fn, nameSet(names), false)
}

// identifiers returns the identifiers used in the body that are not
// shadowed by a parameter or local, whatever they are.
func (fn *Function) identifiers() []Use {
	if !fn.HasBody {
		return nil
	}
	return fn.file.uses(fn, nil, true)
}

func (f *File) uses(fn *Function, want map[string]bool, all bool) []Use {
	toks, match := f.Tokens, f.match
	scopes := []scope{{end: fn.tokHi, names: nameSet(fn.paramNames)}}
	declAt := map[int]bool{}
	var us []Use
	for i := fn.tokLo; i < fn.tokHi; i++ {
		for len(scopes) > 1 && scopes[len(scopes)-1].end < i {
			scopes = scopes[:len(scopes)-1]
		}
		t := toks[i]
		prev := "{"
		if i > fn.tokLo {
			prev = toks[i-1].Text
		}
		if t.Kind == Ident && f.stmtStart(i, prev) {
			for _, k := range f.declNames(i, fn.tokHi) {
				declAt[k] = true
			}
		}
		switch {
		case t.Kind == Punct && t.Text == "{":
			scopes = append(scopes, scope{end: match[i], names: map[string]bool{}})
		case t.Kind != Ident:
		case t.Text == "for" && f.is(i+1, "("):
			scopes = append(scopes, scope{end: f.forEnd(i, fn.tokHi), names: map[string]bool{}})
		case declAt[i]:
			scopes[len(scopes)-1].names[t.Text] = true
		case (all || want[t.Text]) && !isMemberOrTag(prev) && !shadowed(scopes, t.Text):
			us = append(us, Use{Name: t.Text, Pos: t.Pos, End: t.End})
		}
	}
	return us
}

func shadowed(scopes []scope, name string) bool {
	for _, s := range scopes {
		if s.names[name] {
			return true
		}
	}
	return false
}

// stmtStart reports whether toks[i], after prev, may start a declaration.
func (f *File) stmtStart(i int, prev string) bool {
	return prev == "{" || prev == "}" || prev == ";" || prev == "(" && i >= 2 && f.Tokens[i-2].Text == "for"
}

// forEnd returns the index of the last token of the for statement whose
// keyword is toks[i].
func (f *File) forEnd(i, hi int) int {
	end := f.match[i+1]
	if f.is(end+1, "{") {
		return f.match[end+1]
	}
	for end < hi && !f.is(end, ";") {
		if f.is(end, "(") || f.is(end, "[") || f.is(end, "{") {
			end = f.match[end]
		}
		end++
	}
	return end
}

// declNames returns the token indices of the names declared by a
// declaration starting at toks[i], or nil when toks[i] does not start a
// recognisable declaration.
func (f *File) declNames(i, hi int) []int {
	j, ok := f.declSpecs(i, hi)
	if !ok {
		return nil
	}
	toks := f.Tokens
	var names []int
	for j < hi {
		for j < hi && (f.is(j, "*") || toks[j].Kind == Ident && (qualifiers[toks[j].Text] || addrSpaces[toks[j].Text] != AddrNone)) {
			j++
		}
		if j >= hi || toks[j].Kind != Ident {
			return names
		}
		names = append(names, j)
		j = f.skipDeclarator(j+1, hi)
		if !f.is(j, ",") {
			return names
		}
		j++
	}
	return names
}

// declSpecs skips the declaration specifiers starting at toks[i] and
// reports whether they name a type.
func (f *File) declSpecs(i, hi int) (int, bool) {
	toks := f.Tokens
	j := i
	sawType := false
	for ; j < hi && toks[j].Kind == Ident; j++ {
		w := toks[j].Text
		switch {
		case qualifiers[w] || addrSpaces[w] != AddrNone:
		case w == "struct" || w == "union" || w == "enum":
			if j+1 >= hi || toks[j+1].Kind != Ident {
				return j, false
			}
			j++
			sawType = true
		case isTypeWord(w) || f.typedefs[w]:
			if sawType && !isTypeWord(w) {
				return j, true
			}
			sawType = true
		default:
			return j, sawType
		}
	}
	return j, sawType
}

// skipDeclarator skips array suffixes and an initializer after a
// declarator's name.
func (f *File) skipDeclarator(j, hi int) int {
	for f.is(j, "[") {
		j = f.match[j] + 1
	}
	if f.is(j, "=") {
		for j < hi && !f.is(j, ",") && !f.is(j, ";") {
			if f.is(j, "(") || f.is(j, "[") || f.is(j, "{") {
				j = f.match[j]
			}
			j++
		}
	}
	return j
}

// isMemberOrTag reports whether an identifier after prev is a member name
// or a struct, union or enum tag rather than a use of a variable.
func isMemberOrTag(prev string) bool {
	switch prev {
	case ".", "->", "struct", "union", "enum":
		return true
	}
	return false
}
