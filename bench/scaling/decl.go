package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Kernels is the device image of both workloads.
//
//dgen:program source=scaling.cl
var Kernels rt.Program

// Touch is the launch loop's 64-item kernel.
//
//dgen:kernel program=Kernels name=touch64
type Touch struct {
	P rt.Buffer[int32]
}

// Axpb is a request's kernel: y = a*x + 1.
//
//dgen:kernel program=Kernels name=axpb
type Axpb struct {
	A float32
	X rt.Buffer[float32]
	Y rt.Buffer[float32]
}

// xSite and ySite are where a request allocates its two buffers.
//
//dgen:alloc
var xSite rt.AllocSite[float32]

//dgen:alloc
var ySite rt.AllocSite[float32]
