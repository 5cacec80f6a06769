// Package kinds has globals of every element kind and a kernel with every
// argument kind.
package kinds

import "github.com/dgen-go/dgen/rt"

// Point is a struct element.
type Point struct {
	X float32
	Y int32
}

//dgen:global
var Scale rt.DeviceGlobal[float32]

//dgen:global
var B8 rt.DeviceGlobal[uint8]

//dgen:global
var I16 rt.DeviceGlobal[int16]

//dgen:global
var U64 rt.DeviceGlobal[uint64]

//dgen:global
var I64 rt.DeviceGlobal[int64]

//dgen:global
var D rt.DeviceGlobal[float64]

//dgen:global
var Vec rt.DeviceGlobal[[4]float32]

//dgen:global host_access=write
var Pt rt.DeviceGlobal[Point]

//dgen:program source=k.cl options="-cl-fast-relaxed-math"
var K rt.Program

//dgen:kernel program=K name=all
type All struct {
	A    rt.Buffer[float32] `dgen:"out"`
	B    rt.Buffer[int32]
	C    rt.Buffer[uint32]
	Tile rt.Local[float32]
	I    int32
	U    uint32
	L    int64
	UL   uint64
	F    float32
	D    float64
	Ch   int8
	UC   uint8
	S    int16
	US   uint16
	V4   [4]float32
	V3   [4]float32
}

//dgen:alloc
var site rt.AllocSite[float32]

//dgen:specconst
var Block rt.SpecConst[int32]

//dgen:specconst default=16
var Width rt.SpecConst[uint32]

//dgen:specconst default=-0.5
var Gain rt.SpecConst[float32]

//dgen:specconst default=-9223372036854775808
var Least rt.SpecConst[int64]
