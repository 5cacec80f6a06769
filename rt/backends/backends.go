// Package backends registers every backend of dgen, the way a database/sql
// driver registers itself: import it for its side effect, once, in the
// program's main package (or any package of it),
//
//	import _ "github.com/dgen-go/dgen/rt/backends"
//
// and rt.Open runs each device on the best backend for it: an NVIDIA GPU
// on rt/cuda (CUDA's driver API, where libcuda loads and NVIDIA's OpenCL
// compiles for it), every other device, PoCL's CPU among them, on
// rt/opencl. A program that imports one backend alone gets that one: with
// rt/opencl alone, an NVIDIA GPU runs on NVIDIA's OpenCL, whose launches
// cost more, and rt.Open says so once through Config.Logger.
package backends

import (
	_ "github.com/dgen-go/dgen/rt/cuda"   // NVIDIA GPUs through CUDA's driver API
	_ "github.com/dgen-go/dgen/rt/opencl" // every OpenCL device, and the compiler of rt/cuda
)
