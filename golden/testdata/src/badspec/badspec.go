// Package badspec has one of each mistake of a specialization-constant
// field, and of a constant value outside its bounds.
package badspec

import "github.com/dgen-go/dgen/rt"

//dgen:program source=s.cl
var S rt.Program

//dgen:specconst default=64 min=1 max=1024
var Dim rt.SpecConst[int32]

//dgen:specconst default=2
var Block rt.SpecConst[int32]

//dgen:specconst default=3
var Unused rt.SpecConst[int32]

//dgen:kernel program=S name=k
type Missing struct {
	Out rt.Buffer[int32]
	N   int32
	D   rt.Spec[int32] `dgen:"spec=Nope"`
}

//dgen:kernel program=S name=k
type WrongType struct {
	Out rt.Buffer[int32]
	N   int32
	D   rt.Spec[int64] `dgen:"spec=Dim"`
	B   int32          `dgen:"spec=Block"`
}

//dgen:kernel program=S name=k
type NotUsed struct {
	Out    rt.Buffer[int32]
	N      int32
	Unused rt.Spec[int32] `dgen:"spec"`
}

//dgen:kernel program=S name=k
type Twice struct {
	Out rt.Buffer[int32]
	N   int32
	A   rt.Spec[int32] `dgen:"spec=Dim"`
	B   rt.Spec[int32] `dgen:"spec=Dim"`
}

//dgen:kernel program=S name=k
type Untagged struct {
	Out rt.Buffer[int32]
	N   int32
	D   rt.Spec[int32]
}

//dgen:kernel program=S name=k
type BadTag struct {
	Out rt.Buffer[int32]
	N   int32
	D   rt.Spec[int32] `dgen:"spec=1x"`
}

//dgen:kernel program=S name=k
type Count struct {
	Out rt.Buffer[int32]
	D   rt.Spec[int32] `dgen:"spec=Dim"`
}

//dgen:kernel program=S name=k
type Good struct {
	Out rt.Buffer[int32]
	N   int32
	Dim rt.Spec[int32] `dgen:"spec"`
}

func use(ctx *rt.Context) {
	_ = Good{Dim: Dim.Of(2000)}
	_ = Good{Dim: Block.Of(4)}
	var g Good
	g.Dim = Block.Of(4)
	g.Dim = Dim.Of(0)
	_ = Dim.Set(ctx, -1)
	_ = Dim.Set(ctx, 1024)
}
