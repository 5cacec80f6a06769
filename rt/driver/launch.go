package driver

// The one-call launch. A backend whose queue implements ArgLauncher, and
// whose buffers implement NativeBuffer, receives a kernel's prepared
// argument record with the launch and makes one call into the device API
// per launch: it sets the arguments that changed since the last launch of
// the kernel object and enqueues it. Both interfaces are optional; without
// them rt sets arguments through Kernel and launches through Queue.

// ArgKind says what a kernel argument is.
type ArgKind uint8

// The argument kinds.
const (
	// ArgScalar is a value of Size bytes: in Bits when Size is at most 8,
	// else in Args.Bytes from Bits.
	ArgScalar ArgKind = iota
	// ArgBuffer is a buffer: Bits holds its NativeBuffer.Handle, Size the
	// size of a device pointer.
	ArgBuffer
	// ArgLocal is Size bytes of local (shared) memory; it has no value.
	ArgLocal
	// ArgSampler is a sampler: Bits holds its NativeSampler.Handle, Size
	// the size of the handle. (An image is an ArgBuffer: images are
	// Buffers.)
	ArgSampler
)

// Arg is one kernel argument of an Args record, in 16 bytes: a launch
// reads every argument's, four to a cache line. It holds no Go pointer, so
// that a backend may hand the record's memory to C as it stands.
type Arg struct {
	// Bits is a value of at most 8 bytes in the machine's byte order, a
	// buffer's or sampler's handle, or, for a value of more than 8 bytes,
	// where the value lies in Args.Bytes.
	Bits uint64
	// Size is the size of the value in bytes, or of the local memory.
	Size uint32
	// Kind says what the argument is.
	Kind ArgKind
	// Changed reports that the value differs from the one the backend
	// last set on the kernel object; the backend clears it once set.
	Changed bool
}

// Args is a kernel object's prepared argument record: the value of every
// argument as rt last set it, kept from one launch to the next, and which
// of them changed since the last launch. rt owns it and holds the kernel
// object's lock while a backend reads it.
type Args struct {
	// Slots has one Arg per kernel argument, in order.
	Slots []Arg
	// Bytes holds the values of more than 8 bytes; it holds no Go pointer.
	Bytes []byte
	// Changed is the number of slots whose Changed is set.
	Changed int
}

// NativeBuffer is a Buffer whose device handle fits in 64 bits (an OpenCL
// cl_mem, a CUDA CUdeviceptr): rt records it in Arg.Bits.
type NativeBuffer interface {
	Buffer
	// Handle returns the device handle.
	Handle() uint64
}

// NativeSampler is a Sampler whose device handle fits in 64 bits (an
// OpenCL cl_sampler): rt records it in Arg.Bits.
type NativeSampler interface {
	Sampler
	// Handle returns the device handle.
	Handle() uint64
}

// ArgLauncher is a Queue that sets a kernel's changed arguments and
// enqueues it in one call.
type ArgLauncher interface {
	// LaunchArgs sets the arguments of k that a marks Changed, clearing
	// each mark (and decrementing a.Changed) once it is set, then launches
	// k over r after wait. It returns an event only when event is true. If
	// setting an argument fails, the marks of the arguments not yet set
	// stay. A backend that passes every argument with each launch (CUDA's
	// cuLaunchKernel) may pass the record whole, and clears the marks.
	// r, like a, is rt's and is read during the call only: rt keeps the
	// range of a kernel's last launch prepared, as it keeps its arguments.
	LaunchArgs(k Kernel, a *Args, r *NDRange, wait []Event, event bool) (Event, error)
}
