package annotations

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path"
	"strconv"
	"strings"
)

// Error is a problem with a directive, at the position of the offending text.
type Error struct {
	// Pos is the position of the offending text: the argument, the value,
	// or the directive itself when the problem concerns the whole directive.
	Pos token.Pos
	// Msg describes the problem, without position.
	Msg string
}

// Error returns the message. Callers that have a token.FileSet format the
// position themselves, as "file:line:col: msg".
func (e *Error) Error() string { return e.Msg }

// ErrorList is a list of directive errors, in source order. It is returned
// as an error only when it is not empty.
type ErrorList []*Error

// Error returns the first message and the number of others.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Msg
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0].Msg, len(l)-1)
}

// Unwrap returns the errors of the list, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Arg is one argument as written in a directive.
type Arg struct {
	// Name is the argument's key (or the flag).
	Name string
	// Value is the argument's value, unquoted; empty for a flag.
	Value string
	// HasValue reports whether the argument was written as key=value.
	HasValue bool
	// Quoted reports whether the value was a double-quoted string.
	Quoted bool
	// Pos is the position of the argument's first byte (its key).
	Pos token.Pos
	// ValuePos is the position of the value's first byte (the opening quote
	// of a quoted value); NoPos when there is no value.
	ValuePos token.Pos
}

// Directive is a parsed and validated directive.
type Directive struct {
	// Marker is the directive's entry in the table.
	Marker Marker
	// Verb is the directive's verb.
	Verb string
	// Pos is the position of the directive's "//".
	Pos token.Pos
	// VerbPos is the position of the verb's first byte.
	VerbPos token.Pos
	// End is the position just past the directive's last byte.
	End token.Pos
	// Args lists the arguments in the order written.
	Args []Arg
}

// Arg returns the argument with the given name, if it was written.
func (d *Directive) Arg(name string) (Arg, bool) {
	for _, a := range d.Args {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// Has reports whether the argument or flag with the given name was written.
func (d *Directive) Has(name string) bool {
	_, ok := d.Arg(name)
	return ok
}

// Value returns the value of the named argument, or the specification's
// default when it was not written.
func (d *Directive) Value(name string) string {
	if a, ok := d.Arg(name); ok {
		return a.Value
	}
	if s, ok := d.Marker.Arg(name); ok {
		return s.Default
	}
	return ""
}

// Program is the typed form of a //dgen:program directive.
type Program struct {
	Source  Arg // the source file; always present
	Options Arg // the build options; zero Pos when absent
}

// Kernel is the typed form of a //dgen:kernel directive.
type Kernel struct {
	Program Arg // the program variable's name; always present
	Name    Arg // the kernel's OpenCL name; zero Pos when absent
}

// Global is the typed form of a //dgen:global directive.
type Global struct {
	// DeviceImageScope reports whether the device_image_scope flag is set.
	DeviceImageScope bool
	// HostAccess is one of the HostAccess constants; read_write by default.
	HostAccess string
	// HostAccessPos is the position of the host_access argument, or NoPos.
	HostAccessPos token.Pos
}

// Program returns the typed form of a //dgen:program directive.
func (d *Directive) Program() (Program, bool) {
	if d.Verb != VerbProgram {
		return Program{}, false
	}
	src, _ := d.Arg("source")
	opt, _ := d.Arg("options")
	return Program{Source: src, Options: opt}, true
}

// Kernel returns the typed form of a //dgen:kernel directive.
func (d *Directive) Kernel() (Kernel, bool) {
	if d.Verb != VerbKernel {
		return Kernel{}, false
	}
	p, _ := d.Arg("program")
	n, _ := d.Arg("name")
	return Kernel{Program: p, Name: n}, true
}

// Global returns the typed form of a //dgen:global directive.
func (d *Directive) Global() (Global, bool) {
	if d.Verb != VerbGlobal {
		return Global{}, false
	}
	g := Global{DeviceImageScope: d.Has("device_image_scope"), HostAccess: d.Value("host_access")}
	if a, ok := d.Arg("host_access"); ok {
		g.HostAccessPos = a.Pos
	}
	return g, true
}

// IsDirective reports whether a comment's text (including "//") is a
// directive, that is, starts with Prefix. A directive that IsDirective
// accepts may still fail to parse.
func IsDirective(text string) bool {
	return strings.HasPrefix(text, Prefix)
}

// NearMiss reports whether a comment's text looks like a directive but is
// not one, such as "// dgen:kernel ...", "//dgen :kernel", "//Dgen:kernel"
// or "/*dgen:kernel*/": Fix returns the directive meant. "//dgenerate" and
// other words that merely start with "dgen" are not near misses.
func NearMiss(text string) bool {
	_, ok := Fix(text)
	return ok
}

// Fix returns the directive that a near-miss comment means, and whether
// text is a near miss.
func Fix(text string) (string, bool) {
	if IsDirective(text) {
		return "", false
	}
	var t string
	switch {
	case strings.HasPrefix(text, "//"):
		t = text[2:]
	case strings.HasPrefix(text, "/*"):
		t = strings.TrimSuffix(text[2:], "*/")
	default:
		return "", false
	}
	t = strings.TrimLeft(t, " \t")
	if len(t) < 4 || !strings.EqualFold(t[:4], "dgen") {
		return "", false
	}
	t = strings.TrimLeft(t[4:], " \t")
	rest, ok := strings.CutPrefix(t, ":")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = strings.TrimSpace(rest[:i])
	}
	return Prefix + rest, true
}

// ParseCommentGroup parses every directive in a comment group. Comments
// that are not directives are skipped. Two directives with the same verb in
// one group are an error. The directives that parsed are returned even
// when there are errors; the error is an ErrorList.
func ParseCommentGroup(cg *ast.CommentGroup) ([]*Directive, error) {
	if cg == nil {
		return nil, nil
	}
	var ds []*Directive
	var errs ErrorList
	seen := map[string]bool{}
	for _, c := range cg.List {
		d, ok, err := ParseComment(c)
		if !ok {
			continue
		}
		if err != nil {
			errs = append(errs, err.(ErrorList)...)
		}
		if d == nil {
			continue
		}
		if seen[d.Verb] {
			errs = append(errs, &Error{Pos: d.Pos, Msg: fmt.Sprintf("duplicate %s%s directive", Prefix, d.Verb)})
			continue
		}
		seen[d.Verb] = true
		ds = append(ds, d)
	}
	if len(errs) > 0 {
		return ds, errs
	}
	return ds, nil
}

// ParseComment parses one comment. ok reports whether the comment is a
// directive at all; when it is not, d and err are nil. When it is, d is the
// directive (nil if even the verb is bad) and err an ErrorList of every
// problem found.
func ParseComment(c *ast.Comment) (d *Directive, ok bool, err error) {
	if c == nil || !IsDirective(c.Text) {
		return nil, false, nil
	}
	d, err = ParseText(c.Text, c.Slash)
	return d, true, err
}

// ParseText parses the text of one directive comment, "//dgen:verb args",
// whose first byte is at pos. Text that does not start with Prefix is an
// error. Positions in the result and in errors are pos plus byte offsets.
func ParseText(text string, pos token.Pos) (*Directive, error) {
	p := &dirParser{text: text, base: pos}
	d := p.parse()
	if len(p.errs) > 0 {
		return d, p.errs
	}
	return d, nil
}

type dirParser struct {
	text string
	base token.Pos
	errs ErrorList
}

func (p *dirParser) pos(off int) token.Pos {
	if !p.base.IsValid() {
		return token.NoPos
	}
	return p.base + token.Pos(off)
}

func (p *dirParser) errorf(off int, format string, args ...any) {
	p.errs = append(p.errs, &Error{Pos: p.pos(off), Msg: fmt.Sprintf(format, args...)})
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isIdent(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// cKeywords are OpenCL C keywords that cannot name a kernel.
var cKeywords = map[string]bool{
	"auto": true, "break": true, "case": true, "char": true, "const": true, "continue": true,
	"default": true, "do": true, "double": true, "else": true, "enum": true, "extern": true,
	"float": true, "for": true, "goto": true, "if": true, "inline": true, "int": true, "long": true,
	"register": true, "restrict": true, "return": true, "short": true, "signed": true,
	"sizeof": true, "static": true, "struct": true, "switch": true, "typedef": true,
	"union": true, "unsigned": true, "void": true, "volatile": true, "while": true,
	"kernel": true, "__kernel": true, "global": true, "__global": true, "local": true,
	"__local": true, "constant": true, "__constant": true, "private": true, "__private": true,
}

func (p *dirParser) parse() *Directive {
	text := p.text
	if !strings.HasPrefix(text, Prefix) {
		p.errorf(0, "not a %s directive", Prefix)
		return nil
	}
	if strings.ContainsAny(text, "\n\r") {
		// A block comment or a corrupted comment: a directive is one line.
		p.errorf(0, "a directive must be a single line comment")
		return nil
	}
	i := len(Prefix)
	j := i
	for j < len(text) && !isSpace(text[j]) {
		j++
	}
	verb := text[i:j]
	if verb == "" {
		p.errorf(i, "missing directive verb after %q", Prefix)
		return nil
	}
	spec, ok := Lookup(verb)
	if !ok {
		p.errorf(i, "unknown directive %s%s (known: %s)", Prefix, verb, knownVerbs())
		return nil
	}
	d := &Directive{Marker: spec, Verb: verb, Pos: p.pos(0), VerbPos: p.pos(i), End: p.pos(len(text))}
	seen := map[string]int{}
	for off := j; ; {
		for off < len(text) && isSpace(text[off]) {
			off++
		}
		if off >= len(text) {
			break
		}
		a, next, ok := p.arg(off)
		off = next
		if !ok {
			continue
		}
		as, known := spec.Arg(a.Name)
		if !known {
			p.errorf(a.start, "unknown argument %q to %s%s%s", a.Name, Prefix, verb, argList(&spec))
			continue
		}
		if _, dup := seen[a.Name]; dup {
			p.errorf(a.start, "duplicate argument %q", a.Name)
			continue
		}
		seen[a.Name] = a.start
		if p.check(as, &a) {
			d.Args = append(d.Args, a.Arg)
		}
	}
	for _, as := range spec.Args {
		if _, ok := seen[as.Name]; as.Required && !ok {
			p.errorf(i, "%s%s requires argument %s=", Prefix, verb, as.Name)
		}
	}
	return d
}

type rawArg struct {
	Arg
	start, valStart int
}

// arg scans one argument starting at off and returns it with the offset
// just past it. ok is false when the argument is malformed (an error has
// been recorded).
func (p *dirParser) arg(off int) (a rawArg, next int, ok bool) {
	text := p.text
	a.start = off
	a.Pos = p.pos(off)
	k := off
	for k < len(text) && !isSpace(text[k]) && text[k] != '=' && text[k] != '"' {
		k++
	}
	a.Name = text[off:k]
	if a.Name == "" {
		// Starts with '=' or '"'.
		end := skipWord(text, off)
		p.errorf(off, "malformed argument %q: want key=value or a flag", text[off:end])
		return a, end, false
	}
	if !isIdent(a.Name) {
		end := skipWord(text, off)
		p.errorf(off, "malformed argument name %q", a.Name)
		return a, end, false
	}
	if k >= len(text) || isSpace(text[k]) {
		return a, k, true
	}
	if text[k] == '"' {
		end := skipWord(text, off)
		p.errorf(k, "missing '=' between %q and its quoted value", a.Name)
		return a, end, false
	}
	// text[k] == '='
	a.HasValue = true
	v := k + 1
	a.valStart = v
	a.ValuePos = p.pos(v)
	if v >= len(text) || isSpace(text[v]) {
		p.errorf(v, "missing value after %s=", a.Name)
		return a, v, false
	}
	if text[v] != '"' {
		e := v
		for e < len(text) && !isSpace(text[e]) {
			if text[e] == '"' {
				p.errorf(e, "unexpected quote in unquoted value of %s", a.Name)
				return a, skipWord(text, e), false
			}
			e++
		}
		a.Value = text[v:e]
		return a, e, true
	}
	// Quoted: find the closing quote, honouring backslash escapes.
	a.Quoted = true
	e := v + 1
	for e < len(text) && text[e] != '"' {
		if text[e] == '\\' {
			e++
		}
		e++
	}
	if e >= len(text) {
		p.errorf(v, "unterminated quoted value of %s", a.Name)
		return a, len(text), false
	}
	e++ // past the closing quote
	s, err := strconv.Unquote(text[v:e])
	if err != nil {
		p.errorf(v, "malformed quoted value of %s: %s", a.Name, text[v:e])
		return a, skipWord(text, e), false
	}
	if e < len(text) && !isSpace(text[e]) {
		p.errorf(e, "unexpected text after quoted value of %s", a.Name)
		return a, skipWord(text, e), false
	}
	a.Value = s
	return a, e, true
}

// skipWord returns the offset of the next space at or after off, skipping
// quoted runs so that a bad argument's error does not cascade.
func skipWord(text string, off int) int {
	inq := false
	for off < len(text) {
		c := text[off]
		switch {
		case c == '\\' && inq:
			off++
		case c == '"':
			inq = !inq
		case isSpace(c) && !inq:
			return off
		}
		off++
	}
	if off > len(text) {
		off = len(text)
	}
	return off
}

// check validates a's value against its specification.
func (p *dirParser) check(as *MarkerArg, a *rawArg) bool {
	if as.Kind == ArgFlag {
		if a.HasValue {
			p.errorf(a.start, "%s is a flag and takes no value", a.Name)
			return false
		}
		return true
	}
	if !a.HasValue {
		p.errorf(a.start, "argument %s requires a value (%s=...)", a.Name, a.Name)
		return false
	}
	v := a.Value
	switch as.Kind {
	case ArgString:
		return true
	case ArgPath:
		switch {
		case v == "":
			p.errorf(a.valStart, "%s must not be empty", a.Name)
		case strings.HasPrefix(v, "/") || strings.Contains(v, `\`) || (len(v) > 1 && v[1] == ':'):
			p.errorf(a.valStart, "%s must be a slash-separated path relative to the package directory, not %q", a.Name, v)
		case path.Clean(v) != v:
			p.errorf(a.valStart, "%s path %q is not clean (want %q)", a.Name, v, path.Clean(v))
		default:
			return true
		}
		return false
	case ArgGoIdent:
		if !isIdent(v) {
			p.errorf(a.valStart, "%s must be a Go identifier, not %q", a.Name, v)
			return false
		}
		return true
	case ArgCIdent:
		if !isIdent(v) || cKeywords[v] {
			p.errorf(a.valStart, "%s must be an OpenCL C identifier, not %q", a.Name, v)
			return false
		}
		return true
	case ArgEnum:
		for _, ok := range as.Values {
			if v == ok {
				return true
			}
		}
		p.errorf(a.valStart, "bad value %q for %s: want one of %s", v, a.Name, strings.Join(as.Values, ", "))
		return false
	}
	return true
}

func knownVerbs() string {
	var vs []string
	for _, s := range markers() {
		vs = append(vs, s.Verb)
	}
	return strings.Join(vs, ", ")
}

func argList(s *Marker) string {
	if len(s.Args) == 0 {
		return " (it takes no arguments)"
	}
	var ns []string
	for _, a := range s.Args {
		ns = append(ns, a.Name)
	}
	return " (known: " + strings.Join(ns, ", ") + ")"
}

// DeclKindOf classifies a declaration for directive checking. spec is one
// of gd's specs; a type spec whose type is a struct (directly, not through
// another named type) is DeclStructType, a value spec of a var declaration
// is DeclVar, and everything else is DeclOther. The caller is responsible
// for passing only package-level declarations.
func DeclKindOf(gd *ast.GenDecl, spec ast.Spec) DeclKind {
	if gd == nil {
		return DeclOther
	}
	switch s := spec.(type) {
	case *ast.ValueSpec:
		if gd.Tok == token.VAR {
			return DeclVar
		}
	case *ast.TypeSpec:
		if gd.Tok == token.TYPE && s.Assign == token.NoPos {
			if _, ok := s.Type.(*ast.StructType); ok {
				return DeclStructType
			}
		}
	}
	return DeclOther
}

// CheckDecl reports an error, at the directive, when d may not be attached
// to a declaration of the given kind. The generator calls it for
// package-level declarations and reports directives found anywhere else
// itself.
func CheckDecl(d *Directive, kind DeclKind) error {
	if d.Marker.Decl == kind {
		return nil
	}
	what := "a " + kind.String()
	if kind == DeclOther {
		what = "this kind of declaration"
	}
	return &Error{Pos: d.Pos, Msg: fmt.Sprintf("%s%s applies to a %s (%s), not to %s",
		Prefix, d.Verb, d.Marker.Decl, d.Marker.GoType, what)}
}

// CheckDeclOf is CheckDecl for the declaration spec of gd (gd nil for a
// function), naming in its message what the declaration is.
func CheckDeclOf(d *Directive, gd *ast.GenDecl, spec ast.Spec) error {
	kind := DeclKindOf(gd, spec)
	if d.Marker.Decl == kind {
		return nil
	}
	return &Error{Pos: d.Pos, Msg: fmt.Sprintf("%s%s applies to a %s (%s), not to %s",
		Prefix, d.Verb, d.Marker.Decl, d.Marker.GoType, DescribeDecl(gd, spec))}
}

// DescribeDecl names a declaration for messages: "a constant (C)", "a
// type alias (A)", "a non-struct type (T int)", "a package-level variable
// (V)", "a function".
func DescribeDecl(gd *ast.GenDecl, spec ast.Spec) string {
	if gd == nil {
		return "a function"
	}
	switch s := spec.(type) {
	case *ast.ValueSpec:
		names := make([]string, len(s.Names))
		for i, n := range s.Names {
			names[i] = n.Name
		}
		if gd.Tok == token.CONST {
			return "a constant (" + strings.Join(names, ", ") + ")"
		}
		return "a package-level variable (" + strings.Join(names, ", ") + ")"
	case *ast.TypeSpec:
		switch {
		case s.Assign.IsValid():
			return "a type alias (" + s.Name.Name + ")"
		case !isStruct(s.Type):
			return "a non-struct type (" + s.Name.Name + " " + types.ExprString(s.Type) + ")"
		}
		return "a package-level struct type (" + s.Name.Name + ")"
	}
	return "this kind of declaration"
}

func isStruct(e ast.Expr) bool {
	_, ok := e.(*ast.StructType)
	return ok
}
