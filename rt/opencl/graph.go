package opencl

/*
#cgo noescape dgen_replay
#cgo nocallback dgen_replay
#cgo noescape dgen_cb_launch
#cgo nocallback dgen_cb_launch
#include "dgen_graph.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/internal/sigsave"
	"github.com/dgen-go/dgen/rt/driver"
)

// graph implements driver.Graph: the commands in C memory, and the
// command buffer recorded from them where the device has one.
type graph struct {
	q     queue
	cmds  *C.dgen_gcmd // n commands in C memory
	n     int
	fns   *C.dgen_cb_fns
	cb    C.dgen_cb // nil: replayed as a loop
	stale bool      // an update since cb was recorded: record it anew before the next launch
	ran   atomic.Bool
}

// GraphCaps implements driver.GraphQueue: command buffers where the
// device has cl_khr_command_buffer with simultaneous use (PoCL's CPU
// device), and never for kernels with sampler arguments: PoCL 3.1's
// clCommandNDRangeKernelKHR retains a sampler argument through the address
// of its own copy of the argument's value instead of the sampler, so that
// it locks a mutex in arbitrary heap memory, which aborts the process
// ("PTHREAD ERROR in POclRetainSampler(): Invalid argument") or waits
// forever. Command buffers hold no transfers to or from host memory
// either: a graph with one replays as a loop.
func (q queue) GraphCaps() driver.GraphCaps {
	var f C.dgen_cb_fns
	if C.dgen_cb_load(q.h, &f) == 0 {
		return driver.GraphCaps{}
	}
	return driver.GraphCaps{Native: driver.CommandBuffer}
}

// NewGraph implements driver.GraphQueue: a command buffer when opt.Native
// asks for one, else the commands in C memory, replayed by one call.
func (q queue) NewGraph(cmds []driver.GraphCommand, opt driver.GraphOptions) (driver.Graph, error) {
	defer sigsave.Keep()()
	g := &graph{q: q, n: len(cmds)}
	if g.n > 0 {
		g.cmds = (*C.dgen_gcmd)(C.calloc(C.size_t(g.n), C.sizeof_dgen_gcmd))
	}
	for i, c := range cmds {
		if err := g.prepare(i, c); err != nil {
			g.Release()
			return nil, fmt.Errorf("command %d: %w", i, err)
		}
	}
	if !opt.Native {
		return g, nil
	}
	for i := range g.n {
		if g.cmd(i).kind > 2 {
			g.Release()
			return nil, fmt.Errorf("command %d: clCommandCopyBufferKHR: a command buffer holds no transfers to or from host memory", i)
		}
	}
	g.fns = (*C.dgen_cb_fns)(C.calloc(1, C.sizeof_dgen_cb_fns))
	if C.dgen_cb_load(q.h, g.fns) == 0 {
		g.Release()
		return nil, fmt.Errorf("clCreateCommandBufferKHR: the device has no cl_khr_command_buffer with simultaneous use")
	}
	if err := g.build(); err != nil {
		g.Release()
		return nil, err
	}
	return g, nil
}

// cmd returns the i-th prepared command.
func (g *graph) cmd(i int) *C.dgen_gcmd {
	return (*C.dgen_gcmd)(unsafe.Add(unsafe.Pointer(g.cmds), uintptr(i)*C.sizeof_dgen_gcmd))
}

// prepare fills the i-th prepared command from c.
func (g *graph) prepare(i int, c driver.GraphCommand) error {
	x := g.cmd(i)
	switch c.Kind {
	case driver.GraphKernel:
		k, ok := c.Kernel.(kernel)
		if !ok {
			return fmt.Errorf("kernel of another backend (%T)", c.Kernel)
		}
		x.kind, x.kernel = 0, k.h
		setRange(x, c.Range)
	case driver.GraphCopy:
		src, err := asBuffer("clEnqueueCopyBuffer", c.Src)
		if err != nil {
			return err
		}
		dst, err := asBuffer("clEnqueueCopyBuffer", c.Dst)
		if err != nil {
			return err
		}
		x.kind, x.src, x.dst = 1, src, dst
		x.src_off, x.dst_off, x.size = C.size_t(c.SrcOffset), C.size_t(c.DstOffset), C.size_t(c.Size)
	case driver.GraphFill:
		dst, err := asBuffer("clEnqueueFillBuffer", c.Dst)
		if err != nil {
			return err
		}
		if len(c.Data) == 0 {
			return check("clEnqueueFillBuffer", C.CL_INVALID_VALUE)
		}
		x.kind, x.dst, x.dst_off, x.size = 2, dst, C.size_t(c.DstOffset), C.size_t(c.Size)
		x.pattern, x.pattern_size = C.CBytes(c.Data), C.size_t(len(c.Data))
	case driver.GraphWrite:
		dst, err := asBuffer("clEnqueueWriteBuffer", c.Dst)
		if err != nil {
			return err
		}
		x.kind, x.dst, x.dst_off, x.size, x.host = 3, dst, C.size_t(c.DstOffset), C.size_t(c.Size), c.Host
	case driver.GraphRead:
		src, err := asBuffer("clEnqueueReadBuffer", c.Src)
		if err != nil {
			return err
		}
		x.kind, x.src, x.src_off, x.size, x.host = 4, src, C.size_t(c.SrcOffset), C.size_t(c.Size), c.Host
	default:
		return fmt.Errorf("unknown command kind %d", c.Kind)
	}
	return nil
}

// setRange sets the index space of a kernel command.
func setRange(x *C.dgen_gcmd, r driver.NDRange) {
	x.dims = C.cl_uint(r.Dims)
	for d := range 3 {
		x.global[d], x.local[d] = C.size_t(r.Global[d]), C.size_t(r.Local[d])
	}
	x.has_local = 0
	if r.Local != [3]int{} {
		x.has_local = 1
	}
}

// build records the commands into a new command buffer, releasing the
// old one: a command buffer captures the kernels' arguments when it is
// recorded, and this backend has no mutable dispatch.
func (g *graph) build() error {
	var cb C.dgen_cb
	var failed C.cl_uint
	code := C.dgen_cb_build(g.fns, g.q.h, g.cmds, C.cl_uint(g.n), &cb, &failed)
	if code != C.CL_SUCCESS {
		if int(failed) < g.n {
			return fmt.Errorf("command %d: %w", int(failed), check("clCommand*KHR", code))
		}
		return check("clCreateCommandBufferKHR", code)
	}
	if g.cb != nil {
		C.dgen_cb_release(g.fns, g.cb)
	}
	g.cb = cb
	return nil
}

// Launch implements driver.Graph: one call into C. The first launch may
// be the first of its kernels, which keeps Go's signal handlers (see
// kernel).
func (g *graph) Launch(wait []driver.Event, wantEvent bool) (driver.Event, error) {
	return g.launch(wait, wantEvent, nil)
}

// LaunchTimed implements driver.TimedGraph: an event per command when the
// graph replays as a loop, one for the whole command buffer else
// (launchEvent).
func (g *graph) LaunchTimed(wait []driver.Event) ([]driver.Event, driver.Event, error) {
	if g.n == 0 {
		ev, err := g.launch(wait, true, nil)
		return nil, ev, err
	}
	if g.cb != nil {
		before, err := g.q.Marker(wait)
		if err != nil {
			return nil, nil, err
		}
		ev, err := g.launch(nil, true, nil)
		if err != nil {
			before.Release()
			return nil, nil, err
		}
		return nil, launchEvent{before: before.(event), cb: ev.(event)}, nil
	}
	evs := make([]C.cl_event, g.n)
	if _, err := g.launch(wait, false, evs); err != nil {
		return nil, nil, err
	}
	out := make([]driver.Event, g.n)
	for i, e := range evs {
		out[i] = event{e}
	}
	return out, nil, nil
}

// launch launches g with an event for the whole launch when wantEvent is
// set, or one per command in evs when it is not nil (a loop only).
func (g *graph) launch(wait []driver.Event, wantEvent bool, evs []C.cl_event) (driver.Event, error) {
	if !g.ran.Load() {
		defer sigsave.Keep()()
		g.ran.Store(true)
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	var ev C.cl_event
	evp := &ev
	if !wantEvent {
		evp = nil
	}
	var evsp *C.cl_event
	if evs != nil {
		evsp = &evs[0]
	}
	if g.stale {
		if err := g.build(); err != nil {
			return nil, fmt.Errorf("record the updated command buffer: %w", err)
		}
		g.stale = false
	}
	if g.cb != nil {
		if err := queueError(g.q.h, "clEnqueueCommandBufferKHR", C.dgen_cb_launch(g.fns, g.cb, C.cl_uint(len(wl)), wp, evp)); err != nil {
			return nil, err
		}
	} else {
		var failed C.cl_uint
		code := C.dgen_replay(g.q.h, g.cmds, C.cl_uint(g.n), C.cl_uint(len(wl)), wp, evp, evsp, &failed)
		if code != C.CL_SUCCESS {
			return nil, fmt.Errorf("command %d: %w", int(failed), queueError(g.q.h, "replay", code))
		}
	}
	if !wantEvent {
		return nil, nil
	}
	return event{ev}, nil
}

// launchEvent is the event of a command buffer's launch for its device
// times: a marker enqueued just before it, and the command buffer's own
// event. PoCL 3.1 gives clEnqueueCommandBufferKHR the event of a command
// that runs after the buffer's commands: it starts when they have ended,
// and its times cover a fraction of a microsecond, whatever the commands
// took. On an in-order queue the buffer's commands start once the marker
// has ended, so the launch runs from the marker's end to the end of the
// buffer's event, on every implementation.
type launchEvent struct {
	before, cb event
}

func (e launchEvent) Wait() error { return e.cb.Wait() }

func (e launchEvent) Status() (driver.EventStatus, error) { return e.cb.Status() }

// Profile returns the marker's queued and submitted times, its end as
// the start, and the command buffer's end.
func (e launchEvent) Profile() (driver.Timing, error) {
	b, err := e.before.Profile()
	if err != nil {
		return driver.Timing{}, err
	}
	t, err := e.cb.Profile()
	if err != nil {
		return driver.Timing{}, err
	}
	return driver.Timing{Queued: b.Queued, Submitted: b.Submitted, Started: b.Ended, Ended: t.Ended}, nil
}

// Span implements driver.Spanner.
func (e launchEvent) Span() (started, ended uint64, done bool, err error) {
	_, ended, done, err = e.cb.Span()
	if !done || err != nil {
		return 0, 0, done, err
	}
	// The queue is in order: the marker has completed too.
	_, started, _, err = e.before.Span()
	return started, ended, true, err
}

func (e launchEvent) Release() error { return errors.Join(e.before.Release(), e.cb.Release()) }

// Update implements driver.Graph.
func (g *graph) Update(i int, r driver.NDRange) error {
	if i < 0 || i >= g.n || g.cmd(i).kind != 0 {
		return fmt.Errorf("update command %d: not a kernel launch of the graph", i)
	}
	setRange(g.cmd(i), r)
	// The command buffer holds the arguments it was recorded with, and
	// this binding has no mutable dispatch: record it anew, once, before
	// the next launch, however many updates come first.
	g.stale = g.cb != nil
	return nil
}

// SetCommand implements driver.CommandGraph: command i, a copy, fill or
// transfer, takes c's buffers. Like Update, it leaves a command buffer to
// be recorded anew before the next launch: PoCL, the device with command
// buffers here, has no cl_khr_command_buffer_mutable_dispatch.
func (g *graph) SetCommand(i int, c driver.GraphCommand) error {
	kinds := map[driver.GraphCommandKind]C.int{driver.GraphCopy: 1, driver.GraphFill: 2, driver.GraphWrite: 3, driver.GraphRead: 4}
	k, ok := kinds[c.Kind]
	if i < 0 || i >= g.n || !ok || g.cmd(i).kind != k {
		return fmt.Errorf("set command %d: not a command of kind %d of the graph", i, c.Kind)
	}
	x := g.cmd(i)
	if c.Kind == driver.GraphCopy || c.Kind == driver.GraphRead {
		src, err := asBuffer("clEnqueueCopyBuffer", c.Src)
		if err != nil {
			return err
		}
		x.src = src
	}
	if c.Kind != driver.GraphRead {
		dst, err := asBuffer("clEnqueueCopyBuffer", c.Dst)
		if err != nil {
			return err
		}
		x.dst = dst
	}
	g.stale = g.cb != nil
	return nil
}

// Release implements driver.Graph.
func (g *graph) Release() error {
	var errs []error
	if g.cb != nil {
		errs = append(errs, check("clReleaseCommandBufferKHR", C.dgen_cb_release(g.fns, g.cb)))
		g.cb = nil
	}
	if g.fns != nil {
		C.free(unsafe.Pointer(g.fns))
		g.fns = nil
	}
	for i := range g.n {
		if p := g.cmd(i).pattern; p != nil {
			C.free(p)
		}
	}
	if g.cmds != nil {
		C.free(unsafe.Pointer(g.cmds))
		g.cmds = nil
	}
	g.n = 0
	return errors.Join(errs...)
}

var (
	_ driver.GraphQueue   = queue{}
	_ driver.Graph        = (*graph)(nil)
	_ driver.TimedGraph   = (*graph)(nil)
	_ driver.CommandGraph = (*graph)(nil)
	_ driver.Spanner      = launchEvent{}
)
