package cpp

import (
	"fmt"
	"go/scanner"
	"go/token"
	"strings"
)

// Kind is the kind of a preprocessing token.
type Kind uint8

// The token kinds.
const (
	Ident  Kind = iota // an identifier or keyword
	Number             // a preprocessing number
	String             // a string literal, quotes included
	Char               // a character constant, quotes included
	Punct              // an operator or punctuator
	Pragma             // a whole #pragma line, kept in the output
	Other              // a byte that is no other token
	eof                // the end of an argument being expanded (internal)
)

var kindNames = [...]string{"identifier", "number", "string", "character", "punctuation", "pragma", "other", "end"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Token is a preprocessing token. A token that a macro expansion produced
// has the position of the macro's name at the use site, and Macro names
// the outermost macro.
type Token struct {
	Kind  Kind
	Space bool // white space precedes it
	BOL   bool // first token of a logical line (only in files)
	Text  string
	// Pos is where the token is: the file's name as the preprocessor knows
	// it (the path it was opened by, or the name a #line gave it), the
	// 1-based line and byte column; Offset is unused.
	Pos   token.Position
	Macro string // the macro whose expansion produced it, or ""

	hide *hideset
}

// puncts are the multi-byte punctuators, longest first.
var puncts = []string{
	"%:%:", "<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "##", "<:", ":>", "<%", "%>", "%:",
}

func isLetter(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// lexer splits one file into tokens.
type lexer struct {
	src  string
	file string
	i    int
	line int
	col0 int // offset of the current line's start
	errs []*scanner.Error
}

// lex tokenizes src, the text of file. Comments become white space;
// backslash-newline joins lines. Every token that starts a logical line
// has BOL set.
func lex(file, src string) ([]Token, []*scanner.Error) {
	lx := &lexer{src: src, file: file, line: 1}
	toks := make([]Token, 0, len(src)/4) // about one token in four to six bytes of C
	bol, space := true, false
	for {
		sp, nl := lx.skipSpace()
		space = space || sp
		if nl {
			bol, space = true, false
			continue
		}
		if lx.i >= len(lx.src) {
			return toks, lx.errs
		}
		t := lx.next()
		t.BOL, t.Space = bol, space
		toks = append(toks, t)
		bol, space = false, false
	}
}

func (lx *lexer) pos() token.Position {
	return token.Position{Filename: lx.file, Line: lx.line, Column: lx.i - lx.col0 + 1}
}

func (lx *lexer) newline(at int) {
	lx.line++
	lx.col0 = at + 1
}

// skipSpace skips white space, comments and line splices. It stops after
// a newline, reporting it.
func (lx *lexer) skipSpace() (space, newline bool) {
	src := lx.src
	for lx.i < len(src) {
		c := src[lx.i]
		switch {
		case c == '\n':
			lx.newline(lx.i)
			lx.i++
			return space, true
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			lx.i++
		case lx.spliceLen(lx.i) > 0:
			lx.skipSplice()
		case c == '/' && lx.i+1 < len(src) && src[lx.i+1] == '/':
			for lx.i < len(src) && src[lx.i] != '\n' {
				if lx.spliceLen(lx.i) > 0 {
					lx.skipSplice()
					continue
				}
				lx.i++
			}
		case c == '/' && lx.i+1 < len(src) && src[lx.i+1] == '*':
			lx.blockComment()
		default:
			return space, false
		}
		space = true
	}
	return space, false
}

// spliceLen returns the length of a backslash-newline at i, or 0.
func (lx *lexer) spliceLen(i int) int {
	src := lx.src
	if src[i] != '\\' {
		return 0
	}
	switch {
	case i+1 < len(src) && src[i+1] == '\n':
		return 2
	case i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
		return 3
	}
	return 0
}

// skipSplice moves past the backslash-newline at lx.i.
func (lx *lexer) skipSplice() {
	lx.i += lx.spliceLen(lx.i)
	lx.newline(lx.i - 1)
}

func (lx *lexer) blockComment() {
	start := lx.pos()
	src := lx.src
	lx.i += 2
	for lx.i+1 < len(src) {
		if src[lx.i] == '*' && src[lx.i+1] == '/' {
			lx.i += 2
			return
		}
		if src[lx.i] == '\n' {
			lx.newline(lx.i)
		}
		lx.i++
	}
	lx.i = len(src)
	lx.errs = append(lx.errs, &scanner.Error{Pos: start, Msg: "unterminated /* comment"})
}

// next scans the token at lx.i, which is not white space.
func (lx *lexer) next() Token {
	src := lx.src
	p := lx.pos()
	start := lx.i
	c := src[lx.i]
	kind := Punct
	switch {
	case isLetter(c):
		kind = Ident
		for lx.i < len(src) && (isLetter(src[lx.i]) || isDigit(src[lx.i])) {
			lx.i++
		}
		if lx.i < len(src) && (src[lx.i] == '"' || src[lx.i] == '\'') && isEncodingPrefix(src[start:lx.i]) {
			kind = lx.quoted(src[lx.i])
		}
	case isDigit(c) || c == '.' && lx.i+1 < len(src) && isDigit(src[lx.i+1]):
		kind = Number
		lx.number()
	case c == '"' || c == '\'':
		kind = lx.quoted(c)
	default:
		n := 1
		for _, pu := range puncts {
			if strings.HasPrefix(src[lx.i:], pu) {
				n = len(pu)
				break
			}
		}
		if c < 0x20 || c == 0x7f || c == '`' || c == '@' || c == '$' || c == '\\' {
			kind = Other
		}
		lx.i += n
	}
	text := src[start:lx.i]
	if strings.Contains(text, "\\\n") || strings.Contains(text, "\\\r\n") {
		text = strings.NewReplacer("\\\r\n", "", "\\\n", "").Replace(text)
	}
	return Token{Kind: kind, Text: digraph(text), Pos: p}
}

func isEncodingPrefix(s string) bool {
	return s == "L" || s == "u" || s == "U" || s == "u8"
}

// digraph returns the spelling of a digraph's punctuator.
func digraph(s string) string {
	switch s {
	case "<:":
		return "["
	case ":>":
		return "]"
	case "<%":
		return "{"
	case "%>":
		return "}"
	case "%:":
		return "#"
	case "%:%:":
		return "##"
	}
	return s
}

func (lx *lexer) number() {
	src := lx.src
	for lx.i < len(src) {
		c := src[lx.i]
		switch {
		case isLetter(c) || isDigit(c) || c == '.':
			lx.i++
		case (c == '+' || c == '-') && strings.IndexByte("eEpP", src[lx.i-1]) >= 0:
			lx.i++
		case lx.spliceLen(lx.i) > 0:
			lx.skipSplice()
		default:
			return
		}
	}
}

// quoted scans a string literal or character constant opened by q.
func (lx *lexer) quoted(q byte) Kind {
	src := lx.src
	start := lx.pos()
	kind := String
	if q == '\'' {
		kind = Char
	}
	lx.i++
	for lx.i < len(src) {
		switch src[lx.i] {
		case q:
			lx.i++
			return kind
		case '\\':
			if lx.spliceLen(lx.i) > 0 {
				lx.skipSplice()
				continue
			}
			lx.i += 2
			continue
		case '\n':
			lx.errs = append(lx.errs, &scanner.Error{Pos: start, Msg: "missing terminating " + string(q) + " character"})
			return kind
		}
		lx.i++
	}
	lx.i = len(src)
	lx.errs = append(lx.errs, &scanner.Error{Pos: start, Msg: "missing terminating " + string(q) + " character"})
	return kind
}
