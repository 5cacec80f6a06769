// Command imaging runs an image pipeline on OpenCL images: a Gaussian blur,
// the Sobel magnitude of the blurred image, and one step of an
// edge-avoiding à-trous wavelet decomposition in the manner of darktable's
// eaw_decompose. It runs the same pipeline on buffers, checks every output
// pixel of both against a Go implementation, and with -bench times the
// two.
package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Frames counts the frames that gauss_blur has blurred: a device global
// that an image kernel updates.
//
//dgen:global
var Frames rt.DeviceGlobal[uint32]

// Imaging is the pipeline on images.
//
//dgen:program source=imaging.cl
var Imaging rt.Program

// Blur is a 5x5 binomial (Gaussian) blur of In into Out; S says how In is
// read at the borders.
//
//dgen:kernel program=Imaging name=gauss_blur
type Blur struct {
	In  rt.Image
	S   rt.Sampler
	Out rt.Image
}

// Sobel writes the gradient magnitude of In's luminance into Mag.
//
//dgen:kernel program=Imaging name=sobel
type Sobel struct {
	In  rt.Image
	S   rt.Sampler
	Mag rt.Image
}

// EAW is one step of the edge-avoiding à-trous decomposition of In into
// Coarse and Detail at Scale; its sampler is a constant of the source.
//
//dgen:kernel program=Imaging name=eaw_step
type EAW struct {
	In      rt.Image
	Coarse  rt.Image
	Detail  rt.Image
	Scale   int32
	Sharpen float32
}

// Buffers is the same pipeline on buffers.
//
//dgen:program source=pipeline_buffers.cl
var Buffers rt.Program

// BlurBuf is Blur on buffers.
//
//dgen:kernel program=Buffers name=gauss_blur_buf
type BlurBuf struct {
	In   rt.Buffer[[4]uint8]
	Out  rt.Buffer[[4]float32]
	W, H int32
}

// SobelBuf is Sobel on buffers.
//
//dgen:kernel program=Buffers name=sobel_buf
type SobelBuf struct {
	In   rt.Buffer[[4]float32]
	Mag  rt.Buffer[float32]
	W, H int32
}

// EAWBuf is EAW on buffers.
//
//dgen:kernel program=Buffers name=eaw_step_buf
type EAWBuf struct {
	In, Coarse, Detail rt.Buffer[[4]float32]
	W, H, Scale        int32
	Sharpen            float32
}

// RW is a program whose kernel takes a read_write image.
//
//dgen:program source=rw.cl
var RW rt.Program

// Brighten doubles every pixel of Img in place.
//
//dgen:kernel program=RW name=brighten
type Brighten struct {
	Img rt.Image
}

// RW12 is RW built as OpenCL C 1.2, which has no read_write images: its
// build fails with dgen's message.
//
//dgen:program source=rw.cl options="-cl-std=CL1.2"
var RW12 rt.Program

// Brighten12 is Brighten in RW12.
//
//dgen:kernel program=RW12 name=brighten
type Brighten12 struct {
	Img rt.Image
}

// The intermediate and output images and buffers come from allocation
// sites, one for each, so that each frame reuses the last one's.
//
//dgen:alloc
var blurredImages rt.ImageSite

//dgen:alloc
var magImages rt.ImageSite

//dgen:alloc
var coarseImages rt.ImageSite

//dgen:alloc
var detailImages rt.ImageSite

//dgen:alloc
var blurredBufs rt.AllocSite[[4]float32]

//dgen:alloc
var magBufs rt.AllocSite[float32]

//dgen:alloc
var coarseBufs rt.AllocSite[[4]float32]

//dgen:alloc
var detailBufs rt.AllocSite[[4]float32]
