package codegen_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
)

// BenchmarkRegister100Programs measures the start-up cost that generated
// code adds per 100 programs: registering each with a 4 KiB source, and
// at first use, hashing the source as embedded to compare it with dgen's
// hash.
func BenchmarkRegister100Programs(b *testing.B) {
	const n = 100
	progs := make([]rt.Program, n)
	srcs := make([]string, n)
	for i := range srcs {
		srcs[i] = fmt.Sprintf("// program %d\n%s", i, strings.Repeat("__kernel void k(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n", 64))[:4096]
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, src := range srcs {
			name := fmt.Sprintf("p%d.cl", i)
			p := codegen.Register(&codegen.Program{Var: codegen.ProgramVar(&progs[i]), ID: fmt.Sprintf("%sP%d", pkg, i), Name: name, Image: src,
				Sources: []codegen.Source{{Name: name, Hash: xxhash.Sum64String(src), Embedded: src}}})
			if _, err := p.Built(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
