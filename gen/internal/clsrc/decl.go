package clsrc

import (
	"fmt"
	"go/scanner"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/gen/internal/cpp"
)

// TypeKind is the kind of a resolved OpenCL C type.
type TypeKind int

// The type kinds.
const (
	Scalar  TypeKind = iota // a scalar in the type table: char … double, half
	Vector                  // a vector in the type table: float4
	Pointer                 // a pointer; Addr is the pointee's address space
	Array                   // an array of Len Elem
	Struct                  // a struct, Fields laid out
	Union                   // a union, Fields all at offset 0
	Void                    // void
	Opaque                  // a type with no host layout: bool, size_t, images, samplers, events
)

// Type is an OpenCL C type with typedefs and macros resolved.
type Type struct {
	Kind TypeKind
	// Name is the type's spelling: "float4", "struct P", the typedef name of
	// an untagged struct, "image2d_t".
	Name   string
	Info   TypeInfo // for Scalar and Vector
	Elem   *Type    // for Pointer and Array
	Len    int      // for Array; -1 when the length is not a constant dgen evaluates
	Addr   AddrSpace
	Const  bool     // for Pointer: the pointee is const
	Fields []Member // for Struct and Union
	Size   int      // in bytes; 0 for Void, Opaque and incomplete types
	Align  int
	Packed bool
	// Typedef is the first typedef name given to a struct or union.
	Typedef string
}

// Member is a field of a struct or union.
type Member struct {
	Name   string
	Type   *Type
	Offset int
	Pos    token.Position
}

// String returns the type as OpenCL C spells it.
func (t *Type) String() string {
	switch t.Kind {
	case Pointer:
		s := t.Elem.String() + "*"
		if t.Const {
			s = "const " + s
		}
		if t.Addr != AddrNone {
			s = t.Addr.String() + " " + s
		}
		return s
	case Array:
		n := ""
		if t.Len >= 0 {
			n = strconv.Itoa(t.Len)
		}
		return t.Elem.String() + "[" + n + "]"
	}
	return t.Name
}

// Kernel is a __kernel function definition of a preprocessed unit.
type Kernel struct {
	Name   string
	Pos    token.Position
	Params []KernelParam
	// Body is the body's tokens, braces included, after preprocessing.
	Body []cpp.Token
}

// KernelParam is a parameter of a kernel.
type KernelParam struct {
	Name string
	Pos  token.Position
	Type *Type
	// Text is the parameter as written, after preprocessing.
	Text string
}

// Unit is what dgen reads of a preprocessed OpenCL C translation unit:
// its kernels, typedefs and struct, union and enum types.
type Unit struct {
	Kernels  []*Kernel
	Typedefs map[string]*Type
	Tags     map[string]*Type // "struct S", "union U"
	Errors   scanner.ErrorList

	byName map[string]*Kernel // Kernels by name, as ParseUnit found them
}

// Kernel returns the kernel named name, or nil.
func (u *Unit) Kernel(name string) *Kernel {
	if u.byName != nil {
		return u.byName[name]
	}
	for _, k := range u.Kernels {
		if k.Name == name {
			return k
		}
	}
	return nil
}

// ParseUnit reads the declarations of a preprocessed translation unit.
// It is lenient: what it does not understand inside function bodies and
// initializers is skipped; a declaration it cannot read is skipped up to
// its ';' or body. Errors are for what it reads wrongly for certain.
func ParseUnit(toks []cpp.Token) *Unit {
	p := &declParser{u: &Unit{Typedefs: map[string]*Type{}, Tags: map[string]*Type{}}, toks: toks, kernels: map[string]*Kernel{}}
	if slices.ContainsFunc(toks, func(t cpp.Token) bool { return t.Kind == cpp.Pragma }) {
		p.toks = slices.DeleteFunc(slices.Clone(toks), func(t cpp.Token) bool { return t.Kind == cpp.Pragma })
	}
	if p.balance() {
		p.top()
	}
	p.u.byName = p.kernels
	return p.u
}

// maxNest is how deep brackets of one kind and pointer declarators may
// nest, as clang's default -fbracket-depth, which counts parentheses,
// square brackets and braces each on their own: deeper input is refused
// rather than recursed into.
const maxNest = 256

// balance reports brackets that do not match, and reports whether those
// of each kind nest no deeper than maxNest.
func (p *declParser) balance() bool {
	var stack []cpp.Token
	depth := map[string]int{} // open brackets by kind
	for _, t := range p.toks {
		if t.Kind != cpp.Punct {
			continue
		}
		switch t.Text {
		case "(", "[", "{":
			stack = append(stack, t)
			if depth[t.Text]++; depth[t.Text] > maxNest {
				p.errorf(t.Pos, "%s nested more than %d deep", bracketNames[t.Text], maxNest)
				return false
			}
		case ")", "]", "}":
			if len(stack) == 0 || closer[stack[len(stack)-1].Text] != t.Text {
				p.errorf(t.Pos, "unbalanced %s", t.Text)
				return true
			}
			depth[stack[len(stack)-1].Text]--
			stack = stack[:len(stack)-1]
		}
	}
	for _, o := range stack {
		p.errorf(o.Pos, "unclosed %s", o.Text)
	}
	return true
}

// bracketNames name each kind of bracket in messages.
var bracketNames = map[string]string{"(": "parentheses", "[": "square brackets", "{": "braces"}

type declParser struct {
	toks    []cpp.Token
	i       int
	u       *Unit
	kernels map[string]*Kernel // u.Kernels by name
}

func (p *declParser) at(text string) bool {
	return p.i < len(p.toks) && p.toks[p.i].Text == text && p.toks[p.i].Kind != cpp.String && p.toks[p.i].Kind != cpp.Char
}

func (p *declParser) peekAt(k int, text string) bool {
	return p.i+k < len(p.toks) && p.toks[p.i+k].Text == text
}

func (p *declParser) errorf(pos token.Position, format string, args ...any) {
	p.u.Errors = append(p.u.Errors, &scanner.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// skipBalanced skips from an opening bracket at p.i past its closer.
func (p *declParser) skipBalanced() {
	depth := 0
	for ; p.i < len(p.toks); p.i++ {
		switch t := p.toks[p.i]; {
		case t.Kind != cpp.Punct:
		case t.Text == "(" || t.Text == "[" || t.Text == "{":
			depth++
		case t.Text == ")" || t.Text == "]" || t.Text == "}":
			depth--
			if depth <= 0 {
				p.i++
				return
			}
		}
	}
}

// inside skips a bracketed group from its opener and returns the tokens
// between the brackets.
func (p *declParser) inside() []cpp.Token {
	start := p.i
	p.skipBalanced()
	end := p.i
	if end > start+1 && end <= len(p.toks) && p.toks[end-1].Kind == cpp.Punct && strings.Contains(")]}", p.toks[end-1].Text) {
		end--
	}
	return p.toks[start+1 : max(start+1, end)]
}

// skipDecl skips to the next ';' (consumed) or '{…}' at depth 0.
func (p *declParser) skipDecl() {
	for p.i < len(p.toks) {
		switch {
		case p.at(";"):
			p.i++
			return
		case p.at("{"):
			p.skipBalanced()
			if p.at(";") {
				p.i++
			}
			return
		case p.at("(") || p.at("["):
			p.skipBalanced()
		default:
			p.i++
		}
	}
}

// top reads file-scope declarations.
func (p *declParser) top() {
	externC := 0
	for p.i < len(p.toks) {
		switch {
		case p.at(";"):
			p.i++
		case p.at("extern") && p.i+1 < len(p.toks) && p.toks[p.i+1].Kind == cpp.String:
			p.i += 2
			if p.at("{") {
				p.i++
				externC++
			}
		case p.at("}") && externC > 0:
			p.i++
			externC--
		default:
			start := p.i
			p.declaration()
			if p.i == start {
				p.i++
			}
		}
	}
}

// specs is what the declaration specifiers say.
type specs struct {
	typedef, kernel bool
	addr            AddrSpace
	cnst            bool
	words           []string // builtin type words
	typ             *Type    // a struct, union, enum or typedef type
	attrs           attrs
	pos             token.Position
}

type attrs struct {
	packed bool
	align  int
}

// declaration reads one file-scope declaration or function definition.
func (p *declParser) declaration() {
	start := p.i
	sp, ok := p.specifiers()
	if !ok {
		p.skipUnread(start)
		return
	}
	base, err := sp.base()
	if err != nil {
		p.errorf(sp.pos, "%v", err)
		p.skipDecl()
		return
	}
	for p.i < len(p.toks) {
		d := p.declarator(base, sp.addr, sp.cnst)
		switch {
		case d.fn != nil && p.at("{"):
			body := p.i
			p.skipBalanced()
			if sp.kernel && d.name != "" {
				p.kernel(&Kernel{Name: d.name, Pos: d.pos, Params: d.fn, Body: p.toks[body:p.i]}, d.typ)
			}
			return
		case sp.typedef && d.name != "":
			if (d.typ.Kind == Struct || d.typ.Kind == Union) && d.typ.Typedef == "" {
				d.typ.Typedef = d.name
				if strings.HasSuffix(d.typ.Name, "<anonymous>") {
					d.typ.Name = d.name
				}
			}
			if a := max(sp.attrs.align, d.attrs.align); a > d.typ.Align && d.typ.Size > 0 {
				// An aligned typedef raises the alignment, not the size, as
				// GCC and clang do; packed on a typedef they ignore.
				c := *d.typ
				c.Align = a
				d.typ = &c
			}
			p.u.Typedefs[d.name] = d.typ
		}
		if p.at("=") {
			p.initializer()
		}
		if !p.at(",") {
			break
		}
		p.i++
	}
	p.skipDecl()
}

// kernel adds a kernel definition whose return type is result, reporting
// one that returns a value or is defined twice, which the device compiler
// refuses.
func (p *declParser) kernel(k *Kernel, result *Type) {
	if result.Kind != Void {
		p.errorf(k.Pos, "kernel %s returns %s: a kernel function must return void", k.Name, result)
	}
	if first := p.kernels[k.Name]; first != nil {
		p.errorf(k.Pos, "kernel %s is defined twice (first at %s:%d:%d)", k.Name, filepath.Base(first.Pos.Filename), first.Pos.Line, first.Pos.Column)
		return
	}
	p.kernels[k.Name] = k
	p.u.Kernels = append(p.u.Kernels, k)
}

// skipUnread skips a declaration that does not start as OpenCL C, from
// start, up to its ';' or body. Should a kernel follow it before either,
// the text is not OpenCL C (a header of another language, prose): it is
// reported and reading starts again at the kernel, which would otherwise
// vanish into the skipped text.
func (p *declParser) skipUnread(start int) {
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		switch {
		case p.i > start && t.Kind == cpp.Ident && (t.Text == "__kernel" || t.Text == "kernel"):
			first := p.toks[start]
			p.errorf(first.Pos, "%s is not OpenCL C: dgen cannot read a declaration here, up to the kernel at %s:%d (is the file C?)", quoteTok(first), filepath.Base(t.Pos.Filename), t.Pos.Line)
			return
		case p.at(";"):
			p.i++
			return
		case p.at("{"):
			if p.i == start {
				p.errorf(t.Pos, "%s is not OpenCL C: no declaration starts with a brace (is the file C?)", quoteTok(t))
			}
			p.skipBalanced()
			if p.at(";") {
				p.i++
			}
			return
		case p.at("(") || p.at("["):
			p.skipBalanced()
		default:
			p.i++
		}
	}
}

// quoteTok quotes a token's text for a message, shortened.
func quoteTok(t cpp.Token) string {
	s := t.Text
	if len(s) > 20 {
		s = s[:20] + "…"
	}
	return strconv.Quote(s)
}

// initializer skips "= …" up to a ',' or ';' at depth 0.
func (p *declParser) initializer() {
	for p.i < len(p.toks) && !p.at(",") && !p.at(";") {
		if p.at("(") || p.at("[") || p.at("{") {
			p.skipBalanced()
			continue
		}
		p.i++
	}
}

var storageWords = map[string]bool{
	"extern": true, "static": true, "inline": true, "__inline": true, "__inline__": true,
	"register": true, "auto": true, "volatile": true, "restrict": true, "__restrict": true,
	"__restrict__": true, "__read_only": true, "read_only": true, "__write_only": true,
	"write_only": true, "__read_write": true, "read_write": true, "__constant__": true,
}

var builtinWords = map[string]bool{
	"void": true, "char": true, "short": true, "int": true, "long": true, "float": true,
	"double": true, "half": true, "signed": true, "unsigned": true, "bool": true, "_Bool": true,
	"size_t": true, "ptrdiff_t": true, "intptr_t": true, "uintptr_t": true, "image1d_t": true,
	"image2d_t": true, "image3d_t": true, "image1d_array_t": true, "image1d_buffer_t": true,
	"image2d_array_t": true, "sampler_t": true, "event_t": true,
}

// specifiers reads declaration specifiers. It fails when there is no type.
func (p *declParser) specifiers() (specs, bool) {
	var sp specs
	if p.i < len(p.toks) {
		sp.pos = p.toks[p.i].Pos
	}
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		if t.Kind != cpp.Ident {
			break
		}
		w := t.Text
		switch {
		case w == "typedef":
			sp.typedef = true
		case w == "__kernel" || w == "kernel":
			sp.kernel = true
		case w == "const" || w == "__const":
			sp.cnst = true
		case addrSpaces[w] != AddrNone:
			sp.addr = addrSpaces[w]
		case storageWords[w]:
		case w == "__attribute__" || w == "__attribute":
			p.i++
			sp.attrs = p.attributes(sp.attrs)
			continue
		case w == "struct" || w == "union":
			sp.typ = p.record()
			continue
		case w == "enum":
			p.enum()
			sp.typ = scalarType("int")
			continue
		case builtinWords[w] || isVectorOrScalar(w):
			sp.words = append(sp.words, w)
		case p.u.Typedefs[w] != nil && sp.typ == nil && len(sp.words) == 0:
			sp.typ = p.u.Typedefs[w]
		default:
			return sp, sp.typ != nil || len(sp.words) > 0
		}
		p.i++
	}
	return sp, sp.typ != nil || len(sp.words) > 0
}

func isVectorOrScalar(w string) bool {
	_, ok := LookupType(w)
	return ok
}

// attributes reads "((…))" after __attribute__.
func (p *declParser) attributes(a attrs) attrs {
	if !p.at("(") {
		return a
	}
	start := p.i
	p.skipBalanced()
	toks := p.toks[start:p.i]
	for i, t := range toks {
		switch t.Text {
		case "packed", "__packed__":
			a.packed = true
		case "aligned", "__aligned__":
			n := 16 // the largest alignment of the device's types
			if i+1 < len(toks) && toks[i+1].Text == "(" {
				// The whole parenthesized expression: a macro in
				// parentheses, 2*16; not its first token only.
				depth, end := 0, len(toks)
				for j := i + 1; j < len(toks); j++ {
					if toks[j].Text == "(" {
						depth++
					} else if toks[j].Text == ")" {
						if depth--; depth == 0 {
							end = j
							break
						}
					}
				}
				if v := constInt(toks[i+2 : max(i+2, end)]); v > 0 {
					n = v
				} else {
					p.errorf(t.Pos, "dgen cannot evaluate the alignment %s, so cannot lay out the type", spellTokens(toks[i:min(end+1, len(toks))]))
				}
			}
			a.align = max(a.align, n)
		}
	}
	return a
}

// base resolves the type the specifiers name.
func (sp *specs) base() (*Type, error) {
	if sp.typ != nil {
		if len(sp.words) > 0 {
			return nil, fmt.Errorf("type %s with %s", sp.typ.Name, strings.Join(sp.words, " "))
		}
		return sp.typ, nil
	}
	name := canonicalType(sp.words)
	name = strings.ReplaceAll(name, "long long", "long")
	if c, ok := multiWord[name]; ok {
		name = c
	}
	switch name {
	case "void":
		return &Type{Kind: Void, Name: "void"}, nil
	case "_Bool":
		name = "bool"
	}
	if t := scalarType(name); t != nil {
		return t, nil
	}
	if builtinWords[name] {
		return &Type{Kind: Opaque, Name: name}, nil
	}
	return nil, fmt.Errorf("unknown type %q", strings.Join(sp.words, " "))
}

// scalarType returns the Scalar or Vector type of a table name, or nil.
func scalarType(name string) *Type {
	info, ok := LookupType(name)
	if !ok {
		return nil
	}
	k := Scalar
	if info.Lanes > 1 {
		k = Vector
	}
	return &Type{Kind: k, Name: info.Name, Info: info, Size: info.Size, Align: info.Align}
}

// declarator is what a declarator declares.
type declarator struct {
	name string
	pos  token.Position
	typ  *Type
	fn   []KernelParam // the parameters, when it declares a function
	text string
	// attrs are the attributes written after the declarator's name
	// ("int b __attribute__((aligned(16)))"), which apply to what it declares.
	attrs attrs
}

// declarator reads a declarator (possibly abstract) for the base type.
// addr and cnst qualify the pointee of the first pointer.
func (p *declParser) declarator(base *Type, addr AddrSpace, cnst bool) declarator {
	var d declarator
	start, depth := p.i, 0
	t := base
	for p.at("*") || p.i < len(p.toks) && p.toks[p.i].Kind == cpp.Ident && (storageWords[p.toks[p.i].Text] || p.toks[p.i].Text == "const" || addrSpaces[p.toks[p.i].Text] != AddrNone || p.toks[p.i].Text == "__attribute__") {
		switch {
		case p.at("*"):
			if depth++; depth > maxNest {
				p.errorf(p.toks[p.i].Pos, "pointer declarator nested more than %d deep", maxNest)
				p.i = len(p.toks)
				d.typ = t
				return d
			}
			t = &Type{Kind: Pointer, Elem: t, Addr: addr, Const: cnst}
			addr, cnst = AddrNone, false
		case p.at("__attribute__"):
			p.i++
			p.attributes(attrs{})
			continue
		}
		p.i++
	}
	var inner *declarator
	switch {
	case p.at("(") && p.peekAt(1, "*"):
		// A grouped declarator: (*name)(…) or (*name)[…].
		p.i++
		in := p.declarator(&Type{Kind: Void, Name: "void"}, AddrNone, false)
		inner = &in
		if p.at(")") {
			p.i++
		}
	case p.i < len(p.toks) && p.toks[p.i].Kind == cpp.Ident:
		d.name, d.pos = p.toks[p.i].Text, p.toks[p.i].Pos
		p.i++
	}
	t, d.fn = p.suffixes(t)
	for p.at("__attribute__") || p.at("__attribute") {
		p.i++
		d.attrs = p.attributes(d.attrs)
	}
	if inner != nil {
		d.name, d.pos = inner.name, inner.pos
		d.fn = nil
		t = &Type{Kind: Pointer, Elem: t} // a pointer to function or array
	}
	d.typ = t
	d.text = spellTokens(p.toks[start:p.i])
	return d
}

// suffixes reads array and function suffixes.
func (p *declParser) suffixes(t *Type) (*Type, []KernelParam) {
	var dims []int
	var fn []KernelParam
	for {
		switch {
		case p.at("["):
			dims = append(dims, constInt(p.inside()))
			continue
		case p.at("(") && fn == nil:
			fn = p.params()
			if fn == nil {
				fn = []KernelParam{}
			}
			continue
		}
		break
	}
	for k := len(dims) - 1; k >= 0; k-- {
		t = arrayOf(t, dims[k])
	}
	return t, fn
}

func arrayOf(elem *Type, n int) *Type {
	a := &Type{Kind: Array, Elem: elem, Len: n, Align: elem.Align}
	if n >= 0 && elem.Size > 0 {
		a.Size = elem.Size * n
	}
	return a
}

// params reads a parameter list from its '('.
func (p *declParser) params() []KernelParam {
	save := p.i
	end := save + 1 + len(p.inside())
	p.i = save + 1
	var ps []KernelParam
	if p.at("void") && p.i+1 == end {
		p.i = min(end+1, len(p.toks))
		return nil
	}
	for p.i < end {
		start := p.i
		sp, ok := p.specifiers()
		var kp KernelParam
		if ok {
			if base, err := sp.base(); err == nil {
				d := p.declarator(base, sp.addr, sp.cnst)
				kp = KernelParam{Name: d.name, Pos: d.pos, Type: d.typ}
				if d.name == "" {
					kp.Pos = p.toks[start].Pos
				}
				if d.typ.Kind == Array { // an array parameter is a pointer
					kp.Type = &Type{Kind: Pointer, Elem: d.typ.Elem, Addr: sp.addr, Const: sp.cnst}
				}
			}
		}
		for p.i < end && !p.at(",") {
			if p.at("(") || p.at("[") {
				p.skipBalanced()
				continue
			}
			p.i++
		}
		if kp.Type == nil {
			kp = KernelParam{Pos: p.toks[start].Pos, Type: &Type{Kind: Opaque, Name: spellTokens(p.toks[start:p.i])}}
		}
		kp.Text = spellTokens(p.toks[start:p.i])
		ps = append(ps, kp)
		if p.at(",") {
			p.i++
		}
	}
	p.i = min(end+1, len(p.toks))
	return ps
}

// spellTokens spells tokens with single spaces where the source had space.
func spellTokens(toks []cpp.Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && (t.Space || t.Macro != "" && toks[i-1].Kind == cpp.Ident && t.Kind == cpp.Ident) {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// constInt evaluates an array length: an integer constant, or a sum,
// difference, product or quotient of those; -1 otherwise.
func constInt(toks []cpp.Token) int {
	v, rest, ok := evalAdd(toks)
	if !ok || len(rest) > 0 || v < 0 || v > 1<<31 {
		return -1
	}
	return int(v)
}

func evalAdd(toks []cpp.Token) (int64, []cpp.Token, bool) {
	v, toks, ok := evalMul(toks)
	for ok && len(toks) > 0 && (toks[0].Text == "+" || toks[0].Text == "-") {
		op := toks[0].Text
		var r int64
		r, toks, ok = evalMul(toks[1:])
		if op == "+" {
			v += r
		} else {
			v -= r
		}
	}
	return v, toks, ok
}

func evalMul(toks []cpp.Token) (int64, []cpp.Token, bool) {
	v, toks, ok := evalAtom(toks)
	for ok && len(toks) > 0 && (toks[0].Text == "*" || toks[0].Text == "/") {
		op := toks[0].Text
		var r int64
		r, toks, ok = evalAtom(toks[1:])
		switch {
		case !ok:
		case op == "*":
			v *= r
		case r == 0:
			ok = false
		default:
			v /= r
		}
	}
	return v, toks, ok
}

func evalAtom(toks []cpp.Token) (int64, []cpp.Token, bool) {
	if len(toks) == 0 {
		return 0, nil, false
	}
	if toks[0].Text == "(" {
		v, rest, ok := evalAdd(toks[1:])
		if !ok || len(rest) == 0 || rest[0].Text != ")" {
			return 0, nil, false
		}
		return v, rest[1:], true
	}
	if toks[0].Kind != cpp.Number {
		return 0, nil, false
	}
	v, err := strconv.ParseInt(strings.TrimRight(toks[0].Text, "uUlL"), 0, 64)
	return v, toks[1:], err == nil
}

// record reads a struct or union specifier from its keyword.
func (p *declParser) record() *Type {
	kw := p.toks[p.i].Text
	p.i++
	var a attrs
	for p.at("__attribute__") || p.at("__attribute") {
		p.i++
		a = p.attributes(a)
	}
	tag := ""
	if p.i < len(p.toks) && p.toks[p.i].Kind == cpp.Ident {
		tag = p.toks[p.i].Text
		p.i++
	}
	key := kw + " " + tag
	if !p.at("{") {
		if t := p.u.Tags[key]; t != nil && tag != "" {
			return t
		}
		t := &Type{Kind: Struct, Name: key}
		if kw == "union" {
			t.Kind = Union
		}
		if tag != "" {
			p.u.Tags[key] = t
		}
		return t
	}
	t := p.u.Tags[key]
	if t == nil || tag == "" {
		t = &Type{Name: key}
	}
	t.Kind = Struct
	if kw == "union" {
		t.Kind = Union
	}
	if tag == "" {
		t.Name = kw + " <anonymous>"
	} else {
		p.u.Tags[key] = t
	}
	p.i++ // {
	t.Fields = p.members()
	for p.at("__attribute__") || p.at("__attribute") {
		p.i++
		a = p.attributes(a)
	}
	t.Packed = a.packed
	layout(t, a.align)
	return t
}

// members reads member declarations up to and past the closing '}'.
func (p *declParser) members() []Member {
	var ms []Member
	for p.i < len(p.toks) && !p.at("}") {
		sp, ok := p.specifiers()
		base, err := sp.base()
		if !ok || err != nil {
			p.skipDecl()
			continue
		}
		for p.i < len(p.toks) {
			d := p.declarator(base, sp.addr, sp.cnst)
			typ := d.typ
			if p.at(":") { // a bit-field: no layout dgen can check
				p.i++
				p.initializer()
				typ = &Type{Kind: Opaque, Name: "bit-field " + d.text}
			}
			// A member's attributes, before its type or after its name:
			// packed drops its alignment to 1, aligned raises it.
			packed, align := sp.attrs.packed || d.attrs.packed, max(sp.attrs.align, d.attrs.align)
			if (packed || align > 0) && typ.Size > 0 {
				c := *typ
				if packed {
					c.Align = 1
				}
				c.Align = max(c.Align, align)
				typ = &c
			}
			ms = append(ms, Member{Name: d.name, Type: typ, Pos: d.pos})
			if !p.at(",") {
				break
			}
			p.i++
		}
		if p.at(";") {
			p.i++
		} else if !p.at("}") {
			p.skipDecl()
		}
	}
	if p.at("}") {
		p.i++
	}
	return ms
}

// layout lays out the members of a struct or union under OpenCL C's rules:
// each member at the next multiple of its alignment (1 when packed), the
// whole aligned to its largest member alignment (or the aligned
// attribute's) and padded to a multiple of it. A member without size
// leaves the type without size.
func layout(t *Type, align int) {
	size, al := 0, 1
	for i := range t.Fields {
		m := &t.Fields[i]
		if m.Type.Size == 0 {
			t.Size, t.Align = 0, 0
			return
		}
		a := m.Type.Align
		if t.Packed {
			a = 1
		}
		al = max(al, a)
		if t.Kind == Union {
			size = max(size, m.Type.Size)
			continue
		}
		m.Offset = roundUp(size, a)
		size = m.Offset + m.Type.Size
	}
	al = max(al, align)
	t.Size, t.Align = roundUp(size, al), al
}

// enum reads an enum specifier from its keyword.
func (p *declParser) enum() {
	p.i++
	if p.i < len(p.toks) && p.toks[p.i].Kind == cpp.Ident {
		p.i++
	}
	if p.at("{") {
		p.skipBalanced()
	}
}

// Classify returns how the host passes a kernel parameter of type t, and
// the type of the value or of the buffer's or local memory's elements
// (Void for a void pointer), or an error saying why no host value fits:
// a pointer to a pointer, a private pointer, a type without host layout
// (bool, size_t, images, samplers, a struct holding one of those).
func Classify(t *Type) (ArgClass, *Type, error) {
	class, elem := ArgValue, t
	if t.Kind == Pointer {
		elem = t.Elem
		if elem.Kind == Pointer {
			return 0, nil, fmt.Errorf("a pointer to a pointer cannot be a kernel argument")
		}
		switch t.Addr {
		case AddrGlobal, AddrConstant:
			class = ArgBuffer
		case AddrLocal:
			class = ArgLocal
		default:
			return 0, nil, fmt.Errorf("a kernel's pointer parameter must be __global, __constant or __local")
		}
		if elem.Kind == Void {
			return class, elem, nil
		}
	}
	switch {
	case elem.Kind == Scalar || elem.Kind == Vector:
		return class, elem, nil
	case elem.Kind == Struct || elem.Kind == Union:
		if elem.Size == 0 {
			return 0, nil, fmt.Errorf("%s has no host layout: %s", elem.Name, noLayout(elem))
		}
		return class, elem, nil
	}
	return 0, nil, fmt.Errorf("type %s is not supported as a kernel argument", elem)
}

// noLayout says why a struct or union has no size.
func noLayout(t *Type) string {
	if len(t.Fields) == 0 {
		return "it is incomplete"
	}
	for _, m := range t.Fields {
		if m.Type.Size == 0 {
			return fmt.Sprintf("member %s has type %s", m.Name, m.Type)
		}
	}
	return "it is empty"
}
