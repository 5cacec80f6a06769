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
		{"struct", strings.Repeat("struct a { ", n) + strings.Repeat("}; ", n), "brackets nested more than 256 deep"},
		{"params", "__kernel void k(" + strings.Repeat("(", n) + strings.Repeat(")", n) + ") {}", "brackets nested more than 256 deep"},
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
