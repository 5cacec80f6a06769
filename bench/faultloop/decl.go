package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Kernels is the device image of the service loop.
//
//dgen:program source=faultloop.cl
var Kernels rt.Program

// Inc is a request's kernel: x[i] += Add for i < N.
//
//dgen:kernel program=Kernels name=inc
type Inc struct {
	X   rt.Buffer[int32]
	N   int32
	Add int32
}

// Bad writes far out of bounds: the fault.
//
//dgen:kernel program=Kernels name=bad
type Bad struct {
	X rt.Buffer[int32]
	N int32
}
