package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Mix is the device image: mix.cl.
//
//dgen:program source=mix.cl
var Mix rt.Program

// K is the constant that every launch gives its own value of, or leaves
// to the context (the default 1); Tune times its candidates.
//
//dgen:specconst default=1 min=1 max=1024 tune="2,3,4,5"
var K rt.SpecConst[int32]

// Launch is one launch of the kernel, with its own K or, zero, the
// context's.
//
//dgen:kernel program=Mix name=spec_mix
type Launch struct {
	Out rt.Buffer[int32]
	K   rt.Spec[int32] `dgen:"spec"`
}
