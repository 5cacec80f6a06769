package cpp

import (
	"fmt"
	"strconv"
	"strings"
)

// value is the value of an #if expression: intmax_t or uintmax_t.
type value struct {
	v        int64
	unsigned bool
}

func (v value) bool() bool { return v.v != 0 }

// evalIf evaluates the operand of #if or #elif (C99 6.10.1).
func (p *pp) evalIf(at Token, args []Token) bool {
	toks := p.replaceDefined(args)
	toks = p.expandAll(toks)
	toks = p.replaceDefined(toks) // defined produced by a macro, as GCC allows
	if len(toks) == 0 {
		p.errorf(at.Pos, "#%s with no expression", at.Text)
		return false
	}
	ev := &evaluator{toks: toks}
	v, err := ev.cond()
	if err == nil && ev.i < len(toks) {
		err = fmt.Errorf("unexpected %q in #%s expression", toks[ev.i].Text, at.Text)
	}
	if err != nil {
		p.errorf(at.Pos, "%v", err)
		return false
	}
	return v.bool()
}

// replaceDefined replaces "defined X" and "defined ( X )" by 1 or 0.
func (p *pp) replaceDefined(toks []Token) []Token {
	var out []Token
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != Ident || t.Text != "defined" {
			out = append(out, t)
			continue
		}
		j := i + 1
		paren := j < len(toks) && toks[j].Text == "("
		if paren {
			j++
		}
		if j >= len(toks) || toks[j].Kind != Ident || paren && (j+1 >= len(toks) || toks[j+1].Text != ")") {
			p.errorf(t.Pos, "operator \"defined\" requires an identifier")
			out = append(out, Token{Kind: Number, Text: "0", Pos: t.Pos})
			i = len(toks)
			continue
		}
		v := "0"
		if _, ok := p.macros[toks[j].Text]; ok {
			v = "1"
		}
		out = append(out, Token{Kind: Number, Text: v, Pos: t.Pos, Space: t.Space})
		i = j
		if paren {
			i++
		}
	}
	return out
}

type evaluator struct {
	toks  []Token
	i     int
	depth int // nesting of parentheses, unary operators and ?:
}

// maxNest is how deep an #if expression may nest, as clang's default
// -fbracket-depth: deeper input is refused rather than recursed into.
const maxNest = 256

// enter counts one level of nesting, failing past maxNest; leave undoes
// it.
func (ev *evaluator) enter() error {
	ev.depth++
	if ev.depth > maxNest {
		return fmt.Errorf("#if expression nested more than %d deep", maxNest)
	}
	return nil
}

func (ev *evaluator) leave() { ev.depth-- }

func (ev *evaluator) peek() string {
	if ev.i < len(ev.toks) && ev.toks[ev.i].Kind == Punct {
		return ev.toks[ev.i].Text
	}
	return ""
}

// cond parses a conditional expression; the comma operator is not
// allowed in an #if (C99 6.6p3).
func (ev *evaluator) cond() (value, error) {
	defer ev.leave()
	if err := ev.enter(); err != nil {
		return value{}, err
	}
	c, err := ev.binary(0)
	if err != nil || ev.peek() != "?" {
		return c, err
	}
	ev.i++
	a, err := ev.cond()
	if err != nil {
		return a, err
	}
	if ev.peek() != ":" {
		return a, fmt.Errorf("expected ':' in conditional expression")
	}
	ev.i++
	b, err := ev.cond()
	if err != nil {
		return b, err
	}
	unsigned := a.unsigned || b.unsigned
	if c.bool() {
		return value{a.v, unsigned}, nil
	}
	return value{b.v, unsigned}, nil
}

// precedence of the binary operators, loosest first.
var precedence = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
	"<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

// binary parses operators of precedence above min by precedence climbing.
func (ev *evaluator) binary(min int) (value, error) {
	l, err := ev.unary()
	if err != nil {
		return l, err
	}
	for {
		op := ev.peek()
		prec, ok := precedence[op]
		if !ok || prec <= min {
			return l, nil
		}
		ev.i++
		r, err := ev.binary(prec)
		if err != nil {
			return r, err
		}
		l, err = apply(op, l, r)
		if err != nil {
			return l, err
		}
	}
}

func b2v(b bool) value {
	if b {
		return value{v: 1}
	}
	return value{}
}

// apply applies a binary operator with the usual arithmetic conversions.
func apply(op string, l, r value) (value, error) {
	switch op {
	case "||":
		return b2v(l.bool() || r.bool()), nil
	case "&&":
		return b2v(l.bool() && r.bool()), nil
	case "<<", ">>":
		return shift(op, l, r), nil
	}
	u := l.unsigned || r.unsigned
	a, b := l.v, r.v
	switch op {
	case "==":
		return b2v(a == b), nil
	case "!=":
		return b2v(a != b), nil
	case "<", ">", "<=", ">=":
		return compare(op, a, b, u), nil
	case "/", "%":
		if b == 0 {
			return value{}, fmt.Errorf("division by zero in #if")
		}
		return divide(op, a, b, u), nil
	}
	var v int64
	switch op {
	case "|":
		v = a | b
	case "^":
		v = a ^ b
	case "&":
		v = a & b
	case "+":
		v = a + b
	case "-":
		v = a - b
	case "*":
		v = a * b
	}
	return value{v, u}, nil
}

func shift(op string, l, r value) value {
	n := uint64(r.v) & 63
	if op == ">>" {
		if l.unsigned {
			return value{int64(uint64(l.v) >> n), true}
		}
		return value{l.v >> n, false}
	}
	return value{int64(uint64(l.v) << n), l.unsigned}
}

func compare(op string, a, b int64, unsigned bool) value {
	var lt, eq bool
	if unsigned {
		lt, eq = uint64(a) < uint64(b), a == b
	} else {
		lt, eq = a < b, a == b
	}
	switch op {
	case "<":
		return b2v(lt)
	case ">":
		return b2v(!lt && !eq)
	case "<=":
		return b2v(lt || eq)
	}
	return b2v(!lt)
}

func divide(op string, a, b int64, unsigned bool) value {
	if unsigned {
		if op == "/" {
			return value{int64(uint64(a) / uint64(b)), true}
		}
		return value{int64(uint64(a) % uint64(b)), true}
	}
	if b == -1 { // avoid the overflow trap of MinInt64 / -1
		if op == "/" {
			return value{-a, false}
		}
		return value{0, false}
	}
	if op == "/" {
		return value{a / b, false}
	}
	return value{a % b, false}
}

func (ev *evaluator) unary() (value, error) {
	defer ev.leave()
	if err := ev.enter(); err != nil {
		return value{}, err
	}
	if ev.i >= len(ev.toks) {
		return value{}, fmt.Errorf("#if expression ends early")
	}
	t := ev.toks[ev.i]
	ev.i++
	switch {
	case t.Kind == Punct && (t.Text == "+" || t.Text == "-" || t.Text == "~" || t.Text == "!"):
		v, err := ev.unary()
		switch t.Text {
		case "-":
			v.v = -v.v
		case "~":
			v.v = ^v.v
		case "!":
			v = b2v(!v.bool())
		}
		return v, err
	case t.Kind == Punct && t.Text == "(":
		v, err := ev.cond()
		if err != nil {
			return v, err
		}
		if ev.peek() != ")" {
			return v, fmt.Errorf("missing ')' in #if expression")
		}
		ev.i++
		return v, nil
	case t.Kind == Number:
		return parseInt(t.Text)
	case t.Kind == Char:
		return parseChar(t.Text)
	case t.Kind == Ident:
		return value{}, nil // an identifier that is no macro is 0
	}
	return value{}, fmt.Errorf("unexpected %q in #if expression", t.Text)
}

// parseInt parses an integer constant with its suffixes.
func parseInt(s string) (value, error) {
	digits := strings.TrimRight(s, "uUlL")
	suffix := strings.ToLower(s[len(digits):])
	unsigned := strings.Contains(suffix, "u")
	if strings.Count(suffix, "u") > 1 || strings.Count(suffix, "l") > 2 {
		return value{}, fmt.Errorf("invalid integer constant %s in #if", s)
	}
	base := 10
	switch {
	case strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0X"):
		base, digits = 16, digits[2:]
	case strings.HasPrefix(digits, "0b") || strings.HasPrefix(digits, "0B"):
		base, digits = 2, digits[2:]
	case len(digits) > 1 && digits[0] == '0':
		base, digits = 8, digits[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return value{}, fmt.Errorf("invalid integer constant %s in #if", s)
	}
	if n > 1<<63-1 {
		unsigned = true
	}
	return value{int64(n), unsigned}, nil
}

// parseChar parses a character constant.
func parseChar(s string) (value, error) {
	i := strings.IndexByte(s, '\'')
	if i < 0 || len(s) < i+2 || !strings.HasSuffix(s, "'") {
		return value{}, fmt.Errorf("invalid character constant %s in #if", s)
	}
	body := s[i+1 : len(s)-1]
	if body == "" {
		return value{}, fmt.Errorf("empty character constant in #if")
	}
	r, _, _, err := strconv.UnquoteChar(body, '\'')
	if err != nil {
		return value{}, fmt.Errorf("invalid character constant %s in #if", s)
	}
	return value{v: int64(int8(r))}, nil
}
