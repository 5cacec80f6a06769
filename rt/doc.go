// Package rt is dgen's runtime, as applications use it: contexts, queues,
// typed buffers and images, events and ranges over a device backend, and
// the handles of the declarations that dgen generates code for. Programs
// built from source at run time, and kernels whose arguments are set by
// hand, are package rt/raw's.
//
// # Entry points
//
// A program imports rt and, once, the backends, which register themselves
// the way database/sql drivers do:
//
//	import (
//		"github.com/dgen-go/dgen/rt"
//		_ "github.com/dgen-go/dgen/rt/backends"
//	)
//
// rt/backends registers rt/cuda, which runs NVIDIA GPUs through CUDA's
// driver API, and rt/opencl, which runs every OpenCL device (PoCL's CPU
// among them), so that each device runs on the best backend for it. A
// program that imports rt/opencl alone runs an NVIDIA GPU on NVIDIA's
// OpenCL, whose launches cost more: Open says so once, through
// Config.Logger.
//
// [Open] opens a [Context] as the environment says: on the device that
// DGEN_DEVICE selects, with the other DGEN_ variables of [EnvVars] (`dgen
// env` prints them), read by [ConfigFromEnv]. [OpenConfig] takes a
// [Config], which means what it says: it reads no variable, and the zero
// Config is the documented defaults. Warnings go to
// [Config].Logger, slog.Default() unless set; rt prints nothing. A context has devices
// ([Device]), a default [Queue] and the queues [Context.NewQueue] makes,
// its program and kernel caches (memory, the disk beneath it, and the
// shared remote tier of rt/fleetcache for a program that imports it), an
// allocator per device and a tracer ([Context.Tracer]). Close it when
// done: Close may race any other call, and every later call returns an
// error wrapping [ErrClosed]. A kernel that faults on the device (writes
// out of bounds, ...) leaves its context unusable: every call on it returns
// the context's [DeviceFault], which wraps [ErrDeviceFault]; Close it and
// Open again, which under automatic selection opens the device on the other
// NVIDIA backend, since neither recovers a faulted device in the same
// process ([Config].SyncLaunches names the launch that faulted).
//
// # Free, Release and Close
//
// One verb for each kind of object: Free gives back memory that an
// allocation made (a [Buffer] and its views, an [Image], [Pinned] memory);
// Release drops any other object that holds something of the device (an
// [Event], a [Graph], rt/raw's Kernel and Program); Close ends a
// [Context], and with it everything it made. Close releases whatever its
// owner did not free or release: memory from the driver and from the
// allocators, views, images, pinned memory, events, graphs, kernels and
// programs, so that a service that opens and closes contexts keeps
// nothing of them. After the context's Close, every Free and Release of
// its objects returns nil, since Close released them (a second Free of
// the same memory included); every other use returns an error wrapping
// [ErrClosed] that names the operation, and [Pinned.Slice] returns nil.
//
// # Goroutines and queues
//
// Every method is safe for concurrent use. A queue runs its commands in
// order; launches from goroutines that each have a queue scale as CUDA
// threads with a stream each do. A goroutine that lives long launches on a
// queue of its own ([Context.NewQueue]), which it gives back with
// [Queue.Release] when it ends; one that lives for a request (a
// server's handler) takes a queue of the context's pool for the request
// with [Context.AcquireQueue] and gives it back with
// [Context.ReleaseQueue], so that requests neither make a queue each nor
// all wait behind one. [Context.Shutdown] drains the pool as
// http.Server.Shutdown drains a server's connections, and
// [Context.Health] is what a readiness or liveness probe asks
// (docs/RUNTIME.md, "Shutdown, health and a memory budget").
//
// Device memory is a [Buffer] of plain data: from the driver
// ([NewBuffer]), from the allocator's untagged pool ([Alloc]), or from an
// allocation site's free list ([AllocSite.Alloc]); [Buffer.View] makes a
// sub-buffer and [NewPinned] host memory that the device reaches directly.
// An [Image] is device memory with a pixel format, of the OpenCL C image
// type that its [ImageDesc] names (Kind [Image2D], ...): from the driver
// ([NewImage]) or from an allocation site of images ([ImageSite.Alloc]); a
// kernel spec's field of type Image binds an image parameter, and one of
// type [Sampler] a sampler_t. A launch is over a [Range] ([Range1],
// [Range2], [Range3], with [Range.WithLocal] for a work-group size).
//
// Every size is checked before the driver sees it, with an error that
// gives the value and the limit: a range's work-items against size_t and
// its work-groups against what the device and its backend can count (a
// CUDA grid, PoCL's scheduler), choosing the work-group size where the
// driver's own choice could break them ([ErrInvalidArgument]); a [Local]
// argument's bytes, and all of a launch's local memory against the
// device's; and every allocation against the device's largest
// ([ErrTooLarge], also for an element count whose bytes overflow).
//
// [Context.Stats] reports what the program cache and the allocators did
// (package rt/stats); the allocator's policy and bound are
// [Config].AllocPolicy and AllocMaxHeld (DGEN_ALLOC_POLICY,
// DGEN_ALLOC_MAX_HELD), and [Config].MemoryLimit (DGEN_MEMORY_LIMIT)
// bounds the device memory that the context holds on each device, as
// GOMEMLIMIT bounds the heap.
//
// # Declarations
//
// The handles of declarations marked with //dgen: directives are
// [Program], [DeviceGlobal], [AllocSite], [ImageSite], [SpecConst] and [Local]
// (and a kernel spec's field of type [Spec] gives a launch its own value
// of a SpecConst). Code
// generated by dgen registers them while the package's variables are
// initialized, through rt/codegen, which nothing else should import; a
// handle used before its registration, or in a package that was not
// generated, returns an error wrapping [ErrNotGenerated].
//
// # The phases of a launch
//
// A generated kernel spec's Enqueue (or EnqueueEvent, for an [Event]):
//
//  1. takes an instance of the spec's kernel object parked on the queue for
//     the launch's specialization-constant values (its own, and the
//     context's for the others), or a new one from the context's kernel
//     cache (building that variant of its program on first use: memory,
//     then disk, then the driver); the instance is the goroutine's until
//     the launch, and no lock is held;
//  2. writes every argument into the instance's launch record, which
//     remembers the last value of each, and binds the storage of the
//     device globals the kernel uses as hidden arguments;
//  3. checks the range against the device's and the kernel's limits, emits
//     the trace point (one atomic load when tracing is off) and hands the
//     record to the backend, which sets the arguments that changed and
//     enqueues the kernel in one call;
//  4. records the launch's use of allocator memory where the context has
//     more than one queue, for stream-ordered reuse, and parks the
//     instance on the queue again.
//
// Package rt/raw builds OpenCL C source at run time and drives a kernel
// object by hand: its Launch and Submit do phases 3 and 4 for arguments that the
// caller set one by one. Most code should not need it.
//
// Phase 1 may wait for a build, another process's among them: a generated
// EnqueueContext (and EnqueueEventContext) bounds that wait with a
// context.Context, and [Program.Build] builds the program ahead of the
// first launch under one.
//
// # Waiting
//
// Every call that waits has a Context form, as database/sql's calls do:
// the blocking transfers ([Buffer.ReadContext], [Buffer.WriteContext],
// [Buffer.ReadAtContext], [Buffer.WriteAtContext], [Image.ReadContext],
// [Image.WriteContext] and the [DeviceGlobal] accessors'), [NewPinnedContext],
// the waits for the device ([Event.WaitContext], [Queue.FinishContext]),
// the build of a first launch (a generated EnqueueContext,
// [Program.Build]), tuning ([SpecConst.TuneContext]), the waits for
// memory past [Config].MemoryLimit ([AllocContext],
// [AllocSite.AllocContext], [NewBufferContext]) and [Context.Shutdown].
// When the context is done first, the call returns an error wrapping its
// error, the commands it waited for run on, and the queue and memory stay
// usable.
// The driver's own work, once started (a copy, a compile), is not
// interrupted. Free, Release and Close take no context: they end things.
//
// # Go's execution tracer
//
// While Go's execution tracer runs (runtime/trace.Start, go test -trace,
// a runtime/trace.FlightRecorder), every command is also a log event of
// the goroutine that enqueued it, of the category "dgen": the kernel, its
// program and spec, the device and the source line. go tool trace shows
// it beside the scheduler's events. While the tracer is off, this costs a
// command one atomic load.
//
// # Errors
//
// Every failure is returned as an error that names the operation and its
// subject and wraps the device's own error ([DeviceError]), so that
// callers can test it with errors.Is against the sentinels of this package
// ([ErrOutOfMemory], [ErrBuildFailed], [ErrStale], ...). rt holds policy
// only; the device mechanism lives behind the interfaces of rt/driver.
package rt

// rt is a facade over rt/internal/core, its implementation, and all of it
// but this file is generated: mkfacade writes zz_generated.facade.go from
// the core's exported declarations and their doc comments (go generate
// ./rt; make test checks that it is fresh). rt's documentation is written
// there, once.

//go:generate go run ./internal/cmd/mkfacade
