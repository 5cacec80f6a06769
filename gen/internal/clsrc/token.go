// Package clsrc is dgen's reading of OpenCL C, in two parts.
//
// [ParseUnit] reads a translation unit after preprocessing (package
// gen/internal/cpp): kernel definitions with their parameters, typedefs,
// and struct and union definitions laid out under OpenCL C's rules, every
// type resolved through typedefs and macros ([Type]). [Classify] says how
// the host passes a kernel parameter; the scalar and vector table
// ([LookupType], [ForGo]) is the one map between Go and OpenCL C types.
//
// [Rewrite] implements dgen's device-image rewriting for device globals on
// the unpreprocessed source (headers inlined): OpenCL 1.2 has no
// program-scope variables, so every function that refers to a global,
// directly or through the helpers and macros it uses, gains a hidden
// trailing __global T* parameter, calls pass it on, and uses of the
// global's name read through it. It tokenizes source text itself (a whole
// preprocessor line is one token, #define bodies are read for uses and
// calls) and finds function definitions and prototypes, the calls and the
// identifier uses inside their bodies.
//
// The rewriting never inserts a newline, so the rewritten source keeps the
// user's line numbers; [Image] puts generated declarations in front and a
// "#line 1" directive naming the user's file after them, so that build logs
// point at the user's file and lines. The rewriting's parser has limits,
// which the OpenCL compiler then reports on the rewritten source: a local
// variable declared with a type from an #include is not seen as shadowing a
// global; a macro body's use of a global always means the global, even
// where a local of the same name is in scope at the expansion; uses of a
// global at file scope, outside functions and #define bodies, are not
// rewritten; a source whose braces only balance after macro expansion
// cannot be rewritten. [RewriteMasked] reads the source with the code of
// #if branches not taken blanked out, so that alternative kernel headers
// sharing one body are read as the compiler reads them.
//
// Errors are go/scanner's, the generator's one diagnostic type, and are
// returned, never panics, whatever the input.
package clsrc

import (
	"fmt"
	"go/scanner"
	"go/token"
	"sort"
	"strings"
)

// Pos is a position in a source file: Offset, 1-based Line and byte
// Column; String gives "line:col".
type Pos = token.Position

// Error is a problem in OpenCL C source at a position. It is the
// diagnostic type of the whole generator, go/scanner's.
type Error = scanner.Error

// ErrorList is a list of errors in source order; it is returned as an
// error only when it is not empty.
type ErrorList = scanner.ErrorList

// Kind is the kind of a token.
type Kind int

// The token kinds.
const (
	Ident   Kind = iota // an identifier or keyword
	Number              // a numeric literal, as the preprocessor sees it
	String              // a string literal, quotes included
	Char                // a character literal, quotes included
	Punct               // an operator or punctuation
	Preproc             // a whole preprocessor line, continuations included
	Comment             // a // or /* */ comment
)

var kindNames = [...]string{"identifier", "number", "string", "char", "punctuation", "preprocessor line", "comment"}

// String returns the kind's name.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Token is a token of the source.
type Token struct {
	Kind Kind
	Text string // the token's source text
	Pos  Pos    // the position of its first byte
	End  int    // the byte offset just past it
}

// lineIndex maps offsets to positions.
type lineIndex []int // offsets of line starts

func newLineIndex(src []byte) lineIndex {
	li := lineIndex{0}
	for i, c := range src {
		if c == '\n' {
			li = append(li, i+1)
		}
	}
	return li
}

func (li lineIndex) pos(off int) Pos {
	i := sort.Search(len(li), func(i int) bool { return li[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return Pos{Offset: off, Line: i + 1, Column: off - li[i] + 1}
}

// puncts are the multi-byte punctuators, longest first.
var puncts = []string{
	"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "##",
}

// isLetter reports whether c may start an identifier: an ASCII letter,
// '_', or a byte of a UTF-8 sequence, since clang accepts identifiers that
// are not ASCII (a Go global named Höhe), as the preprocessor does.
func isLetter(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

type srcScanner struct {
	src  []byte
	str  string // src as a string, which token texts are slices of
	li   lineIndex
	errs ErrorList
	// noComments leaves comments out of scan's tokens.
	noComments bool
}

func (s *srcScanner) errorf(off int, format string, args ...any) {
	s.errs = append(s.errs, &Error{Pos: s.li.pos(off), Msg: fmt.Sprintf(format, args...)})
}

// Tokenize splits src into tokens, comments included. Problems
// (an unterminated comment, string or character literal, a stray byte)
// are returned as an ErrorList together with the tokens found.
func Tokenize(src []byte) ([]Token, error) {
	s := &srcScanner{src: src, str: string(src), li: newLineIndex(src)}
	toks := s.scan(0, len(src), true)
	if len(s.errs) > 0 {
		return toks, s.errs
	}
	return toks, nil
}

// Identifiers returns the identifiers of src, those on preprocessor lines
// included (macro names and bodies, #if conditions); comments are left
// out.
func Identifiers(src []byte) map[string]bool {
	s := &srcScanner{src: src}
	ids := map[string]bool{}
	for i := 0; i < len(src); {
		if n, _ := blank(src, i); n > 0 {
			i += n
			continue
		}
		start := i
		var k Kind
		i, k = s.token(src, i, false)
		if k == Ident && !ids[string(src[start:i])] {
			ids[string(src[start:i])] = true
		}
	}
	return ids
}

// scan tokenizes src[from:to]. With directives set, a '#' that is the first
// token of a line starts a Preproc token running to the end of the line.
func (s *srcScanner) scan(from, to int, directives bool) []Token {
	src := s.src[:to]
	toks := make([]Token, 0, (to-from)/6)
	lineStart := true
	for i := from; i < len(src); {
		if n, newline := blank(src, i); n > 0 {
			i += n
			lineStart = lineStart || newline
			continue
		}
		start := i
		var k Kind
		i, k = s.token(src, i, lineStart && directives)
		if k == Comment && s.noComments {
			continue // a comment does not end lineStart
		}
		text := ""
		if s.str != "" {
			text = s.str[start:i] // no copy: a slice of the one string
		} else {
			text = string(src[start:i])
		}
		toks = append(toks, Token{Kind: k, Text: text, Pos: s.li.pos(start), End: i})
		if k != Comment { // a comment does not end lineStart
			lineStart = false
		}
	}
	return toks
}

// blank returns the length of the white space or line splice at i, and
// whether it is a newline.
func blank(src []byte, i int) (int, bool) {
	switch c := src[i]; {
	case c == '\n':
		return 1, true
	case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
		return 1, false
	case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
		return 2, false
	case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
		return 3, false
	}
	return 0, false
}

// token scans the token at i, returning its end and kind; directive
// reports that a '#' there starts a directive.
func (s *srcScanner) token(src []byte, i int, directive bool) (int, Kind) {
	c := src[i]
	switch {
	case c == '/' && i+1 < len(src) && src[i+1] == '/':
		return s.lineComment(i), Comment
	case c == '/' && i+1 < len(src) && src[i+1] == '*':
		return s.blockComment(i), Comment
	case c == '#' && directive:
		return s.directive(i), Preproc
	case isLetter(c):
		for i < len(src) && (isLetter(src[i]) || isDigit(src[i])) {
			i++
		}
		return i, Ident
	case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
		return s.number(i), Number
	case c == '"':
		return s.quoted(i, c), String
	case c == '\'':
		return s.quoted(i, c), Char
	}
	return s.punct(src, i), Punct
}

// punct scans the punctuator at i, reporting a stray byte.
func (s *srcScanner) punct(src []byte, i int) int {
	c := src[i]
	n := 1
	for _, p := range puncts {
		if len(src)-i >= len(p) && string(src[i:i+len(p)]) == p {
			n = len(p)
			break
		}
	}
	if c < 0x20 || c >= 0x7f || c == '`' || c == '@' || c == '$' {
		s.errorf(i, "unexpected byte %q", c)
	}
	return i + n
}

func (s *srcScanner) lineComment(i int) int {
	src := s.src
	for i < len(src) && src[i] != '\n' {
		if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
			i++ // a continued // comment goes on
		}
		i++
	}
	return min(i, len(src))
}

func (s *srcScanner) blockComment(i int) int {
	src := s.src
	start := i
	i += 2
	for i+1 < len(src) {
		if src[i] == '*' && src[i+1] == '/' {
			return i + 2
		}
		i++
	}
	s.errorf(start, "unterminated /* comment")
	return len(src)
}

func (s *srcScanner) number(i int) int {
	src := s.src
	for i < len(src) {
		c := src[i]
		switch {
		case isLetter(c) || isDigit(c) || c == '.':
			i++
		case (c == '+' || c == '-') && strings.ContainsRune("eEpP", rune(src[i-1])):
			i++
		default:
			return i
		}
	}
	return i
}

func (s *srcScanner) quoted(i int, q byte) int {
	src := s.src
	start := i
	i++
	for i < len(src) {
		switch src[i] {
		case q:
			return i + 1
		case '\\':
			i += 2
			continue
		case '\n':
			what := "string"
			if q == '\'' {
				what = "character"
			}
			s.errorf(start, "unterminated %s literal", what)
			return i
		}
		i++
	}
	s.errorf(start, "unterminated literal")
	return len(src)
}

// directive returns the end of the preprocessor line starting at i,
// following backslash continuations and skipping comments and literals.
func (s *srcScanner) directive(i int) int {
	src := s.src
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			return i
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			i += 3
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			return s.lineComment(i)
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = s.blockComment(i)
		case c == '"' || c == '\'':
			// In #include <...> or #error text an apostrophe may be
			// unbalanced; only complain about unbalanced double quotes.
			if c == '\'' {
				j := i + 1
				for j < len(src) && src[j] != '\'' && src[j] != '\n' {
					j++
				}
				if j >= len(src) || src[j] == '\n' {
					i = j
					continue
				}
			}
			i = s.quoted(i, c)
		default:
			i++
		}
	}
	return i
}
