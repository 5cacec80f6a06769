package rt

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Command graphs: record once, replay many, as CUDA Graphs, SYCL's
// command_graph and OpenCL's cl_khr_command_buffer do. The four agree on
// the life of a graph, and so does Graph:
//
//   - record: Queue.Record puts a queue in recording mode while a function
//     runs; the commands it enqueues on the queue (generated launches,
//     Fill, CopyTo, writes of buffers and device globals) are recorded,
//     not executed.
//   - finalize: when that function returns, Record ends the recording and
//     prepares the commands for replay: each kernel launch gets a kernel
//     object of its own, with its arguments set once; the backend turns
//     the list into what replays fastest (an OpenCL command buffer, a CUDA
//     graph, a loop in C).
//   - launch: Launch enqueues every command on a queue of the graph's
//     context, in one backend call, as often as wanted.
//   - update: Update changes a recorded launch's arguments and range for
//     the launches that follow (cuGraphExecKernelNodeSetParams, SYCL's
//     command_graph::update(node)); the kernel cannot change.
//
// A recorded launch remembers its source location, so that a traced graph
// launch shows its commands at the lines that recorded them, inside one
// range named after the graph.

// Graph is a list of commands recorded on a queue, replayed with Launch.
// Its methods are safe for concurrent use, except that only the goroutine
// that called Record may enqueue on the queue while it records.
type Graph struct {
	name      string
	rangeName string
	ctx       *Context
	q         *Queue // the queue that recorded it
	rec       *recording

	umu sync.Mutex // serializes Update; taken before mu
	mu  sync.Mutex // guards what follows
	// state is graphRecording, graphFinal or graphReleased.
	state graphState
	cmds  []graphCmd
	uses  []memUse    // the memory the commands use, each once
	smps  []smpUse    // the samplers the commands use
	owned []memUse    // allocations made while recording: the graph frees them
	execs []graphExec // prepared for a queue each
}

// graphState is where a graph is in its life.
type graphState uint8

const (
	graphRecording graphState = iota
	graphFinal
	graphReleased
)

// graphCmd is one recorded command.
type graphCmd struct {
	kind trace.CmdKind
	name string      // the kernel's name or the command's
	node *trace.Node // where it was recorded
	// A kernel launch: the kernel object it was recorded from, its
	// arguments, its range, and the graph's own kernel object (made by
	// finalize) with those arguments set.
	kern *Kernel
	args []graphArg
	r    Range
	own  driver.Kernel
	// A copy, fill or write: the backend's command, buffers resolved.
	dc   driver.GraphCommand
	mems []*Mem // the memory it uses
}

// graphArg is a recorded kernel argument: a buffer (mem), a sampler
// (smp), local memory or a value.
type graphArg struct {
	kind  driver.ArgKind
	size  uintptr
	bits  uint64
	bytes string // a value of more than 8 bytes
	mem   *Mem
	smp   *samplerObject
}

// smpUse is a sampler argument of a recorded launch: command cmd's
// argument arg.
type smpUse struct {
	s        *samplerObject
	cmd, arg int
}

// check reports whether the sampler was released since it was recorded.
func (u smpUse) check() error {
	if err := u.s.check(); err != nil {
		return fmt.Errorf("argument %d: %w", u.arg, err)
	}
	return nil
}

// memUse is memory a graph uses, with its generation when recorded: a
// Free since then changes it.
type memUse struct {
	m   *Mem
	gen uint32
	cmd int // the first command that uses it
}

// graphExec is a graph prepared for one queue, as opt asked.
type graphExec struct {
	q   *Queue
	drv driver.Graph
	opt driver.GraphOptions
}

// recording is the state of a queue that records: the graph, and the
// goroutine that may enqueue. An update's private queue has upd set
// instead, and any goroutine may use it.
type recording struct {
	g   *Graph
	gid uint64
	upd *graphUpdate
}

// graphUpdate collects the launch that an Update's function enqueues.
type graphUpdate struct {
	n   int
	cmd graphCmd
}

// Record records into a new graph the commands that record enqueues on q,
// instead of running them, and prepares the graph for Launch. name names
// the graph in errors and traces. While record runs, only its goroutine
// may enqueue on q: another goroutine's command is an error, and nothing
// of it is recorded or run. Recorded commands wait for no events and
// create none: a recorded Fill or CopyTo returns a nil Event, and
// EnqueueEvent, a blocking read and a Marker are errors that record
// nothing (record may go on). An allocation on q while it records belongs
// to the graph, which frees it when it is released. If record returns an
// error, Record returns it, wrapped, and no graph.
//
// Preparing the graph gives every recorded launch a kernel object of its
// own with its arguments set (a sampler argument as the context's sampler
// object, which must still be live when the graph launches), and has the
// backend prepare the commands for q: a command buffer, or a list of
// launches replayed by one call, which is what a graph with a sampler
// argument gets where the backend's command buffers cannot hold one. A
// backend whose kernels take no samplers fails Record with an error naming
// the kernel and the argument.
func (q *Queue) Record(name string, record func(q *Queue) error) (*Graph, error) {
	if record == nil {
		return nil, fmt.Errorf("record graph %q: %w: nil function", name, ErrInvalidArgument)
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("record graph %q: %w", name, err)
	}
	g := &Graph{name: name, rangeName: "graph " + name, ctx: q.ctx, q: q}
	g.rec = &recording{g: g, gid: goid()}
	if !q.rec.CompareAndSwap(nil, g.rec) {
		q.ctx.exit()
		return nil, fmt.Errorf("record graph %q: %w: queue %d records graph %q already", name, ErrInvalidArgument, q.id, q.rec.Load().g.name)
	}
	q.ctx.graphs.add(g)
	q.ctx.exit() // record may close the context
	err := func() error {
		defer q.rec.CompareAndSwap(g.rec, nil) // even if record panics
		return record(q)
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

// finalize ends the recording and prepares the graph for Launch: every
// recorded launch gets a kernel object of its own with its arguments set,
// and the backend prepares the commands for the recording queue.
func (g *Graph) finalize() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphRecording {
		return g.stateError("finalize")
	}
	g.q.rec.CompareAndSwap(g.rec, nil)
	if err := g.ctx.enter(); err != nil {
		g.state = graphReleased
		return fmt.Errorf("finalize graph %q: %w", g.name, err)
	}
	defer g.ctx.exit()
	for i := range g.cmds {
		if err := g.checkCmd(i); err != nil {
			return fmt.Errorf("finalize graph %q: %w", g.name, err)
		}
	}
	g.state = graphFinal
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind != trace.Kernel {
			continue
		}
		if err := setArgs(c.own, c.args, nil); err != nil {
			g.releaseLocked()
			return fmt.Errorf("finalize graph %q: %s: %w", g.name, g.describe(i), err)
		}
	}
	if _, err := g.exec(g.q); err != nil {
		g.releaseLocked()
		return fmt.Errorf("finalize graph %q: %w", g.name, err)
	}
	return nil
}

// setArgs sets the arguments of k that differ from old (all of them when
// old is nil).
func setArgs(k driver.Kernel, args, old []graphArg) error {
	for i, a := range args {
		if old != nil && old[i] == a {
			continue
		}
		var err error
		switch {
		case a.kind == driver.ArgBuffer:
			var b driver.Buffer
			if b, err = a.mem.driverBuffer(); err == nil {
				err = k.SetArgBuffer(i, b)
			}
		case a.kind == driver.ArgLocal:
			err = k.SetArgLocal(i, a.size)
		case a.kind == driver.ArgSampler:
			err = setArgSampler(k, i, a.smp)
		case a.size > 8:
			b := []byte(a.bytes)
			err = k.SetArgBytes(i, a.size, unsafe.Pointer(&b[0]))
		default:
			err = k.SetArgScalar(i, a.size, a.bits)
		}
		if err != nil {
			return fmt.Errorf("set argument %d: %w", i, err)
		}
	}
	return nil
}

// setArgSampler sets argument i of the graph's kernel object k to the
// sampler s: the driver's object itself, not its handle as a value.
func setArgSampler(k driver.Kernel, i int, s *samplerObject) error {
	sk, ok := k.(driver.SamplerKernel)
	if !ok {
		return fmt.Errorf("%w: a sampler, and the backend's kernels take no samplers, so a graph cannot record it", errors.ErrUnsupported)
	}
	if err := s.check(); err != nil {
		return err
	}
	return sk.SetArgSampler(i, s.drv)
}

// exec returns the graph prepared for q, preparing it on q's first
// launch. Called with g.mu held.
func (g *Graph) exec(q *Queue) (driver.Graph, error) {
	for _, x := range g.execs {
		if x.q == q {
			return x.drv, nil
		}
	}
	cmds := make([]driver.GraphCommand, len(g.cmds))
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind == trace.Kernel {
			cmds[i] = driver.GraphCommand{Kind: driver.GraphKernel, Kernel: c.own, Range: c.r.ndrange()}
		} else {
			cmds[i] = c.dc
		}
	}
	var x driver.Graph
	var opt driver.GraphOptions
	var err error
	if gq, ok := q.drv.(driver.GraphQueue); ok {
		opt = g.options(gq.GraphCaps())
		x, err = gq.NewGraph(cmds, opt)
	} else {
		x = &loopGraph{q: q.drv, cmds: cmds}
	}
	if err != nil {
		return nil, fmt.Errorf("prepare for queue %d of %q: %w", q.id, q.dev.Name, err)
	}
	g.execs = append(g.execs, graphExec{q: q, drv: x, opt: opt})
	return x, nil
}

// options chooses how a backend with caps prepares the graph: as the
// device API's own graph object where it has one and the environment
// allows it (graphConfig), unless a recorded launch has a sampler argument
// that the object cannot hold.
func (g *Graph) options(caps driver.GraphCaps) driver.GraphOptions {
	return driver.GraphOptions{Native: g.ctx.graphCfg.allows(caps.Native) && (caps.NativeSamplers || len(g.smps) == 0)}
}

// Launch enqueues the graph's commands on q after the events of wait, in
// the order they were recorded, with one backend call. q must be a queue
// of the graph's context. A buffer that a command uses and that was freed
// since it was recorded is an error that names the command, and nothing
// is enqueued. Launch creates no event; Queue.Marker gives one.
func (g *Graph) Launch(q *Queue, wait ...*Event) error {
	if g == nil {
		return fmt.Errorf("launch graph: %w: nil graph", ErrInvalidArgument)
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	defer q.ctx.exit()
	if q.ctx != g.ctx {
		return fmt.Errorf("launch graph %q: %w", g.name, q.ctx.sameContext("the graph", g.ctx))
	}
	if r := q.rec.Load(); r != nil {
		if r.g == g {
			return fmt.Errorf("launch graph %q: %w: it is still recording", g.name, ErrInvalidArgument)
		}
		return fmt.Errorf("launch graph %q: %w: queue %d records graph %q (graphs do not nest)", g.name, ErrInvalidArgument, q.id, r.g.name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphFinal {
		return g.stateError("launch")
	}
	for _, u := range g.uses {
		if err := u.check(); err != nil {
			return fmt.Errorf("launch graph %q: %s: %w", g.name, g.describe(u.cmd), err)
		}
	}
	for _, u := range g.smps {
		if err := u.check(); err != nil {
			return fmt.Errorf("launch graph %q: %s: %w", g.name, g.describe(u.cmd), err)
		}
	}
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	x, err := g.exec(q)
	if err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	if q.ctx.tr.Enabled() {
		return g.tracedLaunch(q, x, dw)
	}
	if _, err := x.Launch(dw, false); err != nil {
		return fmt.Errorf("launch graph %q on queue %d of %q: %w", g.name, q.id, q.dev.Name, err)
	}
	g.recordUses(q)
	return nil
}

// tracedLaunch is Launch's enqueue under a trace range named after the
// graph, with a task per command at its recorded node.
func (g *Graph) tracedLaunch(q *Queue, x driver.Graph, dw []driver.Event) error {
	rg := q.ctx.tr.Range(g.rangeName)
	defer rg.End()
	tasks := make([]*trace.Task, len(g.cmds))
	for i := range g.cmds {
		tasks[i] = q.tq.BeginNode(g.cmds[i].node)
	}
	_, err := x.Launch(dw, false)
	for _, tk := range tasks {
		tk.EndRelease()
	}
	if err != nil {
		return fmt.Errorf("launch graph %q on queue %d of %q: %w", g.name, q.id, q.dev.Name, err)
	}
	g.recordUses(q)
	return nil
}

// recordUses records the use of the graph's memory by the launch just
// enqueued on q, for stream-ordered reuse.
func (g *Graph) recordUses(q *Queue) {
	if !q.ctx.multiQueue.Load() {
		return
	}
	p := q.pts.point()
	for _, u := range g.uses {
		u.m.used(q, p)
	}
}

// check reports whether the memory was freed since it was recorded.
func (u memUse) check() error {
	if u.m.gen.Load() != u.gen {
		return fmt.Errorf("buffer: %w since the graph recorded it", ErrFreed)
	}
	if _, err := u.m.driverBuffer(); err != nil {
		return err
	}
	return nil
}

// Update changes the recorded kernel launch cmd (commands count from 0 in
// the order recorded) for the launches that follow: enqueue is called
// with a queue that records instead of running, and must enqueue exactly
// one launch of the same kernel, typically the generated Enqueue of the
// kernel spec with new field values (a swapped pair of buffers, a new
// scalar), so that the compiler checks the types as for any Enqueue.
// An argument whose kind or size differs from the recorded one, another
// kernel, no launch or more than one, is an error naming the graph and the
// command, and the graph is left as it was.
func (g *Graph) Update(cmd int, enqueue func(q *Queue) error) error {
	if g == nil {
		return fmt.Errorf("update graph: %w: nil graph", ErrInvalidArgument)
	}
	g.umu.Lock()
	defer g.umu.Unlock()
	g.mu.Lock()
	if g.state != graphFinal {
		g.mu.Unlock()
		return g.stateError("update")
	}
	if cmd < 0 || cmd >= len(g.cmds) {
		n := len(g.cmds)
		g.mu.Unlock()
		return fmt.Errorf("update graph %q: command %d: %w: the graph has %d commands", g.name, cmd, ErrOutOfRange, n)
	}
	if c := &g.cmds[cmd]; c.kind != trace.Kernel {
		err := fmt.Errorf("update graph %q: %s: %w: only kernel launches can be updated", g.name, g.describe(cmd), ErrInvalidArgument)
		g.mu.Unlock()
		return err
	}
	q0 := g.q
	g.mu.Unlock()
	// A private queue on the same device records the update; the graph's
	// queue stays free for other goroutines.
	uq := &Queue{ctx: q0.ctx, dev: q0.dev, drv: q0.drv, profiling: q0.profiling, id: q0.id, tq: q0.tq}
	upd := &graphUpdate{}
	uq.rec.Store(&recording{g: g, upd: upd})
	if enqueue == nil {
		return fmt.Errorf("update graph %q: %s: %w: nil function", g.name, g.describe(cmd), ErrInvalidArgument)
	}
	if err := enqueue(uq); err != nil {
		return fmt.Errorf("update graph %q: %s: %w", g.name, g.describe(cmd), err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphFinal {
		return g.stateError("update")
	}
	if err := g.apply(cmd, upd); err != nil {
		return fmt.Errorf("update graph %q: %s: %w", g.name, g.describe(cmd), err)
	}
	return nil
}

// apply makes the launch that upd collected command cmd's. Called with
// g.mu held.
func (g *Graph) apply(cmd int, upd *graphUpdate) error {
	c := &g.cmds[cmd]
	if upd.n != 1 {
		return fmt.Errorf("%w: the update enqueued %d kernel launches, not one", ErrInvalidArgument, upd.n)
	}
	nc := &upd.cmd
	if nc.kern.name != c.kern.name || nc.kern.prog.name != c.kern.prog.name {
		return fmt.Errorf("%w: the update launches kernel %q of %q, the command kernel %q of %q", ErrInvalidArgument, nc.kern.name, nc.kern.prog.name, c.kern.name, c.kern.prog.name)
	}
	if len(nc.args) != len(c.args) {
		return fmt.Errorf("%w: the update sets %d arguments, the command %d", ErrInvalidArgument, len(nc.args), len(c.args))
	}
	for i, a := range nc.args {
		if o := c.args[i]; a.kind != o.kind || a.size != o.size {
			return fmt.Errorf("argument %d: %w: %s where the command has %s", i, ErrInvalidArgument, a.describe(), o.describe())
		}
	}
	if err := g.ctx.enter(); err != nil {
		return err
	}
	defer g.ctx.exit()
	if err := setArgs(c.own, nc.args, c.args); err != nil {
		// Some arguments may be set: put the recorded ones back.
		setArgs(c.own, c.args, nil)
		return err
	}
	c.args, c.r, c.mems = nc.args, nc.r, nc.mems
	var errs []error
	for _, x := range g.execs {
		if err := x.drv.Update(cmd, c.r.ndrange()); err != nil {
			errs = append(errs, fmt.Errorf("queue %d: %w", x.q.id, err))
		}
	}
	g.collectUses()
	return errors.Join(errs...)
}

// describe describes a recorded argument for errors.
func (a graphArg) describe() string {
	switch a.kind {
	case driver.ArgBuffer:
		return "a buffer"
	case driver.ArgLocal:
		return fmt.Sprintf("%d bytes of local memory", a.size)
	case driver.ArgSampler:
		return "a sampler"
	}
	return fmt.Sprintf("a value of %d bytes", a.size)
}

// Release releases what the graph holds: its kernel objects, what the
// backend prepared, and the memory allocated on the queue while it
// recorded, which it frees (stream-ordered after its launches). A graph
// still recording stops recording. Releasing twice does nothing.
func (g *Graph) Release() error {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.ctx.enter(); err != nil {
		// Close released everything.
		g.state, g.owned = graphReleased, nil
		return nil
	}
	defer g.ctx.exit()
	var err error
	if g.state != graphReleased {
		err = g.releaseLocked()
	}
	var errs []error
	for _, u := range g.owned {
		if u.m.gen.Load() == u.gen && !u.m.freed.Load() {
			if ferr := u.m.Free(); ferr != nil {
				errs = append(errs, ferr)
			}
		}
	}
	g.owned = nil
	if err = errors.Join(append([]error{err}, errs...)...); err != nil {
		return fmt.Errorf("release graph %q: %w", g.name, err)
	}
	return nil
}

// releaseLocked releases the backend's graphs and the kernel objects and
// marks g released. Called with g.mu held and the context entered (or
// closing).
func (g *Graph) releaseLocked() error {
	g.q.rec.CompareAndSwap(g.rec, nil)
	g.state = graphReleased
	var errs []error
	for _, x := range g.execs {
		errs = append(errs, x.drv.Release())
	}
	g.execs = nil
	for i := range g.cmds {
		if k := g.cmds[i].own; k != nil {
			errs = append(errs, k.Release())
			g.cmds[i].own = nil
		}
	}
	g.ctx.graphs.remove(g)
	return errors.Join(errs...)
}

// stateError is the error of op on a graph that is not in the state op
// needs. Called with g.mu held.
func (g *Graph) stateError(op string) error {
	switch {
	case g.state == graphRecording:
		return fmt.Errorf("%s graph %q: %w: it is still recording", op, g.name, ErrInvalidArgument)
	case g.ctx.closed.Load():
		return fmt.Errorf("%s graph %q: %w", op, g.name, ErrClosed)
	case g.state == graphReleased:
		return fmt.Errorf("%s graph %q: %w: it was released", op, g.name, ErrInvalidArgument)
	}
	return fmt.Errorf("%s graph %q: %w: it is finalized already", op, g.name, ErrInvalidArgument)
}

// describe names command i for errors: its number, kind, name and where
// it was recorded.
func (g *Graph) describe(i int) string {
	c := &g.cmds[i]
	where := ""
	if n := c.node; n != nil && n.Line > 0 {
		where = fmt.Sprintf(" at %s:%d", n.File, n.Line)
	}
	if c.kind == trace.Kernel {
		return fmt.Sprintf("command %d (kernel %q%s)", i, c.name, where)
	}
	return fmt.Sprintf("command %d (%s%s)", i, c.name, where)
}

// checkCmd checks that the memory and the samplers of command i are still
// live.
func (g *Graph) checkCmd(i int) error {
	for _, u := range g.uses {
		if u.cmd == i {
			if err := u.check(); err != nil {
				return fmt.Errorf("%s: %w", g.describe(i), err)
			}
		}
	}
	for _, u := range g.smps {
		if u.cmd == i {
			if err := u.check(); err != nil {
				return fmt.Errorf("%s: %w", g.describe(i), err)
			}
		}
	}
	return nil
}

// collectUses lists the memory of every command once, and the sampler
// arguments of every launch. Called with g.mu held.
func (g *Graph) collectUses() {
	g.uses, g.smps = g.uses[:0], g.smps[:0]
	for i := range g.cmds {
		for j, a := range g.cmds[i].args {
			if a.kind == driver.ArgSampler {
				g.smps = append(g.smps, smpUse{s: a.smp, cmd: i, arg: j})
			}
		}
		for _, m := range g.cmds[i].mems {
			if m == nil {
				continue
			}
			seen := false
			for _, u := range g.uses {
				seen = seen || u.m == m
			}
			if !seen {
				g.uses = append(g.uses, memUse{m: m, gen: m.gen.Load(), cmd: i})
			}
		}
	}
}

// The recording hooks: the enqueue paths of rt call these when q.rec is
// set, after checking their arguments and before the driver sees anything.

// checkGoroutine returns the error of a command on a recording queue from a
// goroutine other than the recording one.
func (r *recording) checkGoroutine(q *Queue) error {
	if r.upd != nil || goid() == r.gid {
		return nil
	}
	return fmt.Errorf("%w: queue %d of %q is recording graph %q in another goroutine (nothing was enqueued)", ErrInvalidArgument, q.id, q.dev.Name, r.g.name)
}

// add appends c to the graph, or hands it to the update; it returns the
// error of a command that cannot be recorded.
func (r *recording) add(c graphCmd, wait []driver.Event) error {
	g := r.g
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

// recordKernel records a launch of k over r. skip is as for beginTask.
func (r *recording) recordKernel(q *Queue, k *Kernel, rg Range, wait []driver.Event, event bool, skip int) error {
	if event {
		return fmt.Errorf("%w: graph %q: a recorded launch has no event (use Enqueue, not EnqueueEvent)", ErrInvalidArgument, r.g.name)
	}
	args, mems, err := k.snapshot()
	if err != nil {
		return fmt.Errorf("graph %q: %w", r.g.name, err)
	}
	c := graphCmd{kind: trace.Kernel, name: k.name, kern: k, args: args, r: rg, mems: mems}
	if r.upd != nil {
		return r.add(c, wait)
	}
	c.node = q.tq.Site(trace.Kernel, k.name, skip+2)
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

// recordCommand records a copy, fill or write. skip is as for beginTask.
func (r *recording) recordCommand(q *Queue, kind trace.CmdKind, op string, dc driver.GraphCommand, mems []*Mem, wait []driver.Event, skip int) error {
	c := graphCmd{kind: kind, name: op, dc: dc, mems: mems, node: q.tq.Site(kind, op, skip+2)}
	return r.add(c, wait)
}

// refuse is the error of a command that a graph cannot record.
func (r *recording) refuse(op, why string) error {
	return fmt.Errorf("%s: %w: graph %q is recording on this queue: %s", op, ErrInvalidArgument, r.g.name, why)
}

// snapshot returns k's arguments as set now, from its launch record, and
// the memory of its buffer arguments.
func (k *Kernel) snapshot() ([]graphArg, []*Mem, error) {
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

// own makes m, allocated on q while it records, the graph's, when the
// recording goroutine allocated it.
func (r *recording) own(m *Mem) {
	if r.upd != nil || goid() != r.gid {
		return
	}
	g := r.g
	g.mu.Lock()
	g.owned = append(g.owned, memUse{m: m, gen: m.gen.Load()})
	g.mu.Unlock()
}

// graphSet is a context's live graphs, which Close releases.
type graphSet struct {
	mu sync.Mutex
	m  map[*Graph]struct{}
}

func (s *graphSet) add(g *Graph) {
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[*Graph]struct{})
	}
	s.m[g] = struct{}{}
	s.mu.Unlock()
}

func (s *graphSet) remove(g *Graph) {
	s.mu.Lock()
	delete(s.m, g)
	s.mu.Unlock()
}

// closeGraphs releases every live graph; Close calls it once the queues
// have finished, so that no launch is in flight, and before the memory and
// the kernels go.
func (c *Context) closeGraphs() []error {
	c.graphs.mu.Lock()
	gs := make([]*Graph, 0, len(c.graphs.m))
	for g := range c.graphs.m {
		gs = append(gs, g)
	}
	c.graphs.mu.Unlock()
	var errs []error
	for _, g := range gs {
		g.mu.Lock()
		if err := g.releaseLocked(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release graph %q: %w", g.name, err))
		}
		g.owned = nil // the allocators' Close frees them
		g.mu.Unlock()
	}
	return errs
}

// loopGraph replays commands through a driver.Queue that prepares none.
type loopGraph struct {
	q    driver.Queue
	cmds []driver.GraphCommand
}

func (l *loopGraph) Launch(wait []driver.Event, event bool) (driver.Event, error) {
	for i, c := range l.cmds {
		w := wait
		if i > 0 {
			w = nil
		}
		var ev driver.Event
		var err error
		switch c.Kind {
		case driver.GraphKernel:
			err = l.q.SubmitKernel(c.Kernel, c.Range, w)
		case driver.GraphCopy:
			ev, err = l.q.CopyBuffer(c.Src, c.Dst, c.SrcOffset, c.DstOffset, c.Size, w)
		case driver.GraphFill:
			ev, err = l.q.FillBuffer(c.Dst, c.Data, c.DstOffset, c.Size, w)
		case driver.GraphWrite:
			_, err = l.q.WriteBuffer(c.Dst, true, c.DstOffset, int64(len(c.Data)), unsafe.Pointer(&c.Data[0]), w)
		}
		if ev != nil {
			ev.Release()
		}
		if err != nil {
			return nil, fmt.Errorf("command %d: %w", i, err)
		}
	}
	if event || len(l.cmds) == 0 && len(wait) > 0 {
		return l.q.Marker(wait)
	}
	return nil, nil
}

func (l *loopGraph) Update(i int, r driver.NDRange) error {
	l.cmds[i].Range = r
	return nil
}

func (l *loopGraph) Release() error { return nil }

var _ driver.Graph = (*loopGraph)(nil)

// goid returns the current goroutine's id, from the header of its stack
// trace ("goroutine 18 [running]:"). Only a recording queue pays for it.
func goid() uint64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	var id uint64
	for _, c := range buf[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
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
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err == nil {
		err = r.recordCommand(q, kind, op, dc, mems, dw, skip+1)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// recordTransfer records the blocking transfer x: a write records the
// bytes as they are now; a read is an error, since it would return before
// the graph runs. skip is as for beginTask.
func (r *recording) recordTransfer(q *Queue, x *xfer, dw []driver.Event, skip int) error {
	if x.read() {
		return r.refuse(x.op, "a blocking read cannot be recorded: it would return before the graph runs (nothing was read or recorded)")
	}
	data := bytes.Clone(unsafe.Slice((*byte)(x.host), x.size))
	dc := driver.GraphCommand{Kind: driver.GraphWrite, Dst: x.buf, DstOffset: x.off, Size: x.size, Data: data}
	if err := r.recordCommand(q, x.kind, x.op, dc, []*Mem{x.mem}, dw, skip+1); err != nil {
		return fmt.Errorf("%s: %w", x.op, err)
	}
	return nil
}
