package cpp

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

// spellAll returns the tokens' texts joined by single spaces.
func spellAll(toks []Token) string {
	var ws []string
	for _, t := range toks {
		if t.Kind == Pragma {
			continue
		}
		ws = append(ws, t.Text)
	}
	return strings.Join(ws, " ")
}

// norm tokenizes text and joins it by single spaces.
func norm(t *testing.T, text string) string {
	toks, errs := lex("want", text)
	if len(errs) > 0 {
		t.Fatalf("bad expected text: %v", errs[0])
	}
	return spellAll(toks)
}

func run(src string, files map[string]string, defs ...Define) *Result {
	cfg := &Config{Defines: defs, IncludeDirs: []string{"inc"}, ReadFile: func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}}
	return Preprocess(cfg, "main.cl", []byte(src))
}

func TestPreprocess(t *testing.T) {
	tests := []struct {
		name, src, want string
		files           map[string]string
		defs            []Define
	}{
		// C99 6.10.3.5, example 3.
		{name: "c99 example 3", src: `#define x 3
#define f(a) f(x * (a))
#undef x
#define x 2
#define g f
#define z z[0]
#define h g(~
#define m(a) a(w)
#define w 0,1
#define t(a) a
#define p() int
#define q(x) x
#define r(x,y) x ## y
#define str(x) # x
f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);
g(x+(3,4)-w) | h 5) & m
(f)^m(m);
p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };
char c[2][6] = { str(hello), str() };
`, want: `f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);
f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))^m(0,1);
int i[] = { 1, 23, 4, 5, };
char c[2][6] = { "hello", "" };`},
		// C99 6.10.3.5, example 4 (without its #include).
		{name: "c99 example 4", src: `#define str(s) # s
#define xstr(s) str(s)
#define debug(s, t) printf("x" # s "= %d, x" # t "= %s", \
 x ## s, x ## t)
#define INCFILE(n) vers ## n
#define glue(a, b) a ## b
#define xglue(a, b) glue(a, b)
#define HIGHLOW "hello"
#define LOW LOW ", world"
debug(1, 2);
fputs(str(strncmp("abc\0d", "abc", '\4') // this goes away
 == 0) str(: @\n), s);
xstr(INCFILE(2).h)
glue(HIGH, LOW);
xglue(HIGH, LOW)
`, want: `printf("x" "1" "= %d, x" "2" "= %s", x1, x2);
fputs("strncmp(\"abc\\0d\", \"abc\", '\\4') == 0" ": @\n", s);
"vers2.h"
"hello";
"hello" ", world"`},
		// C99 6.10.3.5, example 5.
		{name: "c99 example 5", src: `#define t(x,y,z) x ## y ## z
int j[] = { t(1,2,3), t(,4,5), t(6,,7), t(8,9,),
 t(10,,), t(,11,), t(,,12), t(,,) };
`, want: `int j[] = { 123, 45, 67, 89, 10, 11, 12, };`},
		// C99 6.10.3.5, example 7.
		{name: "c99 example 7", src: `#define debug(...) fprintf(stderr, __VA_ARGS__)
#define showlist(...) puts(#__VA_ARGS__)
#define report(test, ...) ((test)?puts(#test):\
 printf(__VA_ARGS__))
debug("Flag");
debug("X = %d\n", x);
showlist(The first, second, and third items.);
report(x>y, "x is %d but y is %d", x, y);
`, want: `fprintf(stderr, "Flag" );
fprintf(stderr, "X = %d\n", x );
puts( "The first, second, and third items." );
((x>y)?puts("x>y"): printf("x is %d but y is %d", x, y));`},
		{name: "conditionals", src: `#define A 2
#if A > 1 && defined(A) && !defined B
yes1
#elif 1
no1
#else
no2
#endif
#ifdef B
no3
#elif (A << 3) == 16 ? 1 : 0
yes2
#endif
#ifndef A
no4
#else
yes3
#endif
#if 0
#if garbage (
#endif
#error not reached
#endif
#if -1 < 0u
no5
#endif
#if 'a' == 97 && 0x10 == 020 && 10 / 3 == 3 && -7 % 3 == -1
yes4
#endif
`, want: `yes1 yes2 yes3 yes4`},
		{name: "include and guard", src: `#include "a.h"
#include <b.h>
#include "a.h"
A B
`, files: map[string]string{"a.h": "#ifndef A_H\n#define A_H\n#define A 1\n#endif\n", "inc/b.h": "#pragma once\n#define B 2\n"},
			want: `1 2`},
		{name: "options", src: "X Y Z __OPENCL_VERSION__\n", defs: append(OpenCL(), Define{Name: "X", Value: "1"}, Define{Name: "Y"}, Define{Name: "Z", Value: "1"}, Define{Name: "Z", Undef: true}),
			want: `1 Z 120`},
		{name: "self reference", src: "#define foo foo a\n#define a b foo\nfoo\n", want: `foo b foo`},
		{name: "macro kernel", src: "#define K(name, T) __kernel void name(__global T* p) { p[0] = 0; }\nK(copy_f, float)\n",
			want: `__kernel void copy_f(__global float* p) { p[0] = 0; }`},
		{name: "gnu comma", src: "#define e(fmt, ...) f(fmt, ## __VA_ARGS__)\ne(a) e(a, b)\n", want: `f(a) f(a, b)`},
		{name: "line", src: "#line 100 \"x.cl\"\n__LINE__ __FILE__\n", want: `100 "x.cl"`},
		{name: "function-like without parens", src: "#define f(x) x\nf + f\n(1)\n", want: `f + 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(tt.src, tt.files, tt.defs...)
			if len(r.Errors) > 0 {
				t.Fatalf("errors: %v", r.Errors)
			}
			if got, want := spellAll(r.Tokens), norm(t, tt.want); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"#error stop here\n", "main.cl:1:1: #error stop here"},
		{"#if 1\nx\n", "main.cl:1:2: unterminated conditional directive"},
		{"#endif\n", "main.cl:1:2: #endif without #if"},
		{"#include \"none.h\"\n", "main.cl:1:1: #include: none.h: file not found"},
		{"#define f(a) a\nf(1\n", "main.cl:2:1: unterminated argument list invoking macro f"},
		{"#define f(a, b) a\nf(1)\n", "main.cl:2:1: macro f requires 2 arguments, but only 1 given"},
		{"#if 1 / 0\n#endif\n", "main.cl:1:2: division by zero in #if"},
		{"#define a ## b\n", "main.cl:1:11: '##' cannot be at either end of a macro's replacement list"},
		{"#define s(x) #y\n", "main.cl:1:14: '#' is not followed by a macro parameter"},
		{"#frob\n", "main.cl:1:2: invalid preprocessing directive #frob"},
		{"#define c(a,b) a##b\nc(+,/)\n", `main.cl:2:1: pasting "+" and "/" does not give a valid preprocessing token`},
		{"/* open\n", "main.cl:1:1: unterminated /* comment"},
		{"#if defined(\n#endif\n", `main.cl:1:5: operator "defined" requires an identifier`},
	}
	for _, tt := range tests {
		r := run(tt.src, nil)
		if len(r.Errors) == 0 || r.Errors[0].Error() != tt.want {
			t.Errorf("%q: got %v, want %s", tt.src, r.Errors, tt.want)
		}
	}
	r := run("#include \"none.h\"\n", nil)
	var found bool
	for _, e := range r.Errors {
		found = found || strings.Contains(e.Msg, ErrNotFound.Error())
	}
	if !found || !errors.Is(ErrNotFound, ErrNotFound) {
		t.Errorf("missing include: %v", r.Errors)
	}
}

func TestPositions(t *testing.T) {
	files := map[string]string{"h.h": "\n#define G(x) (x + glob)\nint hv;\n"}
	r := run("#include \"h.h\"\nint a = G(\n  1);\n", files)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	got := map[string]string{}
	for _, tok := range r.Tokens {
		got[tok.Text] = tok.Pos.String() + " " + tok.Macro
	}
	want := map[string]string{"hv": "h.h:3:5 ", "a": "main.cl:2:5 ", "glob": "main.cl:2:9 G", "1": "main.cl:2:9 G"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s at %q, want %q", k, got[k], w)
		}
	}
	if len(r.Includes) != 1 || r.Includes[0].Path != "h.h" || r.Includes[0].Line != 1 {
		t.Errorf("includes: %+v", r.Includes)
	}
	if chain := r.IncludedFrom("h.h"); len(chain) != 1 || chain[0].String() != "main.cl:1:1" {
		t.Errorf("included from %v", chain)
	}
}

func TestParseOptions(t *testing.T) {
	defs, dirs, err := ParseOptions(`-cl-mad-enable -DA=1 -D B -U C -I inc -I"my dir" '-DD=a b' -DE="x\"y"`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Define{{Name: "A", Value: "1"}, {Name: "B", Value: "1"}, {Name: "C", Undef: true}, {Name: "D", Value: "a b"}, {Name: "E", Value: `x"y`}}
	if len(defs) != len(want) {
		t.Fatalf("defines %+v", defs)
	}
	for i := range want {
		if defs[i] != want[i] {
			t.Errorf("define %d: %+v, want %+v", i, defs[i], want[i])
		}
	}
	if strings.Join(dirs, "|") != "inc|my dir" {
		t.Errorf("dirs %q", dirs)
	}
	for _, bad := range []string{`-DA="x`, "-cl-std=CL9.9", "-cl-std", "mad", "-D", "-D -cl-mad-enable", "-D1X", "-U", "-DA-B=1", "-I"} {
		if _, _, err := ParseOptions(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	for _, good := range []string{"-cl-std=CL1.2 -cl-nv-verbose -w", "-DF(x)=x -DN=-1", "-D N=-1"} {
		if _, _, err := ParseOptions(good); err != nil {
			t.Errorf("%s: %v", good, err)
		}
	}
}

func FuzzPreprocess(f *testing.F) {
	for _, s := range []string{
		"#define f(a) f(x * (a))\nf(f(1))\n",
		"#define s(x) #x\n#define c(a,b) a##b\ns(c(1,2)) c(,)\n",
		"#if defined(X) || (1 ? 2 : 3) << 2\n#elif\n#else\n#endif\n",
		"#define v(...) __VA_ARGS__\nv(1,2,3) v()\n",
		"#include \"self.cl\"\n", "#line 7 \"a\"\n__LINE__", "'\\", "#define f(x) #\n", "\"abc",
	} {
		f.Add(s)
	}
	f.Add("#define A0 x x\n#define A1 A0 A0\n#define A2 A1 A1\nA2 A2\n")
	f.Add("#define f(x) x x\nf(f(f(1)))\n")
	f.Add("#include __FILE__\n#include __FILE__\n")
	f.Fuzz(func(t *testing.T, src string) {
		files := map[string]string{"self.cl": src, "main.cl": src}
		r := runBudget(src, files, fuzzBudget)
		// The budget bounds the output (and so the time and memory): a
		// macro bomb or an include that multiplies stops at it.
		if len(r.Tokens) > fuzzBudget {
			t.Fatalf("%d tokens out, budget %d", len(r.Tokens), fuzzBudget)
		}
	})
}

// fuzzBudget is the preprocessor's budget under the fuzzer, small so that
// an input that multiplies shows quickly.
const fuzzBudget = 1 << 14

func runBudget(src string, files map[string]string, budget int) *Result {
	cfg := &Config{MaxTokens: budget, IncludeDirs: []string{"inc"}, ReadFile: func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}}
	return Preprocess(cfg, "main.cl", []byte(src))
}

// TestBudget feeds inputs that multiply without end: each stops with one
// error at its place, in bounded time and memory.
func TestBudget(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("#define L0 x\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&bomb, "#define L%d L%d L%d\n", i, i-1, i-1)
	}
	bomb.WriteString("__kernel void k(void) { L60; }\n")
	var fbomb strings.Builder
	fbomb.WriteString("#define F0(x) x x\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&fbomb, "#define F%d(x) F%d(F%d(x))\n", i, i-1, i-1)
	}
	fbomb.WriteString("F60(y)\n")
	tests := []struct {
		name, src, want string
	}{
		{"object-like", bomb.String(), "main.cl:62:25: expanding macro L60 (defined at main.cl:61:9) exceeds the preprocessor's budget of 100000 tokens"},
		{"function-like", fbomb.String(), "main.cl:62:1: expanding macro"},
		{"include twice", "#include __FILE__\n#include \"main.cl\"\n", "main.cl:1:1: #include cycle: main.cl includes main.cl, which is being read (main.cl → main.cl): dgen follows no recursive #include"},
		{"include fan-out", "#include \"a.h\"\n", "b.h:1:1: #include cycle: b.h includes a.h, which is being read (a.h → b.h → a.h)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"main.cl": tt.src, "a.h": "#include \"b.h\"\n", "b.h": "#include \"a.h\"\n"}
			r := runBudget(tt.src, files, 100000)
			if len(r.Errors) != 1 || !strings.HasPrefix(r.Errors[0].Error(), tt.want) {
				t.Fatalf("errors %v, want one starting %q", r.Errors, tt.want)
			}
			if len(r.Tokens) > 100000 {
				t.Errorf("%d tokens out", len(r.Tokens))
			}
		})
	}
}

// TestGuards checks which extensions the code of each line needs.
func TestGuards(t *testing.T) {
	src := `#if defined(cl_khr_fp16)
#define HALF_AVAILABLE
#endif
#ifdef HALF_AVAILABLE
int half_line;
#endif
#if defined(cl_amd_fp64) || defined(cl_khr_fp64)
int double_line;
# if defined(cl_khr_subgroups)
int both_line;
# endif
#endif
#ifndef cl_khr_3d_image_writes
int never;
#else
int images_line;
#endif
int plain_line;
`
	r := run(src, nil, OpenCL()...)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	want := map[string]string{
		"half_line":   "cl_khr_fp16",
		"double_line": "cl_amd_fp64|cl_khr_fp64",
		"both_line":   "cl_amd_fp64|cl_khr_fp64 cl_khr_subgroups",
		"images_line": "cl_khr_3d_image_writes",
		"plain_line":  "",
	}
	for _, tok := range r.Tokens {
		if w, ok := want[tok.Text]; ok {
			if got := strings.Join(r.NeedsAt(tok.Pos), " "); got != w {
				t.Errorf("%s needs %q, want %q", tok.Text, got, w)
			}
			delete(want, tok.Text)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing %v", want)
	}
}

// TestBudgetDefault runs the 60-level bomb under the default budget,
// which must stop it well under a second and a gigabyte.
func TestBudgetDefault(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("#define L0 x\n")
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&bomb, "#define L%d L%d L%d\n", i, i-1, i-1)
	}
	bomb.WriteString("L60\n")
	r := run(bomb.String(), nil)
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Msg, "budget") {
		t.Fatalf("errors %v", r.Errors)
	}
}
