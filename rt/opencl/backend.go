package opencl

/*
#cgo noescape dgen_span
#cgo nocallback dgen_span
#include <stdlib.h>
#include <string.h>
#include "dgen_cl.h"

// dgen_span stores the start and end times of e's command in t[0] and t[1]
// and returns CL_SUCCESS once it has completed; 1 while it has not; its
// error when it failed or a query did.
static inline cl_int dgen_span(cl_event e, cl_ulong *t) {
	cl_int s;
	cl_int code = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
	if (code != CL_SUCCESS) return code;
	if (s < 0) return s;
	if (s != CL_COMPLETE) return 1;
	code = clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t[0], &t[0], NULL);
	if (code != CL_SUCCESS) return code;
	return clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof t[1], &t[1], NULL);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/internal/cmalloc"
	"github.com/dgen-go/dgen/internal/holdset"
	"github.com/dgen-go/dgen/internal/sigsave"
	"github.com/dgen-go/dgen/rt/driver"
)

func init() { driver.Register("opencl", Backend{}) }

// Backend is the OpenCL implementation of driver.Backend.
type Backend struct{}

// Platforms lists every OpenCL platform the ICD loader finds, with its
// devices. No platform at all is not an error: the list is empty.
func (Backend) Platforms() ([]driver.PlatformInfo, error) {
	ids, err := platformIDs()
	if err != nil {
		return nil, err
	}
	var out []driver.PlatformInfo
	for i, p := range ids {
		info, err := platformInfo(i, p)
		if err != nil {
			return nil, fmt.Errorf("platform %d: %w", i, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// NewContext creates an OpenCL context over devices of one platform.
func (Backend) NewContext(devices []driver.DeviceInfo) (driver.Context, error) {
	if len(devices) == 0 {
		return nil, fmt.Errorf("clCreateContext: no devices")
	}
	ids, err := platformIDs()
	if err != nil {
		return nil, err
	}
	pi := devices[0].PlatformIndex
	if pi < 0 || pi >= len(ids) {
		return nil, fmt.Errorf("clCreateContext: platform %d of %d", pi, len(ids))
	}
	devs := make([]C.cl_device_id, len(devices))
	for i, d := range devices {
		devs[i] = *(*C.cl_device_id)(unsafe.Pointer(&d.Handle))
	}
	var code C.cl_int
	end := sigsave.Keep()
	h := C.dgen_create_context(ids[pi], C.cl_uint(len(devs)), &devs[0], &code)
	end()
	if err := contextError(devices[0].Platform, code); err != nil {
		return nil, err
	}
	c := &context{h: h, devs: devs, pocl: devices[0].Platform == poclPlatform, priorities: make([]bool, len(devices)),
		deferRelease: devices[0].Platform == nvidiaPlatform}
	for i, d := range devices {
		c.priorities[i] = slices.Contains(d.Extensions, "cl_khr_priority_hints")
	}
	return c, nil
}

type context struct {
	h          C.cl_context
	devs       []C.cl_device_id
	pocl       bool   // the platform is PoCL's (see poclQuiet)
	priorities []bool // by device: it reports cl_khr_priority_hints (priority.go)

	// deferRelease is set on NVIDIA's platform, whose clReleaseMemObject
	// waits for the kernels that use the object: memory objects are
	// released by releases once queues' markers have completed
	// (release.go).
	deferRelease bool
	queues       holdset.Set[C.cl_command_queue] // the queues made and not released
	releases     releaser
}

// nvidiaPlatform is the name of NVIDIA's OpenCL platform.
const nvidiaPlatform = "NVIDIA CUDA"

func (c *context) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	var props C.cl_command_queue_properties
	if profiling {
		props = C.CL_QUEUE_PROFILING_ENABLE
	}
	var code C.cl_int
	h := C.clCreateCommandQueue(c.h, c.devs[dev], props, &code)
	if err := check("clCreateCommandQueue", code); err != nil {
		return nil, err
	}
	return c.newQueue(h), nil
}

// newQueue returns the queue h, made on c, listed in c's queues.
func (c *context) newQueue(h C.cl_command_queue) queue {
	c.queues.Add(h)
	return queue{h, c}
}

func (c *context) NewBuffer(size int64) (driver.Buffer, error) {
	var code C.cl_int
	h := C.clCreateBuffer(c.h, C.CL_MEM_READ_WRITE, C.size_t(size), nil, &code)
	if isOutOfMemory(code) && c.drainReleases() {
		h = C.clCreateBuffer(c.h, C.CL_MEM_READ_WRITE, C.size_t(size), nil, &code)
	}
	if err := check("clCreateBuffer", code); err != nil {
		return nil, err
	}
	return buffer{h, c}, nil
}

// BuildProgram builds source. The compiler may install signal handlers
// as it loads: Go's are kept (sigsave), here and in LoadProgram.
func (c *context) BuildProgram(source, options string) (driver.Program, error) {
	defer sigsave.Keep()()
	src := C.CString(source)
	defer C.free(unsafe.Pointer(src))
	length := C.size_t(len(source))
	var code C.cl_int
	h := C.clCreateProgramWithSource(c.h, 1, &src, &length, &code)
	if err := check("clCreateProgramWithSource", code); err != nil {
		return nil, err
	}
	return c.buildProgram(h, options)
}

func (c *context) LoadProgram(binaries [][]byte, options string) (driver.Program, error) {
	defer sigsave.Keep()()
	n := len(binaries)
	if n != len(c.devs) {
		return nil, fmt.Errorf("clCreateProgramWithBinary: %d binaries for %d devices", n, len(c.devs))
	}
	// The array of binary pointers must live in C memory: cgo forbids
	// passing Go memory that holds Go pointers. It starts zeroed, so that
	// the deferred free of a refused binary's pointers frees only those
	// set (and NULL).
	ptrs := (*[1 << 20]*C.uchar)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.uchar)(nil)))))[:n:n]
	defer func() {
		for _, p := range ptrs {
			C.free(unsafe.Pointer(p))
		}
		C.free(unsafe.Pointer(&ptrs[0]))
	}()
	lengths := make([]C.size_t, n)
	status := make([]C.cl_int, n)
	for i, b := range binaries {
		if len(b) == 0 {
			return nil, newError("clCreateProgramWithBinary", C.CL_INVALID_BINARY, "")
		}
		ptrs[i] = (*C.uchar)(C.CBytes(b))
		lengths[i] = C.size_t(len(b))
	}
	var code C.cl_int
	h := C.clCreateProgramWithBinary(c.h, C.cl_uint(n), &c.devs[0], &lengths[0], &ptrs[0], &status[0], &code)
	if err := check("clCreateProgramWithBinary", code); err != nil {
		return nil, err
	}
	return c.buildProgram(h, options)
}

// buildProgram builds h for every device, releasing it on failure. On
// PoCL the options begin with poclQuiet, so that clang writes nothing to
// the process's standard error.
func (c *context) buildProgram(h C.cl_program, options string) (driver.Program, error) {
	quiet := c.pocl && !poclLoud.Load()
	code := c.build(h, options, quiet)
	if quiet && code == C.CL_INVALID_BUILD_OPTIONS {
		// PoCL refused poclQuiet, or the caller's options.
		if code = c.build(h, options, false); code != C.CL_INVALID_BUILD_OPTIONS {
			poclLoud.Store(true)
		}
	}
	if code != C.CL_SUCCESS {
		err := newError("clBuildProgram", int32(code), c.buildLog(h))
		C.clReleaseProgram(h)
		return nil, err
	}
	return &program{h: h, ndev: len(c.devs)}, nil
}

// build calls clBuildProgram for every device, with poclQuiet before
// options if quiet is set.
func (c *context) build(h C.cl_program, options string, quiet bool) C.cl_int {
	if quiet {
		options = poclQuiet + options
	}
	opts := C.CString(options)
	defer C.free(unsafe.Pointer(opts))
	return C.clBuildProgram(h, C.cl_uint(len(c.devs)), &c.devs[0], opts, nil, nil)
}

// buildLog returns the build logs of every device that has one.
func (c *context) buildLog(h C.cl_program) string {
	var logs []string
	for _, d := range c.devs {
		var size C.size_t
		if C.clGetProgramBuildInfo(h, d, C.CL_PROGRAM_BUILD_LOG, 0, nil, &size) != C.CL_SUCCESS || size <= 1 {
			continue
		}
		buf := make([]byte, size)
		if C.clGetProgramBuildInfo(h, d, C.CL_PROGRAM_BUILD_LOG, size, unsafe.Pointer(&buf[0]), nil) != C.CL_SUCCESS {
			continue
		}
		if s := cString(buf); s != "" {
			logs = append(logs, s)
		}
	}
	return strings.Join(logs, "\n")
}

// Release releases the context, then gives the C heap's free memory back
// to the system (cmalloc.Trim): what the driver freed.
func (c *context) Release() error {
	c.releases.close()
	err := check("clReleaseContext", C.clReleaseContext(c.h))
	cmalloc.Trim()
	return err
}

type program struct {
	h    C.cl_program
	ndev int
}

func (p *program) Binaries() ([][]byte, error) {
	sizes := make([]C.size_t, p.ndev)
	if err := check("clGetProgramInfo", C.clGetProgramInfo(p.h, C.CL_PROGRAM_BINARY_SIZES,
		C.size_t(len(sizes))*C.size_t(unsafe.Sizeof(sizes[0])), unsafe.Pointer(&sizes[0]), nil)); err != nil {
		return nil, err
	}
	n := p.ndev
	ptrs := (*[1 << 20]*C.uchar)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.uchar)(nil)))))[:n:n]
	defer func() {
		for _, q := range ptrs {
			C.free(unsafe.Pointer(q))
		}
		C.free(unsafe.Pointer(&ptrs[0]))
	}()
	for i, s := range sizes {
		ptrs[i] = (*C.uchar)(C.malloc(s + 1))
	}
	if err := check("clGetProgramInfo", C.clGetProgramInfo(p.h, C.CL_PROGRAM_BINARIES,
		C.size_t(n)*C.size_t(unsafe.Sizeof(ptrs[0])), unsafe.Pointer(&ptrs[0]), nil)); err != nil {
		return nil, err
	}
	out := make([][]byte, n)
	for i, s := range sizes {
		out[i] = C.GoBytes(unsafe.Pointer(ptrs[i]), C.int(s))
	}
	return out, nil
}

// KernelNames lists the program's kernels. It asks for their number
// first: NVIDIA's OpenCL crashes the process when asked for the names of
// a program that has none.
func (p *program) KernelNames() ([]string, error) {
	n, err := p.numKernels()
	if err != nil || n == 0 {
		return nil, err
	}
	var size C.size_t
	if err := check("clGetProgramInfo", C.clGetProgramInfo(p.h, C.CL_PROGRAM_KERNEL_NAMES, 0, nil, &size)); err != nil {
		return nil, err
	}
	if size <= 1 {
		return nil, nil
	}
	buf := make([]byte, size)
	if err := check("clGetProgramInfo", C.clGetProgramInfo(p.h, C.CL_PROGRAM_KERNEL_NAMES, size, unsafe.Pointer(&buf[0]), nil)); err != nil {
		return nil, err
	}
	return strings.Split(cString(buf), ";"), nil
}

// numKernels returns the number of kernels the program defines.
func (p *program) numKernels() (int, error) {
	var n C.size_t
	if err := check("clGetProgramInfo", C.clGetProgramInfo(p.h, C.CL_PROGRAM_NUM_KERNELS, C.size_t(unsafe.Sizeof(n)), unsafe.Pointer(&n), nil)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// NewKernel creates the kernel called name. A program without kernels is
// refused before clCreateKernel, whose drivers differ on it.
func (p *program) NewKernel(name string) (driver.Kernel, error) {
	if n, err := p.numKernels(); err == nil && n == 0 {
		return nil, newError("clCreateKernel", C.CL_INVALID_KERNEL_NAME, "")
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var code C.cl_int
	end := sigsave.Keep()
	h := C.clCreateKernel(p.h, cname, &code)
	end()
	if err := check("clCreateKernel", code); err != nil {
		return nil, err
	}
	return kernel{h, new(atomic.Bool)}, nil
}

func (p *program) Release() error { return check("clReleaseProgram", C.clReleaseProgram(p.h)) }

// kernel is a kernel object; ran is set once it has been launched: PoCL
// compiles a kernel's work-group function at its first launch, so that
// launch keeps Go's signal handlers (sigsave) and later ones pay one
// atomic load.
type kernel struct {
	h   C.cl_kernel
	ran *atomic.Bool
}

// first brackets k's first launch, launch, with sigsave.
func (k kernel) first(launch func() error) error {
	defer sigsave.Keep()()
	k.ran.Store(true)
	return launch()
}

func (k kernel) SetArgBuffer(i int, b driver.Buffer) error {
	var m C.cl_mem
	if b != nil {
		bb, ok := b.(buffer)
		if !ok {
			return fmt.Errorf("clSetKernelArg: buffer of another backend (%T)", b)
		}
		m = bb.h
	}
	return check("clSetKernelArg", C.dgen_set_arg_mem(k.h, C.cl_uint(i), m))
}

func (k kernel) SetArgScalar(i int, size uintptr, v uint64) error {
	return check("clSetKernelArg", C.dgen_set_arg_scalar(k.h, C.cl_uint(i), C.size_t(size), C.cl_ulong(v)))
}

func (k kernel) SetArgBytes(i int, size uintptr, p unsafe.Pointer) error {
	return check("clSetKernelArg", C.clSetKernelArg(k.h, C.cl_uint(i), C.size_t(size), p))
}

func (k kernel) SetArgLocal(i int, size uintptr) error {
	return check("clSetKernelArg", C.dgen_set_arg_local(k.h, C.cl_uint(i), C.size_t(size)))
}

func (k kernel) NumArgs() (int, error) {
	var n C.cl_uint
	if err := check("clGetKernelInfo", C.clGetKernelInfo(k.h, C.CL_KERNEL_NUM_ARGS, C.size_t(unsafe.Sizeof(n)), unsafe.Pointer(&n), nil)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// kernelValue reads a fixed-size work-group property of k on d into v.
func kernelValue[T any](k kernel, d C.cl_device_id, param C.cl_kernel_work_group_info, v *T) error {
	return check("clGetKernelWorkGroupInfo", C.clGetKernelWorkGroupInfo(k.h, d, param, C.size_t(unsafe.Sizeof(*v)), unsafe.Pointer(v), nil))
}

func (k kernel) WorkGroupInfo(device uintptr) (driver.KernelWorkGroupInfo, error) {
	d := *(*C.cl_device_id)(unsafe.Pointer(&device))
	var (
		wg, mult    C.size_t
		local, priv C.cl_ulong
		reqd        [3]C.size_t
	)
	err := errors.Join(
		kernelValue(k, d, C.CL_KERNEL_WORK_GROUP_SIZE, &wg),
		kernelValue(k, d, C.CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, &mult),
		kernelValue(k, d, C.CL_KERNEL_LOCAL_MEM_SIZE, &local),
		kernelValue(k, d, C.CL_KERNEL_PRIVATE_MEM_SIZE, &priv),
		kernelValue(k, d, C.CL_KERNEL_COMPILE_WORK_GROUP_SIZE, &reqd))
	return driver.KernelWorkGroupInfo{WorkGroupSize: int(wg), PreferredMultiple: int(mult), LocalMemSize: int64(local), PrivateMemSize: int64(priv),
		CompileWorkGroupSize: [3]int{int(reqd[0]), int(reqd[1]), int(reqd[2])}}, err
}

func (k kernel) Release() error { return check("clReleaseKernel", C.clReleaseKernel(k.h)) }

// buffer is a memory object of the context c: a buffer, a sub-buffer or
// an image.
type buffer struct {
	h C.cl_mem
	c *context
}

// Release releases the memory object, after the commands enqueued so far
// where its context defers releases (release.go).
func (b buffer) Release() error { return b.c.release(b.h) }

// queue is a command queue of the context c.
type queue struct {
	h C.cl_command_queue
	c *context
}

// waitList converts wait into OpenCL events in buf (grown if needed).
func waitList(buf []C.cl_event, wait []driver.Event) ([]C.cl_event, *C.cl_event, error) {
	for _, e := range wait {
		ev, ok := e.(event)
		if !ok {
			return nil, nil, fmt.Errorf("wait list: event of another backend (%T)", e)
		}
		buf = append(buf, ev.h)
	}
	if len(buf) == 0 {
		return buf, nil, nil
	}
	return buf, &buf[0], nil
}

func (q queue) EnqueueKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) (driver.Event, error) {
	var ev C.cl_event
	if err := q.enqueueKernel(k, r, wait, &ev); err != nil {
		return nil, err
	}
	return event{ev}, nil
}

func (q queue) SubmitKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event) error {
	return q.enqueueKernel(k, r, wait, nil)
}

// enqueueKernel launches k, storing its event in ev unless ev is nil.
func (q queue) enqueueKernel(k driver.Kernel, r driver.NDRange, wait []driver.Event, ev *C.cl_event) error {
	kk, ok := k.(kernel)
	if !ok {
		return fmt.Errorf("clEnqueueNDRangeKernel: kernel of another backend (%T)", k)
	}
	if !kk.ran.Load() {
		return kk.first(func() error { return q.enqueueKernel(k, r, wait, ev) })
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return err
	}
	var global, local [3]C.size_t
	for i := 0; i < 3; i++ {
		global[i], local[i] = C.size_t(r.Global[i]), C.size_t(r.Local[i])
	}
	lp := &local[0]
	if r.Local == [3]int{} {
		lp = nil
	}
	var offset [3]C.size_t
	code := C.clEnqueueNDRangeKernel(q.h, kk.h, C.cl_uint(r.Dims), offsetOf(&r, &offset), &global[0], lp, C.cl_uint(len(wl)), wp, ev)
	return queueError(q.h, "clEnqueueNDRangeKernel", code)
}

func asBuffer(call string, b driver.Buffer) (C.cl_mem, error) {
	bb, ok := b.(buffer)
	if !ok {
		return nil, fmt.Errorf("%s: buffer of another backend (%T)", call, b)
	}
	return bb.h, nil
}

func (q queue) ReadBuffer(b driver.Buffer, blocking bool, offset, size int64, dst unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.transfer(true, b, blocking, offset, size, dst, wait)
}

func (q queue) WriteBuffer(b driver.Buffer, blocking bool, offset, size int64, src unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	return q.transfer(false, b, blocking, offset, size, src, wait)
}

// transfer enqueues a read (into p) or a write (from p) of b. A blocking
// transfer asks for no event and returns nil.
func (q queue) transfer(read bool, b driver.Buffer, blocking bool, offset, size int64, p unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	call := "clEnqueueWriteBuffer"
	if read {
		call = "clEnqueueReadBuffer"
	}
	m, err := asBuffer(call, b)
	if err != nil {
		return nil, err
	}
	if !blocking {
		return q.transferAsync(call, read, m, offset, size, p, wait)
	}
	// Every pointer here is used only during the call (noescape).
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	var r C.int
	if read {
		r = 1
	}
	code := C.dgen_transfer(C.uintptr_t(uintptr(unsafe.Pointer(q.h))), C.uintptr_t(uintptr(unsafe.Pointer(m))), r, C.size_t(offset), C.size_t(size), (*C.uchar)(p), C.cl_uint(len(wl)), wp)
	if isOutOfMemory(code) && q.c.drainReleases() {
		// NVIDIA's OpenCL makes a buffer resident at its first use (release.go).
		code = C.dgen_transfer(C.uintptr_t(uintptr(unsafe.Pointer(q.h))), C.uintptr_t(uintptr(unsafe.Pointer(m))), r, C.size_t(offset), C.size_t(size), (*C.uchar)(p), C.cl_uint(len(wl)), wp)
	}
	return nil, queueError(q.h, call, code)
}

// transferAsync is transfer without blocking, through the bindings that
// are not noescape: the device uses p after the call returns.
func (q queue) transferAsync(call string, read bool, m C.cl_mem, offset, size int64, p unsafe.Pointer, wait []driver.Event) (driver.Event, error) {
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	var ev C.cl_event
	var code C.cl_int
	if read {
		code = C.dgen_read_async(q.h, m, C.size_t(offset), C.size_t(size), p, C.cl_uint(len(wl)), wp, &ev)
	} else {
		code = C.dgen_write_async(q.h, m, C.size_t(offset), C.size_t(size), p, C.cl_uint(len(wl)), wp, &ev)
	}
	if err := queueError(q.h, call, code); err != nil {
		return nil, err
	}
	return event{ev}, nil
}

func (q queue) FillBuffer(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) (driver.Event, error) {
	var ev C.cl_event
	if err := q.fill(b, pattern, offset, size, wait, &ev); err != nil {
		return nil, err
	}
	return event{ev}, nil
}

// SubmitFill implements driver.SubmitQueue.
func (q queue) SubmitFill(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) error {
	return q.fill(b, pattern, offset, size, wait, nil)
}

// fill enqueues a fill, storing its event in ev unless ev is nil.
func (q queue) fill(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event, ev *C.cl_event) error {
	m, err := asBuffer("clEnqueueFillBuffer", b)
	if err != nil {
		return err
	}
	if len(pattern) == 0 {
		return check("clEnqueueFillBuffer", C.CL_INVALID_VALUE)
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return err
	}
	code := C.clEnqueueFillBuffer(q.h, m, unsafe.Pointer(&pattern[0]), C.size_t(len(pattern)), C.size_t(offset), C.size_t(size), C.cl_uint(len(wl)), wp, ev)
	return queueError(q.h, "clEnqueueFillBuffer", code)
}

func (q queue) CopyBuffer(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) (driver.Event, error) {
	var ev C.cl_event
	if err := q.copyBuffer(src, dst, srcOffset, dstOffset, size, wait, &ev); err != nil {
		return nil, err
	}
	return event{ev}, nil
}

// SubmitCopy implements driver.SubmitQueue.
func (q queue) SubmitCopy(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) error {
	return q.copyBuffer(src, dst, srcOffset, dstOffset, size, wait, nil)
}

// copyBuffer enqueues a copy, storing its event in ev unless ev is nil.
func (q queue) copyBuffer(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event, ev *C.cl_event) error {
	s, err := asBuffer("clEnqueueCopyBuffer", src)
	if err != nil {
		return err
	}
	d, err := asBuffer("clEnqueueCopyBuffer", dst)
	if err != nil {
		return err
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return err
	}
	code := C.clEnqueueCopyBuffer(q.h, s, d, C.size_t(srcOffset), C.size_t(dstOffset), C.size_t(size), C.cl_uint(len(wl)), wp, ev)
	return queueError(q.h, "clEnqueueCopyBuffer", code)
}

var _ driver.SubmitQueue = queue{}

func (q queue) Marker(wait []driver.Event) (driver.Event, error) {
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	var ev C.cl_event
	if err := queueError(q.h, "clEnqueueMarkerWithWaitList", C.clEnqueueMarkerWithWaitList(q.h, C.cl_uint(len(wl)), wp, &ev)); err != nil {
		return nil, err
	}
	return event{ev}, nil
}

func (q queue) Flush() error  { return queueError(q.h, "clFlush", C.clFlush(q.h)) }
func (q queue) Finish() error { return queueError(q.h, "clFinish", C.clFinish(q.h)) }

// Release releases the queue once no release enqueues a marker on it,
// and the objects pending release, which its commands may have used,
// are released (release.go).
func (q queue) Release() error {
	q.c.queues.Remove(q.h)
	if q.c.deferRelease {
		q.c.releases.flush()
	}
	return check("clReleaseCommandQueue", C.clReleaseCommandQueue(q.h))
}

type event struct{ h C.cl_event }

func (e event) Wait() error {
	code := C.clWaitForEvents(1, &e.h)
	if code == C.CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST {
		// The command failed: its status is the error.
		if _, err := e.Status(); err != nil {
			return err
		}
	}
	return eventError("clWaitForEvents", code)
}

func (e event) Status() (driver.EventStatus, error) {
	var s C.cl_int
	if err := eventError("clGetEventInfo", C.clGetEventInfo(e.h, C.CL_EVENT_COMMAND_EXECUTION_STATUS, C.size_t(unsafe.Sizeof(s)), unsafe.Pointer(&s), nil)); err != nil {
		return 0, err
	}
	if s < 0 {
		return 0, statusError(s)
	}
	return driver.EventStatus(s), nil
}

func (e event) Profile() (driver.Timing, error) {
	var t [4]C.cl_ulong
	if err := check("clGetEventProfilingInfo", C.dgen_times(e.h, &t[0], 4)); err != nil {
		return driver.Timing{}, err
	}
	return driver.Timing{Queued: uint64(t[0]), Submitted: uint64(t[1]), Started: uint64(t[2]), Ended: uint64(t[3])}, nil
}

var _ driver.Spanner = event{}

// Span implements driver.Spanner: one call into C, three OpenCL queries
// (the status, the start and the end), where Status and Profile make five
// calls.
func (e event) Span() (started, ended uint64, done bool, err error) {
	var t [2]C.cl_ulong
	switch code := C.dgen_span(e.h, &t[0]); code {
	case C.CL_SUCCESS:
		return uint64(t[0]), uint64(t[1]), true, nil
	case 1:
		return 0, 0, false, nil
	default:
		return 0, 0, true, check("clGetEventProfilingInfo", code)
	}
}

func (e event) Release() error { return check("clReleaseEvent", C.clReleaseEvent(e.h)) }
