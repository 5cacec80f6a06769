package rt

//go:generate go run ./internal/cmd/mkfacade

import "github.com/dgen-go/dgen/rt/internal/core"

// rt is a facade over rt/internal/core, its implementation, and
// zz_generated.facade.go is most of it: mkfacade writes it from the core's
// exported declarations and their doc comments (go generate ./rt; make
// test checks that it is fresh). What is here is what the core cannot
// say: rt's own types.

// Memory is device memory of any element type: an rt.Buffer, whichever
// its T. An Image1DBuffer's ImageDesc.Buffer takes it. Only rt implements
// it.
type Memory interface {
	memory() *core.Mem
}

// memory implements Memory.
func (b Buffer[T]) memory() *core.Mem { return core.BufferMem(core.Buffer[T](b)) }

// memOf returns the memory of m; nil for nil.
func memOf(m Memory) *core.Mem {
	if m == nil {
		return nil
	}
	return m.memory()
}

// memoryOf returns v, the core's ImageDesc.BufferValue, as the Memory it
// is; nil for none.
func memoryOf(v any) Memory {
	m, _ := v.(Memory)
	return m
}
