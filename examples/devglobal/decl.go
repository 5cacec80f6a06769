// Command devglobal shows device globals end to end: a counter shared by
// two programs, image-scope globals, a struct global, and the errors.
package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Counter is shared by every program on a device.
//
//dgen:global
var Counter rt.DeviceGlobal[uint32]

// Steps counts launches of count in the Counter program's image; the host
// may only read it.
//
//dgen:global device_image_scope host_access=read
var Steps rt.DeviceGlobal[uint32]

// Seen counts launches of report in the Report program's image.
//
//dgen:global device_image_scope
var Seen rt.DeviceGlobal[uint32]

// Unused is an image-scope global that no program uses: it lives in host
// memory.
//
//dgen:global device_image_scope
var Unused rt.DeviceGlobal[int64]

// Params is the element of a struct global, laid out as OpenCL C lays out
// struct Params.
type Params struct {
	Gain   float32
	N      int32
	Offset [2]float32
}

// P holds the parameters that scale reads.
//
//dgen:global
var P rt.DeviceGlobal[Params]

// Counting is the image of counter.cl.
//
//dgen:program source=counter.cl options="-cl-std=CL1.2"
var Counting rt.Program

// Reporting is the image of report.cl.
//
//dgen:program source=report.cl
var Reporting rt.Program

// Count adds Per to Counter in every work-item.
//
//dgen:kernel program=Counting name=count
type Count struct {
	Per uint32
}

// CountTwice adds 2*Per to Counter in every work-item.
//
//dgen:kernel program=Counting name=count_twice
type CountTwice struct {
	Per uint32
}

// Scale writes K*P.Gain*i + P.Offset[0] + P.N to Out[i].
//
//dgen:kernel program=Counting name=scale
type Scale struct {
	Out rt.Buffer[float32] `dgen:"out"`
	K   float32
}

// Report copies Counter and its own launch count into Out.
//
//dgen:kernel program=Reporting name=report
type Report struct {
	Out rt.Buffer[uint32]
}
