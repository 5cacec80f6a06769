// Package badimages binds image and sampler parameters to the wrong fields.
package badimages

import "github.com/dgen-go/dgen/rt"

//dgen:program source=bad.cl
var P rt.Program

//dgen:kernel program=P name=k
type WrongKind struct {
	A rt.Image3D
	S rt.Sampler
	B rt.Image3D
	P rt.Buffer[float32]
	C rt.Image2D
}

//dgen:kernel program=P name=k
type NotImages struct {
	A float32
	S rt.Image2D
	B rt.Buffer[float32]
	P rt.Image2D
	C rt.Image2DArray
}

//dgen:alloc
var site rt.AllocSite[rt.Sampler]
