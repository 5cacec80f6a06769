package core

import (
	"fmt"
	"sync/atomic"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// Recording a command graph (graph.go): Queue.Record and Graph.Update hand
// their functions a recording queue of their own, whose commands the
// enqueue paths hand to the hooks below instead of the driver.

// recording is the state of a recording queue, which Record and Update
// make for their functions: the graph, and for an update the launch it
// collects. Once the function has returned, ended is set, and the queue
// records nothing more.
type recording struct {
	g     *Graph
	upd   *graphUpdate
	ended atomic.Bool
}

// Record records into a new graph the commands that record enqueues on
// the queue it is given, and prepares the graph for Launch. name names the
// graph in errors and traces.
//
// Recording. record receives a recording queue of its own, on q's device
// (CUDA's stream capture into a stream of its own, SYCL's
// command_graph::begin_recording): what it enqueues there is recorded, not
// run, and q itself keeps running the commands of every other goroutine
// meanwhile. Any number of goroutines may record on q at once. The
// recording queue records nothing once record has returned: a command on
// it then is an error. Graphs do not nest: Record and Graph.Launch on a
// recording queue are errors.
//
// What a graph records, as CUDA Graphs and SYCL graphs define it:
//   - Kernel launches, with their arguments as set when recorded: values
//     (scalars, structs) are captured, and Graph.Update changes them;
//     buffers and samplers are used as they are at each launch. Each
//     launch keeps the specialization-constant values it was recorded
//     with, its own, its queue's (Queue.WithSpec) or the context's then: a
//     later SpecConst.Set changes no recorded launch, and traces name each
//     after its values.
//   - Fill and CopyTo, with Fill's value captured.
//   - Transfers between a buffer and pinned memory (Buffer.WriteAsync and
//     ReadAsync with a Pinned): each launch reads the pinned memory anew,
//     or writes it, so that a program puts the next frame in its Pinned
//     and launches the graph. The host must not touch that memory while a
//     launch may copy it (wait for the launch, with Queue.Marker or
//     Finish); Pinned.Free waits for the launches that use it, and a
//     launch after Free is an error wrapping ErrFreed.
//   - Allocations on the recording queue, which belong to the graph: it
//     frees them when it is released.
//
// What it refuses, with an error that records nothing (record may go
// on): a blocking transfer of a Go slice (Buffer.Write, Read, WriteAt,
// ReadAt), whose host memory the graph could not read or write at each
// launch (use WriteAsync or ReadAsync with pinned memory); a device
// global's Read or Write (write it before Graph.Launch, or pass the value
// as a kernel argument, which the graph captures and Update changes);
// image commands; EnqueueEvent and Queue.Marker, whose events would
// complete before the graph runs; and a wait list. Recorded commands run
// in the order recorded, each after the one before, and create no events:
// a recorded Fill or CopyTo returns a nil Event.
//
// Handles. Queue.Node records one command and returns its handle, which
// Graph.Update takes to change that launch's arguments and range.
//
// Parameters. BufferParam and ValueParam make a buffer or a value that the
// graph recorded a parameter, which each launch binds (Graph.LaunchWith):
// one graph serves many requests, each with buffers and values of its own.
//
// Device times. A launch of a traced graph is one task of kind graph,
// named "graph NAME", at the line of the launch, holding a task per
// command at the line that recorded it. Where the context reports device
// times (DGEN_TRACE with device= sampling), each command reports its own
// where the backend can time it alone (a loop of prepared commands; CUDA
// graphs' kernels through CUPTI), else the graph's task reports the
// launch as a whole (a command buffer, a CUDA graph without CUPTI).
//
// If record returns an error, Record returns it, wrapped, and no graph.
// Preparing the graph gives every recorded launch a kernel object of its
// own with its arguments set (a sampler argument as the context's sampler
// object, which must still be live when the graph launches), and has the
// backend prepare the commands for q: a command buffer or CUDA graph, or a
// list of commands replayed by one call, which is what a graph gets where
// the backend's own graph object cannot hold a command (a sampler
// argument, a pinned transfer in an OpenCL command buffer). A backend
// whose kernels take no samplers fails Record with an error naming the
// kernel and the argument.
func (q *Queue) Record(name string, record func(q *Queue) error) (*Graph, error) {
	if record == nil {
		return nil, fmt.Errorf("record graph %q: %w: nil function", name, ErrInvalidArgument)
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("record graph %q: %w", name, err)
	}
	if r := q.rec.Load(); r != nil {
		q.exit()
		return nil, fmt.Errorf("record graph %q: %w: the queue records graph %q (graphs do not nest)", name, ErrInvalidArgument, r.g.name)
	}
	g := &Graph{name: name, rangeName: "graph " + name, ctx: q.ctx, q: q}
	rec := &recording{g: g}
	q.ctx.graphs.add(g)
	q.exit() // record may close the context
	err := func() error {
		rq := q.recordingQueue(rec)
		defer rq.endRecording() // even if record panics
		return record(rq)
	}()
	if err == nil {
		err = g.finalize()
	} else {
		err = fmt.Errorf("record graph %q: %w", name, err)
	}
	if err != nil {
		g.Release()
		return nil, err
	}
	return g, nil
}

// recordingQueue returns a queue on q's device that records into r, its
// launches with the values of q where q is a view (Queue.WithSpec).
// Commands that rt does not record run on q's driver queue: the
// allocation and zeroing of storage.
func (q *Queue) recordingQueue(r *recording) *Queue {
	rq := &Queue{ctx: q.ctx, gate: q.gate, dev: q.dev, drv: q.drv, profiling: q.profiling, id: q.id, tq: q.tq, tune: q.tune, prio: q.prio, asked: q.asked, spec: q.spec}
	rq.rec.Store(r)
	return rq
}

// endRecording ends the recording of rq, a recording queue: it records
// nothing more, and the kernel instances that its launches parked in its
// slots go back to their prototypes' pools, where the next launch on any
// queue finds them (else each recording would strand its own until
// Close).
func (rq *Queue) endRecording() {
	rq.rec.Load().ended.Store(true)
	for i := range rq.specs {
		if h := rq.specs[i].Swap(nil); h != nil {
			h.unpark()
		}
	}
}

// Node records the one command that enqueue enqueues on q, a recording
// queue (the one Queue.Record hands its function), and returns its handle
// for Graph.Update. enqueue is called with q. A command that cannot be
// recorded, no command or more than one, or a q that is not recording, is
// an error, and nothing enqueue recorded is kept. Other goroutines must
// not enqueue on q meanwhile.
func (q *Queue) Node(enqueue func(q *Queue) error) (*GraphNode, error) {
	r := q.recorder()
	if r == nil || r.upd != nil || r.ended.Load() {
		return nil, fmt.Errorf("record node: %w: the queue is not recording (call Node on the queue that Record hands its function)", ErrInvalidArgument)
	}
	if enqueue == nil {
		return nil, fmt.Errorf("record node: %w: nil function", ErrInvalidArgument)
	}
	g := r.g
	g.mu.Lock()
	n0 := len(g.cmds)
	g.mu.Unlock()
	err := enqueue(q)
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.cmds) - n0; err == nil && n != 1 {
		err = fmt.Errorf("%w: the function recorded %d commands, not one", ErrInvalidArgument, n)
	}
	if err != nil {
		if g.state == graphRecording && len(g.cmds) > n0 {
			g.dropLocked(n0)
		}
		return nil, fmt.Errorf("graph %q: record node: %w", g.name, err)
	}
	return &GraphNode{g: g, i: n0}, nil
}

// dropLocked drops the commands recorded from the n-th on. Called with
// g.mu held while g records.
func (g *Graph) dropLocked(n int) {
	for i := n; i < len(g.cmds); i++ {
		if k := g.cmds[i].own; k != nil {
			k.Release()
		}
	}
	clear(g.cmds[n:])
	g.cmds = g.cmds[:n]
	g.collectUses()
}

// graphUpdate collects the launch that an Update's function enqueues.
type graphUpdate struct {
	n   int
	cmd graphCmd
}

// The recording hooks: the enqueue paths of rt call these when q.rec is
// set, after checking their arguments and before the driver sees anything.

// add appends c to the graph, or hands it to the update; it returns the
// error of a command that cannot be recorded.
func (r *recording) add(c graphCmd, wait []driver.Event) error {
	g := r.g
	if r.ended.Load() {
		return fmt.Errorf("%w: graph %q: its recording queue is used after the function that Record or Update called returned (it records nothing more)", ErrInvalidArgument, g.name)
	}
	if len(wait) > 0 {
		return fmt.Errorf("%w: graph %q: a recorded command waits for no events (the graph's commands run in the order recorded)", ErrInvalidArgument, g.name)
	}
	if r.upd != nil {
		if c.kind == trace.Kernel {
			r.upd.n++
			r.upd.cmd = c
			return nil
		}
		return fmt.Errorf("%w: graph %q: an update records one kernel launch, not a %s", ErrInvalidArgument, g.name, c.name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphRecording {
		return g.stateError("record into")
	}
	g.cmds = append(g.cmds, c)
	g.collectUses()
	return nil
}

// recordKernel records a launch of k, whose program's variant has the
// specialization-constant values specs, over r. skip is as for beginTask.
func (r *recording) recordKernel(q *Queue, k *kernelObject, specs []progcache.SpecValue, rg Range, wait []driver.Event, op launchOp, skip int) error {
	if op != opSubmit {
		return fmt.Errorf("%w: graph %q: a recorded launch has no event (use Enqueue, not EnqueueEvent)", ErrInvalidArgument, r.g.name)
	}
	args, mems, err := k.snapshot()
	if err != nil {
		return fmt.Errorf("graph %q: %w", r.g.name, err)
	}
	c := graphCmd{kind: trace.Kernel, name: k.label, kern: k, specs: specs, args: args, r: rg, mems: mems}
	if r.upd != nil {
		return r.add(c, wait)
	}
	c.node = q.tq.Site(trace.Kernel, k.label, skip+3)
	// The graph's own kernel object, made now, while the program is
	// certainly alive (the caller holds k); finalize sets its arguments.
	if c.own, err = k.prog.drv.NewKernel(k.name); err != nil {
		return fmt.Errorf("graph %q: kernel %q: %w", r.g.name, k.name, err)
	}
	if err := r.add(c, wait); err != nil {
		c.own.Release()
		return err
	}
	return nil
}

// recordCommand records a copy, fill or transfer. skip is as for
// beginTask.
func (r *recording) recordCommand(q *Queue, c graphCmd, wait []driver.Event, skip int) error {
	c.node = q.tq.Site(c.kind, c.name, skip+3)
	return r.add(c, wait)
}

// refuse is the error of a command that a graph cannot record.
func (r *recording) refuse(op, why string) error {
	return fmt.Errorf("%s: %w: graph %q is recording on this queue: %s", op, ErrInvalidArgument, r.g.name, why)
}

// snapshot returns k's arguments as set now, from its launch record, and
// the memory of its buffer arguments.
func (k *kernelObject) snapshot() ([]graphArg, []*Mem, error) {
	args := make([]graphArg, k.nargs)
	var mems []*Mem
	for i := range args {
		s := &k.args.Slots[i]
		switch {
		case s.Kind == driver.ArgBuffer:
			m := k.bufs[i]
			args[i] = graphArg{kind: driver.ArgBuffer, size: uintptr(s.Size), mem: m}
			mems = append(mems, m)
		case s.Kind == driver.ArgLocal:
			args[i] = graphArg{kind: driver.ArgLocal, size: uintptr(s.Size)}
		case s.Kind == driver.ArgSampler:
			args[i] = graphArg{kind: driver.ArgSampler, size: uintptr(s.Size), smp: k.samplers[i]}
		case s.Size == 0:
			return nil, nil, fmt.Errorf("kernel %q: argument %d: %w: not set", k.name, i, ErrInvalidArgument)
		case s.Size <= 8:
			args[i] = graphArg{kind: driver.ArgScalar, size: uintptr(s.Size), bits: s.Bits}
		default:
			args[i] = graphArg{kind: driver.ArgScalar, size: uintptr(s.Size), bytes: string(k.args.Bytes[s.Bits : s.Bits+uint64(s.Size)])}
		}
	}
	return args, mems, nil
}

// own makes m, allocated on a queue that records for r, the graph's.
func (r *recording) own(m *Mem) {
	if r.upd != nil || r.ended.Load() {
		return
	}
	g := r.g
	g.mu.Lock()
	g.owned = append(g.owned, memUse{m: m, gen: m.gen.Load()})
	g.mu.Unlock()
}

// queueRec is the recording state of a queue (Queue.rec).
type queueRec = atomic.Pointer[recording]

// recorder returns the recording state of q, nil when q does not record.
func (q *Queue) recorder() *recording {
	if q == nil {
		return nil
	}
	return q.rec.Load()
}

// recordOp records a copy or fill on q, which records into r. skip is as
// for beginTask.
func (q *Queue) recordOp(r *recording, op string, kind trace.CmdKind, dc driver.GraphCommand, mems []*Mem, wait []*Event, skip int) error {
	return q.recordEntered(r, graphCmd{kind: kind, name: op, dc: dc, mems: mems}, wait, skip+1)
}

// recordEntered records c on q, which records into r, inside q's enter.
// skip is as for beginTask.
func (q *Queue) recordEntered(r *recording, c graphCmd, wait []*Event, skip int) error {
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	defer q.exit()
	dw, err := q.driverEvents(wait)
	if err == nil {
		err = r.recordCommand(q, c, dw, skip+1)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// recordPinned records a transfer of size bytes between the buffer b (of
// memory m), from byte off, and the pinned memory p on q, which records into r: each
// launch of the graph reads p anew, or writes it. The caller holds p.mu.
func (q *Queue) recordPinned(r *recording, op string, kind trace.CmdKind, b driver.Buffer, off, size int64, m *Mem, p *pinnedMem, wait []*Event) error {
	if size == 0 {
		return nil
	}
	dc := driver.GraphCommand{Kind: driver.GraphWrite, Src: p.drv, Dst: b, DstOffset: off, Size: size, Host: p.p}
	if kind == trace.Read {
		dc = driver.GraphCommand{Kind: driver.GraphRead, Src: b, SrcOffset: off, Dst: p.drv, Size: size, Host: p.p}
	}
	return q.recordEntered(r, graphCmd{kind: kind, name: op, dc: dc, mems: []*Mem{m}, pin: p}, wait, 2)
}

// recordTransfer refuses the blocking transfer x, which a graph cannot
// record: its host memory is a Go slice or value, which a launch could
// neither read anew nor write.
func (r *recording) recordTransfer(x *xfer) error {
	why := "a blocking write of Go memory cannot be recorded: the graph would replay its bytes as they are now, not as they are at each launch; write from pinned memory with WriteAsync (rt.NewPinned), which each launch reads anew"
	switch x.kind {
	case trace.Read:
		why = "a blocking read into Go memory cannot be recorded: it would return before the graph runs; read into pinned memory with ReadAsync (rt.NewPinned), which each launch writes"
	case trace.GlobalRead, trace.GlobalWrite:
		why = "a device global's transfer cannot be recorded: read or write it around Graph.Launch, or pass the value as a kernel argument, which the graph captures and Graph.Update changes"
	}
	return r.refuse(x.op, why+" (nothing was transferred or recorded)")
}
