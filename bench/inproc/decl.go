package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Hotspot is examples/stencil's device image.
//
//dgen:program source=step.cl options="-I../../examples/stencil"
var Hotspot rt.Program

// Step is one launch of the hotspot kernel, as in examples/stencil.
//
//dgen:kernel program=Hotspot name=hotspot
type Step struct {
	Iteration              int32
	Power, TempSrc         rt.Buffer[float32]
	TempDst                rt.Buffer[float32]
	Cols, Rows             int32
	BorderCols, BorderRows int32
	Cap, Rx, Ry, Rz, Dt    float32
}

// tempSite is where tagged mode allocates each step's output.
//
//dgen:alloc
var tempSite rt.AllocSite[float32]

// Word is a device global that no kernel uses: its Write and Read are
// measured against 4-byte blocking copies in C.
//
//dgen:global
var Word rt.DeviceGlobal[uint32]

// BumpProg is the device image of the spec family: a small kernel whose
// program uses the specialization constant Add.
//
//dgen:program source=bump.cl
var BumpProg rt.Program

// Add is what bump adds; the context's value is the default.
//
//dgen:specconst default=1 min=1 max=64
var Add rt.SpecConst[int32]

// Bump launches bump with the context's Add: the plain way.
//
//dgen:kernel program=BumpProg name=bump
type Bump struct {
	P rt.Buffer[int32]
}

// BumpAdd launches the same kernel with its own Add: the spec ways.
//
//dgen:kernel program=BumpProg name=bump
type BumpAdd struct {
	P   rt.Buffer[int32]
	Add rt.Spec[int32] `dgen:"spec"`
}
