// Package initorder checks that generated registration precedes the
// package's own init functions: this file sorts before
// zz_generated.dgen.go, and its init opens a context, writes a device
// global and launches a generated kernel.
package initorder

import (
	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Prog holds the kernel.
//
//dgen:program source=add.cl
var Prog rt.Program

// Base is added to every element.
//
//dgen:global
var Base rt.DeviceGlobal[int32]

// Add adds Base to each element of Out.
//
//dgen:kernel program=Prog name=add_base
type Add struct {
	Out rt.Buffer[int32]
}

// Results of the init function, for the test.
var (
	InitErr error
	InitOut []int32
)

// VarOut and VarErr are what a package-level variable initializer in this
// file, which sorts before the generated one, computes: it launches Add,
// so Go initializes Add's registration, and those of its program and of
// Base, first.
var VarOut, VarErr = run()

func init() {
	InitOut, InitErr = run()
}

// run opens a context on the CPU device, writes Base and adds it to a
// buffer of zeros.
func run() ([]int32, error) {
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	q := ctx.Queue()
	if err := Base.Write(q, 7); err != nil {
		return nil, err
	}
	out, err := rt.NewBuffer[int32](ctx, 4)
	if err != nil {
		return nil, err
	}
	defer out.Free()
	if err := out.Write(q, make([]int32, 4)); err != nil {
		return nil, err
	}
	ev, err := (&Add{Out: out}).EnqueueEvent(q, rt.Range1(4))
	if err != nil {
		return nil, err
	}
	defer ev.Release()
	got := make([]int32, 4)
	if err := out.Read(q, got, ev); err != nil {
		return nil, err
	}
	return got, nil
}
