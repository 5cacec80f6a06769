// Package memberattrs has Go structs laid out as OpenCL C would lay out
// their structs if it ignored the attributes after a member's name.
package memberattrs

import "github.com/dgen-go/dgen/rt"

//dgen:program source=memberattrs.cl
var L rt.Program

type AlignedAfter struct{ A, B int32 }

//dgen:kernel program=L name=after
type After struct{ P rt.Buffer[AlignedAfter] }

type PackedMember struct {
	C int8
	_ [3]byte
	X int32
}

//dgen:kernel program=L name=packedmember
type PackedMemberK struct{ P rt.Buffer[PackedMember] }

type AlignedTypedef struct{ A, B int32 }

//dgen:kernel program=L name=typedefd
type Typedefd struct{ P rt.Buffer[AlignedTypedef] }

type Wide struct{ X float32 }

type Wide2 struct{ X float32 }

//dgen:kernel program=L name=wide
type WideK struct {
	W  rt.Buffer[Wide]
	W2 rt.Buffer[Wide2]
}
