// Package images has kernels with every kind of image, samplers as
// parameters and as constants, a read_write image and an allocation site of
// images.
package images

import "github.com/dgen-go/dgen/rt"

//dgen:program source=images.cl
var Images rt.Program

//dgen:kernel program=Images name=blur
type Blur struct {
	In  rt.Image2D
	S   rt.Sampler
	Out rt.Image2D
}

//dgen:kernel program=Images name=kinds
type Kinds struct {
	A rt.Image1D
	B rt.Image1DBuffer
	C rt.Image1DArray
	D rt.Image2D
	E rt.Image2DArray
	F rt.Image3D
	G rt.Buffer[float32]
}

//dgen:kernel program=Images name=rw
type RW struct {
	Img rt.Image2D
}

//dgen:alloc
var frames rt.AllocSite[rt.Image2D]
