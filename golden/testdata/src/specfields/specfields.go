// Package specfields has kernel specs whose fields give launches their own
// values of specialization constants.
package specfields

import "github.com/dgen-go/dgen/rt"

//dgen:program source=s.cl
var S rt.Program

//dgen:specconst default=64 min=1 max=1024
var Dim rt.SpecConst[int32]

//dgen:specconst default=1.5
var Block rt.SpecConst[float32]

// r has the name of a parameter of the generated Enqueue.
//
//dgen:specconst default=1
var r rt.SpecConst[int32]

// Nearest gives Dim and Block, in fields between its arguments.
//
//dgen:kernel program=S name=nearest
type Nearest struct {
	Base  rt.Buffer[float32]
	Dim   rt.Spec[int32] `dgen:"spec"`
	Query rt.Buffer[float32]
	Best  rt.Buffer[int32] `dgen:"out"`
	N     int32
	Scale rt.Spec[float32] `dgen:"spec=Block"`
	R     rt.Spec[int32]   `dgen:"spec=r"`
}

// Plain launches the same kernel with the context's values.
//
//dgen:kernel program=S name=nearest
type Plain struct {
	Base, Query rt.Buffer[float32]
	Best        rt.Buffer[int32]
	N           int32
}

// use has values within the bounds, checked at generate time.
func use() []rt.Spec[int32] {
	n := Nearest{Dim: Dim.Of(128), Scale: Block.Of(2)}
	n.Dim = Dim.Of(1024)
	return []rt.Spec[int32]{n.Dim, Dim.Of(1)}
}
