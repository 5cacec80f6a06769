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
// code adds per 100 programs: registering each with a 4 KiB source and
// hashing the source as embedded to compare it with dgen's hash.
func BenchmarkRegister100Programs(b *testing.B) {
	const n = 100
	progs := make([]rt.Program, n)
	infos := make([]codegen.Program, n)
	for i := range infos {
		src := fmt.Sprintf("// program %d\n%s", i, strings.Repeat("__kernel void k(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n", 64))[:4096]
		name := fmt.Sprintf("p%d.cl", i)
		infos[i] = codegen.Program{ID: fmt.Sprintf("%sP%d", pkg, i), Name: name, Image: src,
			Sources: []codegen.Source{{Name: name, Hash: xxhash.Sum64String(src), Embedded: src}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range infos {
			codegen.RegisterProgram(&progs[i], infos[i])
		}
	}
}
