package cuda

/*
#cgo noescape dgen_launch
#cgo nocallback dgen_launch
#cgo noescape dgen_launch_plain
#cgo nocallback dgen_launch_plain
#cgo noescape dgen_copy
#cgo nocallback dgen_copy
#cgo noescape dgen_fill
#cgo nocallback dgen_fill
#cgo noescape dgen_marker
#cgo nocallback dgen_marker
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// NewQueue creates a stream on device dev at CUDA's default priority; a
// profiling queue records a timed event before and after each command.
func (c *context) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	return c.NewQueueOptions(dev, driver.QueueOptions{Profiling: profiling})
}

// NewQueueOptions implements driver.PriorityContext: NewQueue with a
// stream priority (streamPriority).
func (c *context) NewQueueOptions(dev int, o driver.QueueOptions) (driver.Queue, error) {
	if dev < 0 || dev >= len(c.devs) {
		return nil, fmt.Errorf("cuStreamCreateWithPriority: device %d of %d", dev, len(c.devs))
	}
	q := &queue{c: c, d: c.devs[dev], dev: dev, profiling: o.Profiling}
	prio, _ := streamPriority(o.Priority, q.d.priorities)
	if err := q.d.createStream(&q.s, prio); err != nil {
		return nil, err
	}
	q.d.mem.queues.Add(q)
	return q, nil
}

// createStream creates a stream on d at CUDA priority prio behind its
// gate (gate.go).
func (d *device) createStream(s *C.CUstream, prio int) error {
	defer d.gate.hold()()
	return cuError("cuStreamCreateWithPriority", C.dgen_stream_create(d.ctx, s, C.int(prio)))
}

// destroyStream destroys a stream of d behind its gate.
func (d *device) destroyStream(s C.CUstream) error {
	defer d.gate.hold()()
	return cuError("cuStreamDestroy", C.dgen_stream_destroy(d.ctx, s))
}

// NewKernelTimedQueue implements driver.KernelTimer: a profiling queue
// whose kernels take their device times from CUPTI's records (see
// cupti.go). Where CUPTI does not load, or does not take dgen's records
// (another tool, a profiler, holds its activity API), its error wraps
// errors.ErrUnsupported and says why.
func (c *context) NewKernelTimedQueue(dev int) (driver.Queue, error) {
	if err := loadCUPTI(); err != nil {
		return nil, fmt.Errorf("kernel-timed queue: %w: CUPTI does not load: %v", errors.ErrUnsupported, err)
	}
	dq, err := c.NewQueue(dev, true)
	if err != nil {
		return nil, err
	}
	q := dq.(*queue)
	if q.kt, err = openKernelTimes(q); err != nil {
		q.Release()
		return nil, fmt.Errorf("kernel-timed queue: %w: %v", errors.ErrUnsupported, err)
	}
	return q, nil
}

// queue is a CUDA stream.
type queue struct {
	c         *context
	d         *device
	dev       int // index of d in c
	s         C.CUstream
	profiling bool
	kt        *kernelTimes // kernel times from CUPTI, or nil
	ring      submitRing   // the queue's back-to-back launches (ring.go)
}

// waitEvents is the CUDA events of a wait list in buf (grown if needed),
// and a pointer to the first.
func waitEvents(buf []C.CUevent, wait []driver.Event) ([]C.CUevent, *C.CUevent, error) {
	for _, w := range wait {
		e, ok := w.(interface{ last() *cuEvent })
		if !ok {
			return nil, nil, fmt.Errorf("wait list: event of another backend (%T)", w)
		}
		l := e.last()
		if l == nil {
			return nil, nil, errors.New("wait list: an event that only times its kernel (LaunchArgsTimed)")
		}
		buf = append(buf, l.h)
	}
	if len(buf) == 0 {
		return buf, nil, nil
	}
	return buf, &buf[0], nil
}

// events returns the events a command records when want is set: an end
// event, timed and with a start event when the queue profiles.
func (q *queue) events(want bool) (start, end *cuEvent, err error) {
	if !want {
		return nil, nil, nil
	}
	if !q.profiling {
		end, err = q.d.plain.get()
		return nil, end, err
	}
	if start, err = q.d.timed.get(); err != nil {
		return nil, nil, err
	}
	if end, err = q.d.timed.get(); err != nil {
		start.unref()
		return nil, nil, err
	}
	return start, end, nil
}

// prologue returns what a command's wrapper call takes besides its
// operation: the CUDA events of wait, held in wb (or a larger array if
// there are more than 8), with their number and the first's address; and
// the events the command records (events). It first passes the device's
// gate, as every command does.
func (q *queue) prologue(wb *[8]C.CUevent, wait []driver.Event, want bool) (nw C.int, first *C.CUevent, start, end *cuEvent, err error) {
	if err := q.ring.drain(); err != nil {
		return 0, nil, nil, nil, err
	}
	q.d.gate.pass()
	wl, first, err := waitEvents(wb[:0], wait)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	start, end, err = q.events(want)
	return C.int(len(wl)), first, start, end, err
}

func handle(e *cuEvent) C.CUevent {
	if e == nil {
		return 0
	}
	return e.h
}

// finish turns a wrapper's result into the command's event (nil when it
// records none), or its error, giving the events back.
func (q *queue) finish(op string, r C.CUresult, step C.int, start, end *cuEvent, want bool) (driver.Event, error) {
	if r != 0 {
		start.unref()
		end.unref()
		return nil, stepError(op, step, r)
	}
	if !want {
		start.unref()
		end.unref()
		return nil, nil
	}
	if !q.profiling {
		return plainEvent{end}, nil
	}
	e := &event{d: q.d, start: start, end: end}
	if q.kt != nil {
		e.kt, e.seq = q.kt, q.kt.launched.Load()
	}
	return e, nil
}

// eventMode is the event a kernel launch returns.
type eventMode int

const (
	noEvent   eventMode = iota
	withEvent           // the command's event
	timesOnly           // an event only for the kernel's times (LaunchArgsTimed)
)

func (q *queue) EnqueueKernel(dk driver.Kernel, r driver.NDRange, wait []driver.Event) (driver.Event, error) {
	k, err := asKernel(dk)
	if err != nil {
		return nil, err
	}
	return q.launchKernel(k, &r, wait, withEvent)
}

func (q *queue) SubmitKernel(dk driver.Kernel, r driver.NDRange, wait []driver.Event) error {
	k, err := asKernel(dk)
	if err == nil {
		_, err = q.launchKernel(k, &r, wait, noEvent)
	}
	return err
}

// asKernel returns k as a kernel of this backend.
func asKernel(k driver.Kernel) (*kernel, error) {
	kk, ok := k.(*kernel)
	if !ok {
		return nil, fmt.Errorf("cuLaunchKernel: kernel of another backend (%T)", k)
	}
	return kk, nil
}

// launchKernel launches k over r after wait in one cgo call, with the
// event that mode asks for (timesOnly is withEvent but on a kernel-timed
// queue). A launch without a wait list or an event, a loop's, takes
// dgen_launch_plain, which passes less.
func (q *queue) launchKernel(k *kernel, r *driver.NDRange, wait []driver.Event, mode eventMode) (driver.Event, error) {
	l, err := k.prepare(q, r)
	if err != nil {
		return nil, err
	}
	if q.kt != nil {
		return q.kt.launchKernel(k, l, wait, mode)
	}
	if mode == noEvent && len(wait) == 0 {
		q.d.gate.pass()
		return nil, q.launchPlain(k, &l)
	}
	want := mode != noEvent
	var wb [8]C.CUevent
	nw, wp, start, end, err := q.prologue(&wb, wait, want)
	if err != nil {
		return nil, err
	}
	var step C.int
	res := C.dgen_launch(q.d.ctx, k.fns[q.dev], l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
		l.shared, q.s, k.paramArray(), nw, wp, handle(start), handle(end), &step)
	return q.finish("cuLaunchKernel", res, step, start, end, want)
}

// plainError is the error of dgen_launch_plain's result res: the negated
// code of cuCtxSetCurrent, or cuLaunchKernel's.
func plainError(res C.CUresult) error {
	if res < 0 {
		return stepError("cuLaunchKernel", C.STEP_CTX, -res)
	}
	return stepError("cuLaunchKernel", C.STEP_OP, res)
}

// asBuffer returns b as a buffer of this backend.
func asBuffer(call string, b driver.Buffer) (*buffer, error) {
	bb, ok := b.(*buffer)
	if !ok || bb == nil {
		return nil, fmt.Errorf("%s: buffer of another backend (%T)", call, b)
	}
	return bb, nil
}

// span checks that [offset, offset+size) lies in b.
func (b *buffer) span(call string, offset, size int64) error {
	if offset < 0 || size < 0 || offset > b.size || size > b.size-offset {
		return &driver.Error{Call: call, Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (bytes [%d, %d) of a buffer of %d)", offset, offset+size, b.size)}
	}
	return nil
}

func (q *queue) ReadBuffer(b driver.Buffer, blocking bool, offset, size int64, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.transfer("cuMemcpyDtoHAsync", C.COPY_DTOH, b, blocking, offset, size, dst, wait)
}

func (q *queue) WriteBuffer(b driver.Buffer, blocking bool, offset, size int64, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.transfer("cuMemcpyHtoDAsync", C.COPY_HTOD, b, blocking, offset, size, src, wait)
}

// transfer copies between b and host memory at p. A blocking transfer
// waits for the stream and returns no event. From pageable (Go) memory
// CUDA copies before the call returns, so p is not used after it.
func (q *queue) transfer(call string, kind C.int, b driver.Buffer, blocking bool, offset, size int64, p unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	bb, err := asBuffer(call, b)
	if err != nil {
		return nil, err
	}
	if err := bb.span(call, offset, size); err != nil {
		return nil, err
	}
	want := !blocking
	var wb [8]C.CUevent
	nw, wp, start, end, err := q.prologue(&wb, wait, want)
	if err != nil {
		return nil, err
	}
	sync := C.int(0)
	if blocking {
		sync = 1
	}
	ptr := bb.ptr + C.CUdeviceptr(offset)
	var step C.int
	r := C.dgen_copy(q.d.ctx, q.s, kind, ptr, ptr, (*C.uchar)(p), C.size_t(size), nw, wp, handle(start), handle(end), sync, &step)
	return q.finish(call, r, step, start, end, want)
}

func (q *queue) FillBuffer(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) (driver.Event, error) {
	return q.fill(b, pattern, offset, size, wait, true)
}

// SubmitFill implements driver.SubmitQueue.
func (q *queue) SubmitFill(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) error {
	_, err := q.fill(b, pattern, offset, size, wait, false)
	return err
}

// fill enqueues a fill, with an event when want is set.
func (q *queue) fill(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event, want bool) (driver.Event, error) {
	const call = "cuMemsetD32Async"
	bb, err := asBuffer(call, b)
	if err != nil {
		return nil, err
	}
	n := int64(len(pattern))
	if n == 0 || (n > 2 && n%4 != 0) || size%n != 0 || offset%n != 0 {
		return nil, &driver.Error{Call: call, Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (a pattern of %d bytes over %d bytes at %d)", n, size, offset)}
	}
	if err := bb.span(call, offset, size); err != nil {
		return nil, err
	}
	var wb [8]C.CUevent
	nw, wp, start, end, err := q.prologue(&wb, wait, want)
	if err != nil {
		return nil, err
	}
	var step C.int
	r := C.dgen_fill(q.d.ctx, q.s, bb.ptr+C.CUdeviceptr(offset), (*C.uchar)(unsafe.Pointer(&pattern[0])), C.size_t(n), C.size_t(size),
		nw, wp, handle(start), handle(end), &step)
	return q.finish(call, r, step, start, end, want)
}

func (q *queue) CopyBuffer(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) (driver.Event, error) {
	return q.copyBuffer(src, dst, srcOffset, dstOffset, size, wait, true)
}

// SubmitCopy implements driver.SubmitQueue.
func (q *queue) SubmitCopy(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) error {
	_, err := q.copyBuffer(src, dst, srcOffset, dstOffset, size, wait, false)
	return err
}

// copyBuffer enqueues a copy between buffers, with an event when want is
// set.
func (q *queue) copyBuffer(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event, want bool) (driver.Event, error) {
	const call = "cuMemcpyAsync"
	s, err := asBuffer(call, src)
	if err != nil {
		return nil, err
	}
	d, err := asBuffer(call, dst)
	if err != nil {
		return nil, err
	}
	if err := errors.Join(s.span(call, srcOffset, size), d.span(call, dstOffset, size)); err != nil {
		return nil, err
	}
	var wb [8]C.CUevent
	nw, wp, start, end, err := q.prologue(&wb, wait, want)
	if err != nil {
		return nil, err
	}
	var step C.int
	r := C.dgen_copy(q.d.ctx, q.s, C.COPY_DTOD, d.ptr+C.CUdeviceptr(dstOffset), s.ptr+C.CUdeviceptr(srcOffset), nil, C.size_t(size),
		nw, wp, handle(start), handle(end), 0, &step)
	return q.finish(call, r, step, start, end, want)
}

var _ driver.SubmitQueue = (*queue)(nil)

// Marker records an event after wait, or after everything enqueued before
// it: the stream is in order, so both are the stream's point after wait.
func (q *queue) Marker(wait []driver.Event) (driver.Event, error) {
	if err := q.ring.drain(); err != nil {
		return nil, err
	}
	q.d.gate.pass()
	var wb [8]C.CUevent
	wl, wp, err := waitEvents(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	pool := &q.d.plain
	if q.profiling {
		pool = &q.d.timed
	}
	end, err := pool.get()
	if err != nil {
		return nil, err
	}
	var step C.int
	r := C.dgen_marker(q.d.ctx, q.s, C.int(len(wl)), wp, end.h, &step)
	return q.finish("cuEventRecord", r, step, nil, end, true)
}

// Flush returns once the launches written to the queue's ring have been
// made: CUDA submits every other command as it is enqueued.
func (q *queue) Flush() error { return q.ring.drain() }

// Finish waits for the stream (and, on a kernel-timed queue, for the
// records of its kernels).
func (q *queue) Finish() error {
	if err := q.ring.drain(); err != nil {
		return err
	}
	if q.kt != nil {
		return q.kt.finish()
	}
	return cuError("cuStreamSynchronize", C.dgen_sync(q.d.ctx, q.s))
}

// Release waits for the stream and destroys it, and its ring.
func (q *queue) Release() error {
	err := q.Finish()
	if q.kt != nil {
		q.kt.close()
	}
	q.d.mem.queues.Remove(q)
	q.ring.close()
	return errors.Join(err, q.d.destroyStream(q.s))
}
