// Package cuda is dgen's second backend: NVIDIA GPUs through CUDA's driver
// API, running the same OpenCL C kernels as rt/opencl at CUDA's launch
// cost.
//
// It needs no CUDA toolkit or header to build: the declarations of the
// driver API it uses are written in this package, and libcuda.so.1 is
// opened with dlopen when the backend is first used. Where libcuda does not
// load, the backend is absent: it lists no platform, and opening a context
// with DGEN_BACKEND=cuda fails with an error that says what is missing.
//
// Programs are compiled by NVIDIA's OpenCL (through rt/opencl, used as the
// compiler; a GPU that no OpenCL platform offers, for want of NVIDIA's ICD
// file /etc/OpenCL/vendors/nvidia.icd or of libnvidia-opencl.so.1, fails
// Open with ErrNoCompiler naming the missing part, and DGEN_BACKEND=auto
// then runs OpenCL's devices) to PTX, which Rewrite turns into PTX that CUDA loads with
// cuModuleLoadDataEx; Program.Binaries returns the rewritten PTX, so that
// rt's persistent cache keeps it (its device key names the platform
// "CUDA driver API", which keeps its entries apart from rt/opencl's). A kernel
// that uses what CUDA does not run is left out of its module, and NewKernel
// returns an error that names what it uses, wraps errors.ErrUnsupported and says
// DGEN_BACKEND=opencl runs it; the program's other kernels run.
//
// Images are CUDA arrays, read through texture objects and written through
// surface objects, which the rewrite makes the image instructions take
// (ptximage.go); each image keeps a texture object per sampler state, created
// on the first launch that samples with it (image.go). The formats are those
// CUDA arrays hold: the orders R, RG and RGBA of unpacked channel types.
// Unnormalised coordinates with repeat addressing, image1d_buffer_t and other
// formats fail with errors.ErrUnsupported.
//
// A context holds one CUDA context per device (the device's primary
// context), a queue is a CUDA stream, an event a CUDA event (two, with
// timing, on a profiling queue), and a buffer a device pointer: views are
// pointer offsets. A one-device context allocates its buffers from a CUDA
// memory pool of its own and frees them in stream order, after the commands
// enqueued so far on its queues, so that a free waits for no kernel
// (cuMemFree waits for them all: pool.go). A context over several devices
// allocates its buffers as managed memory, which every device of the
// context reaches, as an OpenCL buffer is reached by every device of its
// context.
//
// A program's functions are found and loaded with its module, so that
// making a kernel object calls no driver function. The driver calls that
// need a device's context to themselves (loading and unloading modules,
// creating and destroying streams, allocating memory and freeing it
// outside a pool) close the device's gate while they run, and the commands
// enqueued meanwhile wait at it for at most 100 ms: CUDA's driver does not
// take such a call in turn while other goroutines keep the device busy
// (gate.go).
//
// A queue's launches that come back to back, without a wait list or an
// event (a loop's), are written as records into the queue's submission
// ring, in C memory and with no cgo call, and a thread of the queue's own
// makes the driver calls, in order, on its stream: rt's Go-side work for
// the next launch then runs while the driver makes this one, which brings
// a launch loop to the throughput of a C loop calling cuLaunchKernel. The
// thread starts with the queue's first back-to-back launches, spins for
// 50 µs when the ring is empty, then sleeps; a lone launch is made
// directly. Every other command of the queue, Flush and Finish first wait
// for the records written before them, and a launch that fails on the
// thread fails the queue's next command, its error wrapping the driver's
// (ring.go).
//
// A kernel-timed queue (driver.KernelTimer: rt asks for one when tracing
// reports the device times of every command) takes its kernels' times from
// CUPTI's activity records where libcupti loads (DGEN_CUPTI_LIBRARY names
// it, or "none"), at a quarter of the host cost of a timed event pair and
// without the launch latency that an event pair counts; see cupti.go.
//
// A command graph of rt (rt.Graph) becomes a CUDA graph: its commands are
// captured once on a stream of the graph's own and instantiated, each
// launch of the graph is one cuGraphLaunch, and an update sets the kernel
// node in place (cuGraphExecKernelNodeSetParams). The graph functions are
// optional: with a driver that lacks them, or where rt asks for none
// (DGEN_GRAPHS=loop, Config.Graphs GraphsLoop), a graph replays as one loop of prepared
// launches in C.
//
// Importing it registers the backend under the name "cuda"; it is chosen by
// DGEN_BACKEND=cuda, or by DGEN_BACKEND=auto (the default) for an NVIDIA GPU
// when libcuda loads:
//
//	import _ "github.com/dgen-go/dgen/rt/cuda"
package cuda
