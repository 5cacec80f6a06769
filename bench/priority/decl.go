package main

import "github.com/dgen-go/dgen/rt"

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Kernels is the device image: priority.cl.
//
//dgen:program source=priority.cl
var Kernels rt.Program

// Spin is the batch job's long kernel: each work-item loops Iters times.
//
//dgen:kernel program=Kernels name=spin
type Spin struct {
	Out   rt.Buffer[uint32]
	Iters uint32
}

// Tick is a request's short kernel: Out[i] = Value + i.
//
//dgen:kernel program=Kernels name=tick
type Tick struct {
	Out   rt.Buffer[int32]
	Value int32
}
