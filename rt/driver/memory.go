package driver

import "unsafe"

// SubBufferContext is implemented by a Context whose buffers can have
// views: regions of a buffer that kernels and transfers use as buffers of
// their own. rt offers views only on backends that implement it.
type SubBufferContext interface {
	// NewSubBuffer creates a buffer of size bytes over parent from byte
	// offset, sharing its memory. parent is a buffer from NewBuffer, not a
	// sub-buffer; offset is a multiple of every device's
	// DeviceInfo.MemBaseAddrAlign. Releasing the sub-buffer leaves parent
	// alone.
	NewSubBuffer(parent Buffer, offset, size int64) (Buffer, error)
}

// HostBufferContext is implemented by a Context that allocates buffers in
// host memory that the devices reach directly (OpenCL's
// CL_MEM_ALLOC_HOST_PTR: pinned, page-locked memory on GPUs), whose
// contents the host reaches through MapQueue.
type HostBufferContext interface {
	// NewHostBuffer allocates size bytes of device-reachable host memory.
	NewHostBuffer(size int64) (Buffer, error)
}

// MapQueue is implemented by a Queue that maps buffers into the host's
// address space.
type MapQueue interface {
	// MapBuffer maps size bytes at offset of b for reading and writing by
	// the host, after wait, and blocks until the mapping is usable.
	MapBuffer(b Buffer, offset, size int64, wait []Event) (unsafe.Pointer, error)
	// UnmapBuffer unmaps p, returned by MapBuffer for b, and blocks until
	// it is unmapped.
	UnmapBuffer(b Buffer, p unsafe.Pointer) error
}

// ResidentContext is a Context whose NewBuffer returns memory that is
// committed at once (CUDA's cuMemAlloc), so that running out of memory
// shows in NewBuffer. Without it, rt's allocator writes to each new block
// once, since a lazy driver (NVIDIA's OpenCL) commits memory at first use.
type ResidentContext interface {
	// BuffersResident reports whether NewBuffer commits memory at once.
	BuffersResident() bool
}

// A MemInfoContext is a Context that can ask the driver how much memory
// a device has free: CUDA's cuMemGetInfo. OpenCL has no such query (not
// on NVIDIA's OpenCL, nor on PoCL), so rt/opencl does not implement it.
// rt's tests use it to check the memory budget (Config.MemoryLimit)
// against the driver's own view.
type MemInfoContext interface {
	// MemInfo returns the bytes of device dev's memory that are free and
	// in all, as the driver counts them: for the whole device, across
	// every context and process that uses it.
	MemInfo(dev int) (free, total int64, err error)
}
