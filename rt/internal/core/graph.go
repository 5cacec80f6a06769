package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// Command graphs: record once, replay many, as CUDA Graphs, SYCL's
// command_graph and OpenCL's cl_khr_command_buffer do. The four agree on
// the life of a graph, and so does Graph:
//
//   - record: Queue.Record hands a function a recording queue of its own
//     (CUDA's stream capture into a stream of its own, SYCL's
//     begin_recording); the commands it enqueues there (generated
//     launches, Fill, CopyTo, transfers to and from pinned memory) are
//     recorded, not executed, while the queue Record was called on keeps
//     running every other goroutine's commands.
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
// launch shows its commands at the lines that recorded them, inside the
// launch's one task (tracedLaunch).

// Graph is a list of commands recorded on a queue (Queue.Record), replayed
// with Launch. Its methods are safe for concurrent use.
type Graph struct {
	name      string
	rangeName string
	ctx       *Context
	q         *Queue // the queue Record was called on

	umu sync.Mutex // serializes Update; taken before mu
	mu  sync.Mutex // guards what follows
	// state is graphRecording, graphFinal or graphReleased.
	state graphState
	cmds  []graphCmd
	uses  []memUse     // the memory the commands use, each once
	smps  []smpUse     // the samplers the commands use
	pins  []*pinnedMem // the pinned memory the commands use, each once, by address
	owned []memUse     // allocations made while recording: the graph frees them
	execs []*graphExec // prepared for a queue each
	// params are the graph's parameters (graphparam.go), in the order
	// made; every launch binds each (LaunchWith).
	params []*graphParam
	site   *launchSite // what a queue's launch log keeps of a launch (fault.go); set by finalize
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
	// A kernel launch: the kernel object it was recorded from, the
	// specialization-constant values of its program's variant (which
	// name, the kernel's label, shows), its arguments, its range, and the
	// graph's own kernel object (made by finalize) with those arguments
	// set.
	kern  *kernelObject
	specs []progcache.SpecValue
	args  []graphArg
	r     Range
	own   driver.Kernel
	// cur is what own's arguments are set to: args, or a launch's
	// bindings of parameters (graphparam.go); nil when unknown.
	cur []graphArg
	// A copy, fill or transfer: the backend's command, buffers resolved.
	dc   driver.GraphCommand
	mems []*Mem     // the memory it uses
	pin  *pinnedMem // the pinned memory of a transfer
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

// graphExec is a graph prepared for one queue, as opt asked. last is the
// parameters' values of its last launch (graphparam.go), nil before the
// first or where unknown.
type graphExec struct {
	q   *Queue
	opt driver.GraphOptions

	mu   sync.Mutex // guards the fields below; taken under the graph's mu, and held across the enqueue of a native graph (launchLocked)
	drv  driver.Graph
	last []paramVal
}

// GraphNode is the handle of a recorded command, which Queue.Node returns
// while a graph records; Graph.Update takes it.
type GraphNode struct {
	g *Graph
	i int // the command's place in g.cmds, which never changes
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
	var kernels []string
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind != trace.Kernel {
			continue
		}
		if !slices.Contains(kernels, c.name) {
			kernels = append(kernels, c.name)
		}
		if err := setArgs(c.own, c.args, nil); err != nil {
			g.releaseLocked()
			return fmt.Errorf("finalize graph %q: %s: %w", g.name, g.describe(i), err)
		}
		c.cur = c.args
	}
	g.site = &launchSite{kernel: "graph " + g.name, program: "kernels " + strings.Join(kernels, ", ")}
	if _, err := g.exec(g.q, nil); err != nil {
		g.releaseLocked()
		return g.ctx.failed(g.q, fmt.Errorf("finalize graph %q: %w", g.name, err))
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
// launch with the buffers of vals, the launch's bindings (nil for none),
// in place of the recorded ones: a device API that checks a copy's or a
// fill's buffers when it captures them (CUDA's) must never see a recorded
// buffer that a parameter let its owner free. Called with g.mu held.
func (g *Graph) exec(q *Queue, vals []paramVal) (*graphExec, error) {
	for _, x := range g.execs {
		if x.q == q {
			return x, nil
		}
	}
	cmds := make([]driver.GraphCommand, len(g.cmds))
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind == trace.Kernel {
			cmds[i] = driver.GraphCommand{Kind: driver.GraphKernel, Kernel: c.own, Range: c.r.ndrange()}
		} else {
			cmds[i] = c.dc
			if vals != nil && g.hasSites(i) {
				if err := g.boundCommand(&cmds[i], i, vals); err != nil {
					return nil, fmt.Errorf("prepare for queue %d of %q: %s: %w", q.id, q.dev.Name, g.describe(i), err)
				}
			}
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
	ge := &graphExec{q: q, drv: x, opt: opt}
	g.execs = append(g.execs, ge)
	return ge, nil
}

// options chooses how a backend with caps prepares the graph: as the
// device API's own graph object where it has one and the environment
// allows it (graphConfig), unless a recorded launch has a sampler argument
// that the object cannot hold.
func (g *Graph) options(caps driver.GraphCaps) driver.GraphOptions {
	return driver.GraphOptions{Native: g.ctx.settings.graph.allows(caps.Native) && (caps.NativeSamplers || len(g.smps) == 0) && (caps.NativeHost || len(g.pins) == 0)}
}

// Launch enqueues the graph's commands on q after the events of wait, in
// the order they were recorded, with one backend call. q must be a queue
// of the graph's context. A buffer or pinned memory that a command uses
// and that was freed since it was recorded is an error that names the
// command, and nothing is enqueued. Launch creates no event; Queue.Marker
// gives one. A graph with parameters (BufferParam, ValueParam) launches
// with LaunchWith, which binds them; Launch refuses it.
func (g *Graph) Launch(q *Queue, wait ...*Event) error {
	return g.launch(nil, q, wait, nil, false)
}

// LaunchContext is Launch bounded by ctx: when ctx is done, it returns an
// error wrapping ctx.Err() and enqueues nothing. On a queue bound to a
// request (Context.AcquireQueueContext), a graph launch counts as one of
// the commands that it keeps ahead of the host, and the wait for room is
// bounded by ctx too.
func (g *Graph) LaunchContext(ctx context.Context, q *Queue, wait ...*Event) error {
	if ctx == nil {
		return fmt.Errorf("launch graph: %w: nil context.Context", ErrInvalidArgument)
	}
	return g.launch(ctx, q, wait, nil, false)
}

// launch is Launch, bounded by ctx where it is not nil, or, with, LaunchWith
// of bind.
func (g *Graph) launch(ctx context.Context, q *Queue, wait []*Event, bind []Binding, with bool) error {
	if g == nil {
		return fmt.Errorf("launch graph: %w: nil graph", ErrInvalidArgument)
	}
	var b *queueBind
	if ctx != nil || q.bound() != nil {
		var err error
		if b, err = q.admitCommand(ctx); err != nil {
			return fmt.Errorf("launch graph %q: %w", g.name, err)
		}
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	defer q.exit()
	if err := g.launchable(q); err != nil {
		return err
	}
	g.mu.Lock()
	err := g.launchBound(q, wait, bind, with) // releases g.mu
	if err == nil && b != nil {
		b.enqueued(q)
	}
	return err
}

// launchBound is launch from the moment it holds g.mu, which it releases:
// LaunchWith's bindings resolved, or Launch's check that g has no
// parameters, then launchLocked.
func (g *Graph) launchBound(q *Queue, wait []*Event, bind []Binding, with bool) error {
	if !with {
		if len(g.params) > 0 && g.state == graphFinal {
			g.mu.Unlock()
			return fmt.Errorf("launch graph %q: %s: %w: not bound (a graph with parameters launches with LaunchWith)", g.name, g.params[0].describe(), ErrInvalidArgument)
		}
		return g.launchLocked(q, wait, nil)
	}
	if g.state != graphFinal {
		err := g.stateError("launch")
		g.mu.Unlock()
		return err
	}
	vals, err := g.resolve(q, bind)
	if err != nil {
		g.mu.Unlock()
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	defer doneVals(vals)
	return g.launchLocked(q, wait, vals)
}

// launchable checks that g may be launched on q: a queue of its context
// that records no graph.
func (g *Graph) launchable(q *Queue) error {
	if q.ctx != g.ctx {
		return fmt.Errorf("launch graph %q: %w", g.name, q.ctx.sameContext("the graph", g.ctx))
	}
	if r := q.rec.Load(); r != nil {
		if r.g == g {
			return fmt.Errorf("launch graph %q: %w: it is still recording", g.name, ErrInvalidArgument)
		}
		return fmt.Errorf("launch graph %q: %w: queue %d records graph %q (graphs do not nest)", g.name, ErrInvalidArgument, q.id, r.g.name)
	}
	return nil
}

// launchLocked is Launch inside q's enter, from the moment it holds g.mu,
// which it releases, with its parameters bound to vals (graphparam.go).
//
// The graph's bookkeeping (its state, its memory's uses, its pinned
// memory, the queue's prepared graph and its bindings) is g.mu's; the
// prepared graph's driver object is its own mu's, taken under g.mu. A
// native graph that took
// its kernels' arguments when it was prepared or updated, where the
// backend says so (driver.ArgsGraph: a CUDA executable graph), so its
// enqueue runs with g.mu released and only the queue's prepared graph
// held: launches of one graph on other queues do not wait behind the
// driver's call. Every other graph reads the graph's kernel objects,
// which every queue's bindings set, at its enqueue (a loop of prepared
// commands; PoCL's command buffers), and a traced launch reads the
// graph's trace nodes: they enqueue under g.mu. Its defers are
// open-coded (none in a loop, few returns): a defer recorded at run time
// costs a replay hundreds of instructions, and one in a loop an
// allocation.
func (g *Graph) launchLocked(q *Queue, wait []*Event, vals []paramVal) error {
	held := true
	defer func() {
		if held {
			g.mu.Unlock()
		}
	}()
	if g.state != graphFinal {
		return g.stateError("launch")
	}
	if err := g.useAll(); err != nil {
		return err
	}
	uses, pins := g.uses, g.pins // what this launch holds, whatever an Update makes of g's
	defer doneUses(uses)
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	ge, err := g.exec(q, vals)
	if err != nil {
		return fmt.Errorf("launch graph %q: %w", g.name, err)
	}
	ge.mu.Lock()
	defer ge.mu.Unlock()
	if err := g.bindLocked(ge, vals); err != nil {
		return g.ctx.failed(q, fmt.Errorf("launch graph %q: %w", g.name, err))
	}
	x := ge.drv
	if err := g.lockPins(); err != nil {
		return err
	}
	defer unlockPins(pins)
	lr := q.beginLaunch(g.site, 3) // the user calls rt's Launch (LaunchWith, LaunchContext), which calls the core's, then launch, launchBound and launchLocked
	if q.ctx.tracing.tr.Enabled() {
		err = g.tracedLaunch(q, x, dw)
	} else {
		if ag, ok := x.(driver.ArgsGraph); ok && ag.HoldsArgs() {
			g.mu.Unlock()
			held = false
		}
		if _, err = x.Launch(dw, false); err != nil {
			err = fmt.Errorf("launch graph %q on queue %d of %q: %w", g.name, q.id, q.dev.Name, err)
		}
	}
	if err = q.endLaunch(lr, err); err != nil {
		return q.ctx.failed(q, err)
	}
	recordUses(q, uses, pins)
	paramUses(q, vals)
	return nil
}

// useAll checks the memory and samplers that the graph's commands use and
// holds the memory against a racing Free until the launch is enqueued
// (Mem.use), as a launch's arguments are; doneUses ends the uses.
func (g *Graph) useAll() error {
	for i, u := range g.uses {
		err := u.check()
		if err == nil && !u.m.useAll() {
			err = fmt.Errorf("buffer: %w since the graph recorded it", ErrFreed)
		}
		if err != nil {
			g.doneUses(i)
			return fmt.Errorf("launch graph %q: %s: %w", g.name, g.describe(u.cmd), err)
		}
	}
	for _, u := range g.smps {
		if err := u.check(); err != nil {
			g.doneUses(len(g.uses))
			return fmt.Errorf("launch graph %q: %s: %w", g.name, g.describe(u.cmd), err)
		}
	}
	return nil
}

// lockPins locks the pinned memory that the graph's commands use, in
// address order, from its check until the launch is listed among its
// uses, so that Free waits for it; freed pinned memory is an error, and
// nothing stays locked. unlockPins unlocks it.
func (g *Graph) lockPins() error {
	for i, p := range g.pins {
		p.mu.Lock()
		if p.freed {
			g.unlockPins(i + 1)
			return fmt.Errorf("launch graph %q: %s: pinned memory: %w since the graph recorded it", g.name, g.describe(g.pinCmd(i)), ErrFreed)
		}
	}
	return nil
}

// unlockPins unlocks g.pins[:n], which lockPins locked.
func (g *Graph) unlockPins(n int) { unlockPins(g.pins[:n]) }

// unlockPins unlocks pins, which lockPins locked.
func unlockPins(pins []*pinnedMem) {
	for _, p := range pins {
		p.mu.Unlock()
	}
}

// doneUses ends the use of the memory of g.uses[:n] that Launch holds.
func (g *Graph) doneUses(n int) { doneUses(g.uses[:n]) }

// doneUses ends the uses of uses' memory, which useAll began.
func doneUses(uses []memUse) {
	for _, u := range uses {
		u.m.doneAll()
	}
}

// pinCmd returns the first command that uses g.pins[i].
func (g *Graph) pinCmd(i int) int {
	for j := range g.cmds {
		if g.cmds[j].pin == g.pins[i] {
			return j
		}
	}
	return 0
}

// tracedLaunch is Launch's enqueue traced as one task of kind
// trace.Graph, named after the graph, at the call site of the launch: the
// graph's span, which holds a task per command at its recorded node, one
// after the other at its start (one call enqueues them all), so that they
// nest in it on the queue's host track. Where the context reports device
// times, they go where the backend measures them (driver.TimedGraph): to
// the commands one by one where it times them so (a loop of prepared
// commands, CUDA with CUPTI), else to the graph's task for the whole
// launch (a command buffer, a CUDA graph).
func (g *Graph) tracedLaunch(q *Queue, x driver.Graph, dw []driver.Event) error {
	wt := q.tq.Begin(trace.Graph, g.rangeName, 6) // the user: above tracedLaunch, launchLocked, launchBound, launch, Launch (or LaunchWith, LaunchContext) and the facade's frame
	sampled := q.wantsEvent(wt)
	tasks := make([]*trace.Task, len(g.cmds))
	for i := range g.cmds {
		tasks[i] = q.tq.BeginNode(g.cmds[i].node)
		tasks[i].End()
		sampled = sampled || q.wantsEvent(tasks[i])
	}
	var whole driver.Event
	var evs []driver.Event
	var err error
	if !sampled {
		_, err = x.Launch(dw, false)
	} else if tg, ok := x.(driver.TimedGraph); ok {
		evs, whole, err = tg.LaunchTimed(dw)
	} else {
		whole, err = x.Launch(dw, true)
	}
	wt.End()
	for i, tk := range tasks {
		var ev driver.Event
		if i < len(evs) {
			ev = evs[i]
		}
		timeTask(q, tk, ev)
	}
	timeTask(q, wt, whole)
	return g.launchError(q, err)
}

// timeTask keeps tk, the ended task of a traced graph launch or of one of
// its commands, with ev until ev's device times are known, else releases
// both (ev nil: none come).
func timeTask(q *Queue, tk *trace.Task, ev driver.Event) {
	switch {
	case ev != nil && q.wantsEvent(tk):
		q.addPending(tk, nil, ev)
	case ev != nil:
		ev.Release()
	}
	tk.Release()
}

// launchError is the error of a graph launch on q that failed with err.
func (g *Graph) launchError(q *Queue, err error) error {
	if err != nil {
		return fmt.Errorf("launch graph %q on queue %d of %q: %w", g.name, q.id, q.dev.Name, err)
	}
	return nil
}

// recordUses records the use of the graph's memory by the launch just
// enqueued on q: for stream-ordered reuse, and for Pinned.Free, which
// waits for it (the pinned memory is locked).
func recordUses(q *Queue, uses []memUse, pins []*pinnedMem) {
	if !q.ctx.queues.multi.Load() && len(pins) == 0 {
		return
	}
	p := q.pts.point()
	if q.ctx.queues.multi.Load() {
		for _, u := range uses {
			u.m.used(q, p)
		}
	}
	for _, pm := range pins {
		pm.pending = append(pruneDone(pm.pending), pinnedUse{q: q, pt: p})
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

// Update changes the recorded kernel launch n, whose handle Queue.Node
// returned while g recorded, for the launches that follow: enqueue is
// called with a recording queue of its own, and must enqueue exactly one
// launch of the same kernel, typically the generated Enqueue of the kernel
// spec with new field values (a swapped pair of buffers, a new scalar), so
// that the compiler checks the types as for any Enqueue. A node of
// another graph or of another command than a launch, an argument whose
// kind or size differs from the recorded one, another kernel or the same
// kernel under other specialization-constant values (another variant of
// its program), no launch or more than one, is an error naming the graph
// and the command, and the graph is left as it was. Launches already enqueued keep what they were
// enqueued with.
func (g *Graph) Update(n *GraphNode, enqueue func(q *Queue) error) error {
	if g == nil {
		return fmt.Errorf("update graph: %w: nil graph", ErrInvalidArgument)
	}
	if n == nil || n.g != g {
		return fmt.Errorf("update graph %q: %w: a node of another graph (or nil)", g.name, ErrInvalidArgument)
	}
	cmd := n.i
	g.umu.Lock()
	defer g.umu.Unlock()
	g.mu.Lock()
	if g.state != graphFinal {
		g.mu.Unlock()
		return g.stateError("update")
	}
	if c := &g.cmds[cmd]; c.kind != trace.Kernel {
		err := fmt.Errorf("update graph %q: %s: %w: only kernel launches can be updated", g.name, g.describe(cmd), ErrInvalidArgument)
		g.mu.Unlock()
		return err
	}
	g.mu.Unlock()
	if enqueue == nil {
		return fmt.Errorf("update graph %q: %s: %w: nil function", g.name, g.describe(cmd), ErrInvalidArgument)
	}
	// A recording queue of its own records the update; the graph's queue
	// stays free for other goroutines.
	upd := &graphUpdate{}
	r := &recording{g: g, upd: upd}
	err := func() error {
		uq := g.q.recordingQueue(r)
		defer uq.endRecording()
		return enqueue(uq)
	}()
	if err != nil {
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
	if !slices.Equal(nc.specs, c.specs) {
		// Another variant of the program is another kernel: the command's
		// kernel object would run with the recorded values.
		return fmt.Errorf("%w: the update launches %s, the command %s: an update cannot change specialization-constant values (record another graph)", ErrInvalidArgument, nc.name, c.name)
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
	if err := setArgs(c.own, nc.args, c.cur); err != nil {
		// Some arguments may be set: put the recorded ones back. Where
		// that fails too (a parameter's recorded buffer, which its owner
		// may free), what the kernel object holds is unknown, and the
		// next launch sets every argument (bindLocked).
		c.cur = c.args
		if setArgs(c.own, c.args, nil) != nil {
			c.cur = nil
		}
		return err
	}
	c.args, c.cur, c.r, c.mems = nc.args, nc.args, nc.r, nc.mems
	var errs []error
	for _, x := range g.execs {
		x.mu.Lock()
		x.last = nil // the next launch binds every parameter anew
		if err := x.drv.Update(cmd, c.r.ndrange()); err != nil {
			errs = append(errs, fmt.Errorf("queue %d: %w", x.q.id, err))
		}
		x.mu.Unlock()
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
	g.state = graphReleased
	var errs []error
	for _, x := range g.execs {
		x.mu.Lock() // a native launch in flight holds it
		errs = append(errs, x.drv.Release())
		x.mu.Unlock()
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

// collectUses lists the memory and the pinned memory of every command
// once, and the sampler arguments of every launch. Called with g.mu held.
func (g *Graph) collectUses() {
	// New slices: a launch in flight holds the old ones (launchLocked).
	g.uses, g.smps, g.pins = nil, nil, nil
	for i := range g.cmds {
		if p := g.cmds[i].pin; p != nil && !slices.Contains(g.pins, p) {
			g.pins = append(g.pins, p)
		}
		for j, a := range g.cmds[i].args {
			if a.kind == driver.ArgSampler {
				g.smps = append(g.smps, smpUse{s: a.smp, cmd: i, arg: j})
			}
		}
		for j, m := range g.cmds[i].mems {
			if m == nil {
				continue
			}
			seen := g.boundAt(i, j)
			for _, u := range g.uses {
				seen = seen || u.m == m
			}
			if !seen {
				g.uses = append(g.uses, memUse{m: m, gen: m.gen.Load(), cmd: i})
			}
		}
	}
	// Launch locks them in this order.
	slices.SortFunc(g.pins, func(a, b *pinnedMem) int {
		return cmp.Compare(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)))
	})
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

// dropQueue releases what the live graphs prepared for q, which
// Queue.Release has finished: a later launch on q fails, and a graph
// prepared for no queue prepares again on the next.
func (s *graphSet) dropQueue(q *Queue) {
	s.mu.Lock()
	gs := make([]*Graph, 0, len(s.m))
	for g := range s.m {
		gs = append(gs, g)
	}
	s.mu.Unlock()
	for _, g := range gs {
		var drop []driver.Graph
		g.mu.Lock()
		g.execs = slices.DeleteFunc(g.execs, func(x *graphExec) bool {
			if x.q == q {
				drop = append(drop, x.drv)
				return true
			}
			return false
		})
		g.mu.Unlock()
		for _, x := range drop {
			if err := x.Release(); err != nil {
				q.ctx.log().Warn("dgen: release of a graph prepared for a released queue", "graph", g.name, "err", err)
			}
		}
	}
}

// loopGraph replays commands through a driver.Queue that prepares none.
type loopGraph struct {
	q    driver.Queue
	cmds []driver.GraphCommand
}

func (l *loopGraph) Launch(wait []driver.Event, event bool) (driver.Event, error) {
	if err := l.launch(wait, nil); err != nil {
		return nil, err
	}
	if event || len(l.cmds) == 0 && len(wait) > 0 {
		return l.q.Marker(wait)
	}
	return nil, nil
}

// LaunchTimed implements driver.TimedGraph: an event per command.
func (l *loopGraph) LaunchTimed(wait []driver.Event) ([]driver.Event, driver.Event, error) {
	evs := make([]driver.Event, len(l.cmds))
	if err := l.launch(wait, evs); err != nil {
		for _, e := range evs {
			if e != nil {
				e.Release()
			}
		}
		return nil, nil, err
	}
	return evs, nil, nil
}

// launch enqueues the commands, keeping their events in evs when it is
// not nil.
func (l *loopGraph) launch(wait, evs []driver.Event) error {
	for i, c := range l.cmds {
		w := wait
		if i > 0 {
			w = nil
		}
		var ev driver.Event
		var err error
		switch c.Kind {
		case driver.GraphKernel:
			if evs != nil {
				ev, err = l.q.EnqueueKernel(c.Kernel, c.Range, w)
			} else {
				err = l.q.SubmitKernel(c.Kernel, c.Range, w)
			}
		case driver.GraphCopy:
			ev, err = l.q.CopyBuffer(c.Src, c.Dst, c.SrcOffset, c.DstOffset, c.Size, w)
		case driver.GraphFill:
			ev, err = l.q.FillBuffer(c.Dst, c.Data, c.DstOffset, c.Size, w)
		case driver.GraphWrite:
			ev, err = l.q.WriteBuffer(c.Dst, false, c.DstOffset, c.Size, c.Host, w)
		case driver.GraphRead:
			ev, err = l.q.ReadBuffer(c.Src, false, c.SrcOffset, c.Size, c.Host, w)
		}
		if err != nil {
			return fmt.Errorf("command %d: %w", i, err)
		}
		if evs != nil {
			evs[i] = ev
		} else if ev != nil {
			ev.Release()
		}
	}
	return nil
}

func (l *loopGraph) Update(i int, r driver.NDRange) error {
	l.cmds[i].Range = r
	return nil
}

// SetCommand implements driver.CommandGraph.
func (l *loopGraph) SetCommand(i int, c driver.GraphCommand) error {
	if i < 0 || i >= len(l.cmds) || l.cmds[i].Kind != c.Kind || c.Kind == driver.GraphKernel {
		return fmt.Errorf("set command %d: not a command of this kind", i)
	}
	l.cmds[i] = c
	return nil
}

func (l *loopGraph) Release() error { return nil }

var (
	_ driver.Graph        = (*loopGraph)(nil)
	_ driver.TimedGraph   = (*loopGraph)(nil)
	_ driver.CommandGraph = (*loopGraph)(nil)
)
