// Package badimages binds image and sampler parameters to the wrong fields.
package badimages

import "github.com/dgen-go/dgen/rt"

//dgen:program source=bad.cl
var P rt.Program

//dgen:kernel program=P name=k
type WrongHandle struct {
	A rt.Sampler
	S rt.Sampler
	B rt.Image
	P rt.Buffer[float32]
	C *rt.Image
}

//dgen:kernel program=P name=k
type NotImages struct {
	A float32
	S rt.Image
	B rt.Buffer[float32]
	P rt.Image
	C rt.Buffer[int32]
}

//dgen:alloc
var site rt.AllocSite[rt.Image]
