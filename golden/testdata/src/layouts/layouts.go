// Package layouts has Go structs that do not match the OpenCL C structs of
// their kernels' parameters.
package layouts

import "github.com/dgen-go/dgen/rt"

//dgen:program source=layouts.cl
var L rt.Program

// Particle matches by position: dgen compares layouts, not names.
type Particle struct{ X, Y float32 }

//dgen:kernel program=L name=particles
type Particles struct{ P rt.Buffer[Particle] }

type Swapped struct {
	A float32
	B int32
}

//dgen:kernel program=L name=swapped
type SwappedK struct{ S rt.Buffer[Swapped] }

type Vec3 struct{ X float32 }

//dgen:kernel program=L name=vec3
type Vec3K struct{ V rt.Buffer[Vec3] }

type Node struct {
	Starting  int64
	NoOfEdges int32
}

//dgen:kernel program=L name=nodes
type NodesK struct{ N rt.Buffer[Node] }

type Aligned struct {
	W float32
	V [4]float32
}

//dgen:kernel program=L name=aligned
type AlignedK struct{ A Aligned }

type V3 struct{ P [3]float32 }

//dgen:kernel program=L name=v3
type V3K struct{ V rt.Buffer[V3] }

type Outer struct {
	C  int8
	In Swapped
}

//dgen:kernel program=L name=outer
type OuterK struct{ O rt.Buffer[Outer] }

type GoodNode struct{ Starting, NoOfEdges int32 }

type Nodes struct{ Nodes [3]GoodNode }

//dgen:kernel program=L name=arrays
type ArraysK struct{ N rt.Buffer[Nodes] }

type Packed struct {
	C int8
	A int32
}

//dgen:kernel program=L name=packed
type PackedK struct{ P rt.Buffer[Packed] }

type HasBool struct {
	A int32
	B bool
}

//dgen:kernel program=L name=hasbool
type HasBoolK struct{ H rt.Buffer[HasBool] }
