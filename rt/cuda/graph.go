package cuda

/*
#cgo noescape dgen_gcmd_issue
#cgo nocallback dgen_gcmd_issue
#cgo noescape dgen_graph_launch
#cgo nocallback dgen_graph_launch
#include <stdlib.h>
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// graph implements driver.Graph: the commands in C memory, and the CUDA
// graph captured from them where the driver has graphs.
type graph struct {
	q       *queue
	cmds    *C.dgen_gcmd // n commands in C memory
	n       int
	kernels []*kernel // by command, nil for other commands
	capture C.CUstream
	g       C.CUgraph
	x       C.CUgraphExec // nil: replayed as a loop
	stale   bool          // an update the executable graph could not take: capture anew before the next launch
}

// GraphCaps implements driver.GraphQueue: CUDA graphs where the driver
// has the graph functions, with transfers to and from pinned memory as
// copies from and to its device address. (Kernels of this backend take no
// samplers.)
func (q *queue) GraphCaps() driver.GraphCaps {
	if C.dgen_graph_load() == 0 {
		return driver.GraphCaps{}
	}
	return driver.GraphCaps{Native: driver.CUDAGraph, NativeHost: true}
}

// NewGraph implements driver.GraphQueue: it prepares the commands and,
// when opt.Native asks for it, captures them on a stream of the graph's
// own into an executable graph.
func (q *queue) NewGraph(cmds []driver.GraphCommand, opt driver.GraphOptions) (driver.Graph, error) {
	g := &graph{q: q, n: len(cmds), kernels: make([]*kernel, len(cmds))}
	if g.n > 0 {
		g.cmds = (*C.dgen_gcmd)(C.calloc(C.size_t(g.n), C.sizeof_dgen_gcmd))
	}
	for i, c := range cmds {
		if err := g.prepare(i, c); err != nil {
			g.Release()
			return nil, fmt.Errorf("command %d: %w", i, err)
		}
	}
	if opt.Native {
		if C.dgen_graph_load() == 0 {
			g.Release()
			return nil, errors.New("cuGraphInstantiate: the driver has no CUDA graphs")
		}
		if err := q.d.createStream(&g.capture, 0); err != nil {
			g.Release()
			return nil, err
		}
		if err := g.build(); err != nil {
			g.Release()
			return nil, err
		}
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
		k, ok := c.Kernel.(*kernel)
		if !ok {
			return fmt.Errorf("cuLaunchKernel: kernel of another backend (%T)", c.Kernel)
		}
		g.kernels[i] = k
		x.kind = C.GCMD_KERNEL
		return g.setKernel(i, c.Range)
	case driver.GraphCopy, driver.GraphWrite, driver.GraphRead:
		// A transfer to or from pinned memory copies from or to its
		// device address, where the launch reads or writes the host
		// memory.
		const call = "cuMemcpyAsync"
		s, err := asBuffer(call, c.Src)
		if err != nil {
			return err
		}
		d, err := asBuffer(call, c.Dst)
		if err != nil {
			return err
		}
		if err := errors.Join(s.span(call, c.SrcOffset, c.Size), d.span(call, c.DstOffset, c.Size)); err != nil {
			return err
		}
		x.kind, x.src, x.dst, x.size = C.GCMD_COPY, s.ptr+C.CUdeviceptr(c.SrcOffset), d.ptr+C.CUdeviceptr(c.DstOffset), C.size_t(c.Size)
	case driver.GraphFill:
		return g.prepareFill(x, c)
	default:
		return fmt.Errorf("unknown command kind %d", c.Kind)
	}
	return nil
}

// prepareFill prepares a fill: a memset node.
func (g *graph) prepareFill(x *C.dgen_gcmd, c driver.GraphCommand) error {
	const call = "cuMemsetD32Async"
	d, err := asBuffer(call, c.Dst)
	if err != nil {
		return err
	}
	n := int64(len(c.Data))
	if n == 0 || (n > 2 && n%4 != 0) || c.Size%n != 0 || c.DstOffset%n != 0 {
		return &driver.Error{Call: call, Code: 1, Name: fmt.Sprintf("CUDA_ERROR_INVALID_VALUE (a pattern of %d bytes over %d bytes at %d)", n, c.Size, c.DstOffset)}
	}
	if err := d.span(call, c.DstOffset, c.Size); err != nil {
		return err
	}
	x.kind, x.dst, x.size = C.GCMD_FILL, d.ptr+C.CUdeviceptr(c.DstOffset), C.size_t(c.Size)
	x.pattern, x.pattern_size = (*C.uchar)(C.CBytes(c.Data)), C.size_t(n)
	return nil
}

// setKernel sets command i's function, shape and arguments from its
// kernel object and r.
func (g *graph) setKernel(i int, r driver.NDRange) error {
	k, x := g.kernels[i], g.cmd(i)
	l, err := k.prepare(g.q, &r)
	if err != nil {
		return err
	}
	x.f, x.params, x.shared = k.fns[g.q.dev], (*unsafe.Pointer)(unsafe.Pointer(k.params)), l.shared
	for d := range 3 {
		x.grid[d], x.block[d] = l.grid[d], l.block[d]
	}
	return nil
}

// build captures the commands into a new executable graph, releasing the
// old one.
func (g *graph) build() error {
	var cg C.CUgraph
	var cx C.CUgraphExec
	var failed C.int
	if r := C.dgen_graph_capture(g.q.d.ctx, g.capture, g.cmds, C.int(g.n), &cg, &cx, &failed); r != 0 {
		if int(failed) < g.n {
			return fmt.Errorf("command %d: %w", int(failed), cuError("cuStreamBeginCapture", r))
		}
		return cuError("cuGraphInstantiate", r)
	}
	if err := g.destroy(); err != nil {
		C.dgen_graph_destroy(g.q.d.ctx, cg, cx)
		return err
	}
	g.g, g.x = cg, cx
	return nil
}

// destroy destroys the executable graph and the graph.
func (g *graph) destroy() error {
	if g.g == nil && g.x == nil {
		return nil
	}
	err := cuError("cuGraphExecDestroy", C.dgen_graph_destroy(g.q.d.ctx, g.g, g.x))
	g.g, g.x = nil, nil
	return err
}

// Launch implements driver.Graph: one cgo call, and one cuGraphLaunch
// where the driver has graphs.
func (g *graph) Launch(wait []driver.Event, want bool) (driver.Event, error) {
	return g.launch(wait, want, nil)
}

// LaunchTimed implements driver.TimedGraph: on a kernel-timed queue, an
// event per kernel from its CUPTI record (none for other commands), once
// the queue's clock offset is known or when the graph's last command, a
// kernel, can measure it; else an event for the whole launch.
func (g *graph) LaunchTimed(wait []driver.Event) ([]driver.Event, driver.Event, error) {
	kt := g.q.kt
	if kt == nil || !kt.timesKnown() && !(g.endsWithKernel() && kt.wantsCalibration()) {
		ev, err := g.launch(wait, true, nil)
		return nil, ev, err
	}
	evs := make([]driver.Event, g.n)
	if _, err := g.launch(wait, false, evs); err != nil {
		return nil, nil, err
	}
	return evs, nil, nil
}

// endsWithKernel reports whether the graph's last command is a kernel.
func (g *graph) endsWithKernel() bool { return g.n > 0 && g.kernels[g.n-1] != nil }

// launch launches g, with an event for the whole launch when want is set;
// on a kernel-timed queue with evs not nil, it fills evs with an event
// per kernel.
func (g *graph) launch(wait []driver.Event, want bool, evs []driver.Event) (driver.Event, error) {
	if g.stale {
		if err := g.build(); err != nil {
			return nil, fmt.Errorf("capture the updated graph: %w", err)
		}
		g.stale = false
	}
	var wb [8]C.CUevent
	nw, wp, start, end, err := g.q.prologue(&wb, wait, want)
	if err != nil {
		return nil, err
	}
	kt := g.q.kt
	if kt == nil {
		return g.issue(nw, wp, start, end, want)
	}
	kt.launch.Lock()
	defer kt.launch.Unlock()
	var calib *cuEvent
	if evs != nil && g.endsWithKernel() && kt.wantsCalibration() {
		// The last kernel measures the clock offset, against a timed
		// event recorded just after the graph, which ends with it.
		if calib, err = g.q.d.timed.get(); err != nil {
			return nil, err
		}
		end = calib
	}
	kt.addGraph(g, evs, calib)
	ev, err := g.issue(nw, wp, start, end, want)
	if err != nil {
		kt.lose(fmt.Errorf("CUPTI kernel times: after a failed graph launch: %w", err))
	}
	return ev, err
}

// issue launches g in one cgo call.
func (g *graph) issue(nw C.int, wp *C.CUevent, start, end *cuEvent, want bool) (driver.Event, error) {
	var step C.int
	if g.x != nil {
		r := C.dgen_graph_launch(g.q.d.ctx, g.q.s, g.x, nw, wp, handle(start), handle(end), &step)
		return g.q.finish("cuGraphLaunch", r, step, start, end, want)
	}
	var failed C.int
	r := C.dgen_gcmd_issue(g.q.d.ctx, g.q.s, g.cmds, C.int(g.n), 0, nw, wp, handle(start), handle(end), &failed, &step)
	ev, err := g.q.finish("replay", r, step, start, end, want)
	if err != nil && int(failed) < g.n {
		return nil, fmt.Errorf("command %d: %w", int(failed), err)
	}
	return ev, err
}

// Update implements driver.Graph: the node of the executable graph takes
// the kernel object's arguments and r in place
// (cuGraphExecKernelNodeSetParams); where it cannot, the graph is captured
// anew, once, before the next launch.
// HoldsArgs implements driver.ArgsGraph: an executable graph copied its
// kernels' arguments into its nodes, unless it is replayed as a loop or
// an update left it to be captured again, from the kernel objects, at the
// next launch.
func (g *graph) HoldsArgs() bool { return g.x != nil && !g.stale }

func (g *graph) Update(i int, r driver.NDRange) error {
	if i < 0 || i >= g.n || g.kernels[i] == nil {
		return fmt.Errorf("update command %d: not a kernel launch of the graph", i)
	}
	if err := g.setKernel(i, r); err != nil {
		return fmt.Errorf("update command %d: %w", i, err)
	}
	if g.x == nil || g.stale {
		return nil
	}
	x := g.cmd(i)
	if x.node == nil || C.dgen_graph_set(g.q.d.ctx, g.x, x) != 0 {
		g.stale = true
	}
	return nil
}

// SetCommand implements driver.CommandGraph: command i, a copy or fill,
// takes c's buffers, and the node of the executable graph takes them in
// place (cuGraphExecMemcpyNodeSetParams, cuGraphExecMemsetNodeSetParams);
// where it cannot (a fill of a pattern of more than 4 bytes is several
// nodes, an old driver lacks the setters), the graph is captured anew,
// once, before the next launch.
func (g *graph) SetCommand(i int, c driver.GraphCommand) error {
	if i < 0 || i >= g.n || g.kernels[i] != nil {
		return fmt.Errorf("set command %d: not a copy or fill of the graph", i)
	}
	x := g.cmd(i)
	const call = "cuGraphExecMemcpyNodeSetParams"
	d, err := asBuffer(call, c.Dst)
	if err != nil {
		return err
	}
	if err := d.span(call, c.DstOffset, c.Size); err != nil {
		return err
	}
	switch {
	case x.kind == C.GCMD_FILL && c.Kind == driver.GraphFill:
		x.dst = d.ptr + C.CUdeviceptr(c.DstOffset)
	case x.kind == C.GCMD_COPY && c.Kind != driver.GraphFill && c.Kind != driver.GraphKernel:
		s, err := asBuffer(call, c.Src)
		if err != nil {
			return err
		}
		if err := s.span(call, c.SrcOffset, c.Size); err != nil {
			return err
		}
		x.src, x.dst = s.ptr+C.CUdeviceptr(c.SrcOffset), d.ptr+C.CUdeviceptr(c.DstOffset)
	default:
		return fmt.Errorf("set command %d: a command of another kind", i)
	}
	if g.x != nil && !g.stale && C.dgen_graph_set_cmd(g.q.d.ctx, g.x, x) != 0 {
		g.stale = true
	}
	return nil
}

// memsetNode returns the memset node that a fill of size bytes with
// pattern is captured as (CUDA_MEMSET_NODE_PARAMS' value, element size
// and width), false where it is captured as several nodes or none.
func memsetNode(pattern []byte, size int) (value uint32, elem, width int, ok bool) {
	var x C.dgen_gcmd
	x.kind, x.size, x.pattern_size = C.GCMD_FILL, C.size_t(size), C.size_t(len(pattern))
	if len(pattern) > 0 {
		x.pattern = (*C.uchar)(C.CBytes(pattern))
		defer C.free(unsafe.Pointer(x.pattern))
	}
	var p C.dgen_memset_params
	if C.dgen_memset_of(&x, &p) == 0 {
		return 0, 0, 0, false
	}
	return uint32(p.value), int(p.elementSize), int(p.width), true
}

// Release implements driver.Graph.
func (g *graph) Release() error {
	errs := []error{g.destroy()}
	if g.capture != 0 {
		errs = append(errs, g.q.d.destroyStream(g.capture))
		g.capture = 0
	}
	for i := range g.n {
		if p := g.cmd(i).pattern; p != nil {
			C.free(unsafe.Pointer(p))
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
	_ driver.GraphQueue   = (*queue)(nil)
	_ driver.Graph        = (*graph)(nil)
	_ driver.TimedGraph   = (*graph)(nil)
	_ driver.CommandGraph = (*graph)(nil)
)
