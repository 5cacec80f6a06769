package cuda

/*
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"sync"

	"github.com/dgen-go/dgen/internal/holdset"
	"github.com/dgen-go/dgen/rt/driver"
)

// A memPool gives a one-device context device memory that is freed in
// stream order, so that freeing it waits for no kernel.
//
// cuMemFree waits for every kernel running on the device before it
// returns, and holds the driver's lock of the context meanwhile: other
// goroutines' stream creation and allocations wait behind it (measured on
// an H200, driver 580: 1.98 s each beside a kernel of 2 s). Memory from a
// CUDA memory pool frees in stream order instead: a buffer's memory comes
// from the pool on a stream of the pool's own, which NewBuffer then waits
// for (0.6 ms beside that kernel), so that every stream may use it; its
// Release enqueues the free on a second stream of the pool's, after the
// commands enqueued so far on every stream of the context's queues, the
// only streams that can use the buffer (0.02 ms). The pool reuses only
// memory whose free has completed (its allocations follow no free's
// dependencies), and gives unused memory back to the device at the
// driver's next synchronisation (its release threshold is 0).
//
// Where libcuda or the device has no memory pools, h is nil, and buffers
// are allocated by cuMemAlloc and freed by cuMemFree, which waits.
type memPool struct {
	h      C.CUmemoryPool
	alloc  C.CUstream          // allocations are enqueued and waited for on it
	frees  C.CUstream          // frees are enqueued on it, after streams' commands
	queues holdset.Set[*queue] // the context's queues on the device, whose streams a free is ordered after
}

// poolFuncs reports whether libcuda has the memory-pool functions, looked
// up once, whichever contexts open at the same time.
var poolFuncs = sync.OnceValue(func() bool { return C.dgen_pool_load() != 0 })

// init makes d's pool; without pool functions in libcuda, or pools on the
// device, it leaves it nil.
func (m *memPool) init(d *device) error {
	if !poolFuncs() {
		return nil
	}
	r := C.dgen_pool_create(d.ctx, d.ord, &m.h, &m.alloc, &m.frees)
	if r != 0 {
		m.h = nil // dgen_pool_create destroyed what it made
	}
	if r == codeNotSupported {
		return nil
	}
	return cuError("cuMemPoolCreate", r)
}

// codeNotSupported is CUDA_ERROR_NOT_SUPPORTED.
const codeNotSupported = 801

// allocate returns size bytes of d's memory from the pool, behind d's
// gate (gate.go). Where the device is out of memory while frees are still
// enqueued, it waits for them, as cuMemFree would have, with the gate
// open, and tries once more.
func (m *memPool) allocate(d *device, size int64) (C.CUdeviceptr, error) {
	var p C.CUdeviceptr
	alloc := func() error {
		defer d.gate.hold()()
		return cuError("cuMemAllocFromPoolAsync", C.dgen_pool_alloc(d.ctx, m.h, m.alloc, &p, C.size_t(size)))
	}
	err := alloc()
	if errors.Is(err, driver.ErrOutOfMemory) {
		if err := m.drain(d); err != nil {
			return 0, err
		}
		err = alloc()
	}
	return p, err
}

// free enqueues the free of p, after every command enqueued so far on the
// context's queues of d. It does not close d's gate: its calls are stream
// commands, as a launch's are.
func (m *memPool) free(d *device, p C.CUdeviceptr) error {
	if m.h == nil {
		return errors.New("cuMemFreeAsync: the context is released")
	}
	e, err := d.plain.get()
	if err != nil {
		return err
	}
	defer e.unref()
	qs := m.queues.Hold()
	defer m.queues.Unhold(qs)
	streams := make([]C.CUstream, len(qs))
	for i, q := range qs {
		q.settle() // the free follows the launches still in q's ring
		streams[i] = q.s
	}
	var first *C.CUstream
	if len(streams) > 0 {
		first = &streams[0]
	}
	return cuError("cuMemFreeAsync", C.dgen_pool_free(d.ctx, m.frees, first, C.int(len(streams)), e.h, p))
}

// drain waits for the frees enqueued so far and gives the pool's unused
// memory back to the device.
func (m *memPool) drain(d *device) error {
	if m.h == nil {
		return nil
	}
	return cuError("cuMemPoolTrimTo", C.dgen_pool_drain(d.ctx, m.h, m.frees))
}

// release destroys the pool and its streams; the driver frees the pool's
// memory once the frees still enqueued have run.
func (m *memPool) release(d *device) error {
	if m.h == nil {
		return nil
	}
	err := cuError("cuMemPoolDestroy", C.dgen_pool_destroy(d.ctx, m.h, m.alloc, m.frees))
	m.h = nil
	return err
}
