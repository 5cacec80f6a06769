package clsrc

import (
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen/internal/cpp"
)

// TestDeepNesting feeds nesting far beyond any real source: each is
// refused with one error rather than recursed into (a deep enough input
// would exhaust the goroutine's stack, which no recover catches).
func TestDeepNesting(t *testing.T) {
	const n = 5000
	tests := []struct{ name, src, want string }{
		{"if parens", "#if " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n#endif\n", "#if expression nested more than 256 deep"},
		{"if unary", "#if " + strings.Repeat("- ", n) + "1\n#endif\n", "#if expression nested more than 256 deep"},
		{"if ternary", "#if " + strings.Repeat("1?", n) + "1" + strings.Repeat(":1", n) + "\n#endif\n", "#if expression nested more than 256 deep"},
		{"struct", strings.Repeat("struct a { ", n) + strings.Repeat("}; ", n), "braces nested more than 256 deep"},
		{"params", "__kernel void k(" + strings.Repeat("(", n) + strings.Repeat(")", n) + ") {}", "parentheses nested more than 256 deep"},
		{"subscripts", "__kernel void k(__global int *a) { a" + strings.Repeat("[a", n) + "[0" + strings.Repeat("]", n+1) + "; }", "square brackets nested more than 256 deep"},
		{"pointer", "__kernel void k(int " + strings.Repeat("*", n) + "a) {}", "pointer declarator nested more than 256 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cpp.Preprocess(&cpp.Config{}, "k.cl", []byte(tt.src))
			errs := append(r.Errors, ParseUnit(r.Tokens).Errors...)
			if len(errs) != 1 || !strings.Contains(errs[0].Msg, tt.want) {
				t.Errorf("errors %v, want one: %s", errs, tt.want)
			}
		})
	}
}

// TestNestingPerKind checks that the nesting limit counts each kind of
// bracket on its own, as clang's -fbracket-depth does: 200 parentheses
// inside 200 braces (and 200 square brackets) are accepted, one more of a
// kind past 256 is not.
func TestNestingPerKind(t *testing.T) {
	const n = 200
	parens := strings.Repeat("(", n) + "1" + strings.Repeat(")", n)
	tests := []struct{ name, src, want string }{
		{"parens in braces", "__kernel void k(__global int *a) " + strings.Repeat("{", n) + " a[0] = " + parens + "; " + strings.Repeat("}", n), ""},
		{"all three", "__kernel void k(__global int *a) " + strings.Repeat("{", n) + " a" + strings.Repeat("[a", n) + "[0" + strings.Repeat("]", n+1) + " = " + parens + "; " + strings.Repeat("}", n), ""},
		{"257 parens in braces", "__kernel void k(__global int *a) " + strings.Repeat("{", n) + " a[0] = " + strings.Repeat("(", 257) + "1" + strings.Repeat(")", 257) + "; " + strings.Repeat("}", n), "parentheses nested more than 256 deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cpp.Preprocess(&cpp.Config{}, "k.cl", []byte(tt.src))
			u := ParseUnit(r.Tokens)
			errs := append(r.Errors, u.Errors...)
			switch {
			case tt.want == "" && (len(errs) > 0 || u.Kernel("k") == nil):
				t.Errorf("errors %v (kernel k found: %v), want none", errs, u.Kernel("k") != nil)
			case tt.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Msg, tt.want)):
				t.Errorf("errors %v, want one: %s", errs, tt.want)
			}
		})
	}
}
