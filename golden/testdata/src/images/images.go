// Package images has kernels with every kind of image, samplers as
// parameters and as constants, a read_write image and an allocation site of
// images.
package images

import "github.com/dgen-go/dgen/rt"

//dgen:program source=images.cl
var Images rt.Program

//dgen:kernel program=Images name=blur
type Blur struct {
	In  rt.Image
	S   rt.Sampler
	Out rt.Image
}

//dgen:kernel program=Images name=kinds
type Kinds struct {
	A rt.Image
	B rt.Image
	C rt.Image
	D rt.Image
	E rt.Image
	F rt.Image
	G rt.Buffer[float32]
}

//dgen:kernel program=Images name=rw
type RW struct {
	Img rt.Image
}

//dgen:alloc
var frames rt.ImageSite
