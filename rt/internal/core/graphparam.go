package core

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/trace"
)

// Graph parameters: a graph recorded once and launched by many requests,
// each with buffers and values of its own, as SYCL's dynamic parameters
// and CUDA's executable-graph node updates allow. A parameter names what
// the recorded commands used (a buffer: every command that used it; a
// value: one argument of one launch), and Graph.LaunchWith binds each
// parameter for one launch.
//
// Each graph is prepared once per queue (graphExec). A launch with
// bindings, under g.mu, sets the graph's kernel objects' arguments to its
// bindings (OpenCL and CUDA take a kernel's arguments when the launch is
// enqueued, so a kernel object serves every queue's launches in turn),
// and tells the queue's prepared graph which commands differ from the
// bindings it last launched with (an OpenCL command buffer is recorded
// anew, a CUDA executable graph's nodes are set in place). g.mu is held
// across those calls, which do not wait for the device, and the prepared
// graph's own mutex from them to the end of its enqueue; a CUDA
// executable graph, which holds its nodes' arguments itself, enqueues
// with g.mu released (launchLocked), so that launches on other queues do
// not wait behind it. One preparation per queue means that
// concurrent launches of one graph on their own queues never share
// prepared state, and a queue's launches of it run in order.

// graphParam is a parameter of a graph: a buffer (m, the memory the
// commands recorded) or a value (size bytes, argument arg of command
// cmd). sites lists where it stands; g.mu guards them.
type graphParam struct {
	g     *Graph
	index int // its place in g.params
	// A buffer parameter: the recorded memory and its length.
	m *Mem
	n int
	// A value parameter: its size.
	size uintptr
	// sites are the command arguments it stands for: a kernel's argument
	// index, or siteSrc or siteDst of a copy, fill or transfer.
	sites []paramSite
}

// paramSite is an argument of a recorded command that a parameter stands
// for.
type paramSite struct {
	cmd, arg int
}

// The arguments of a copy, fill or transfer that a buffer parameter
// stands for.
const (
	siteSrc = -1
	siteDst = -2
)

// describe names p in errors.
func (p *graphParam) describe() string {
	if p.m != nil {
		return fmt.Sprintf("parameter %d (a buffer of %d elements)", p.index, p.n)
	}
	return fmt.Sprintf("parameter %d (a value of %d bytes, argument %d of %s)", p.index, p.size, p.sites[0].arg, p.g.describe(p.sites[0].cmd))
}

// paramVal is what a parameter is bound to for one launch: memory, or a
// value's bits (bytes for a value of more than 8 bytes).
type paramVal struct {
	m     *Mem
	bits  uint64
	bytes string
}

// GraphBuffer is a buffer parameter of a graph (BufferParam): every
// command of the graph that used the buffer it was made from uses the
// buffer it is bound to at each launch instead (Bind, Graph.LaunchWith).
type GraphBuffer[T any] struct {
	p *graphParam
}

// GraphValue is a value parameter of a graph (ValueParam): one argument of
// one recorded launch, set at each launch to the value it is bound to
// (Bind, Graph.LaunchWith).
type GraphValue[T any] struct {
	p *graphParam
}

// Binding binds a graph parameter for one launch: GraphBuffer.Bind and
// GraphValue.Bind make one, Graph.LaunchWith takes them. The zero Binding
// binds nothing, and LaunchWith refuses it.
type Binding struct {
	p   *graphParam
	v   paramVal
	n   int    // the length of a bound buffer
	gen uint32 // the generation of a bound buffer's memory
}

// BufferParam makes b a parameter of g, a graph whose commands used b (a
// launch's argument, a Fill's, a CopyTo's source or destination, a
// transfer's buffer): from then on each launch of g uses the buffer that
// Graph.LaunchWith binds the parameter to in every place where the
// commands used b, and b itself is free to be freed or reused. A
// binding's buffer must have b's length; a view of b that a command used
// stays as recorded, and is an error here, since the parameter would not
// replace it. b not used by g, already a parameter of g, or g not
// finalized, is an error wrapping ErrInvalidArgument.
func BufferParam[T any](g *Graph, b Buffer[T]) (*GraphBuffer[T], error) {
	if g == nil {
		return nil, fmt.Errorf("graph buffer parameter: %w: nil graph", ErrInvalidArgument)
	}
	m := b.mem()
	if m == nil || m == freedMem {
		return nil, fmt.Errorf("graph %q: buffer parameter: %w: a nil or freed buffer", g.name, ErrInvalidArgument)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphFinal {
		return nil, g.stateError("add a parameter to")
	}
	p := &graphParam{g: g, index: len(g.params), m: m, n: b.n}
	for _, q := range g.params {
		if q.m == m {
			return nil, fmt.Errorf("graph %q: buffer parameter: %w: the buffer is %s already", g.name, ErrInvalidArgument, q.describe())
		}
	}
	root, _ := m.root()
	for i := range g.cmds {
		c := &g.cmds[i]
		for j, mm := range c.mems {
			if mm == nil {
				continue
			}
			if mm == m {
				p.sites = append(p.sites, memSites(c, i, j)...)
			} else if r, _ := mm.root(); r == root {
				return nil, fmt.Errorf("graph %q: buffer parameter: %s: %w: it uses memory that the buffer shares (a view of it, or the buffer a view lies in), which a parameter does not replace", g.name, g.describe(i), ErrInvalidArgument)
			}
		}
	}
	if len(p.sites) == 0 {
		return nil, fmt.Errorf("graph %q: buffer parameter: %w: no command of the graph uses the buffer", g.name, ErrInvalidArgument)
	}
	g.params = append(g.params, p)
	g.collectUses() // the graph no longer uses b itself
	return &GraphBuffer[T]{p: p}, nil
}

// memSites returns the sites of command c (number i) where it uses its
// j-th memory: its kernel arguments that hold it, or a copy's, fill's or
// transfer's source or destination.
func memSites(c *graphCmd, i, j int) []paramSite {
	if c.kind == trace.Kernel {
		var s []paramSite
		m := c.mems[j]
		for a, arg := range c.args {
			if arg.kind == driver.ArgBuffer && arg.mem == m {
				s = append(s, paramSite{i, a})
			}
		}
		return s
	}
	switch c.dc.Kind {
	case driver.GraphCopy:
		if j == 0 {
			return []paramSite{{i, siteSrc}}
		}
	case driver.GraphRead:
		return []paramSite{{i, siteSrc}}
	}
	return []paramSite{{i, siteDst}}
}

// ValueParam makes argument arg of the launch that n recorded (the
// arg-th parameter of the kernel: the arg-th field of a kernel spec) a
// parameter of n's graph, of type T: each launch of the graph sets it to
// the value that Graph.LaunchWith binds it to. A node that is not a
// kernel launch, an argument that is not a value of T's size, one that is
// a parameter already, or a graph that is not finalized, is an error
// wrapping ErrInvalidArgument.
func ValueParam[T any](n *GraphNode, arg int) (*GraphValue[T], error) {
	if n == nil || n.g == nil {
		return nil, fmt.Errorf("graph value parameter: %w: nil node", ErrInvalidArgument)
	}
	g := n.g
	t := reflect.TypeFor[T]()
	if err := checkPlain(t); err != nil {
		return nil, fmt.Errorf("graph %q: value parameter of %v: %w", g.name, t, err)
	}
	size := t.Size()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != graphFinal {
		return nil, g.stateError("add a parameter to")
	}
	c := &g.cmds[n.i]
	if c.kind != trace.Kernel {
		return nil, fmt.Errorf("graph %q: value parameter: %s: %w: not a kernel launch", g.name, g.describe(n.i), ErrInvalidArgument)
	}
	if arg < 0 || arg >= len(c.args) {
		return nil, fmt.Errorf("graph %q: value parameter: %s: %w: argument %d of %d", g.name, g.describe(n.i), ErrInvalidArgument, arg, len(c.args))
	}
	if a := c.args[arg]; a.kind != driver.ArgScalar || a.size != size {
		return nil, fmt.Errorf("graph %q: value parameter of %v (%d bytes): %s: argument %d: %w: it is %s", g.name, t, size, g.describe(n.i), arg, ErrInvalidArgument, a.describe())
	}
	for _, q := range g.params {
		if q.m == nil && q.sites[0] == (paramSite{n.i, arg}) {
			return nil, fmt.Errorf("graph %q: value parameter: %s: argument %d: %w: it is %s already", g.name, g.describe(n.i), arg, ErrInvalidArgument, q.describe())
		}
	}
	p := &graphParam{g: g, index: len(g.params), size: size, sites: []paramSite{{n.i, arg}}}
	g.params = append(g.params, p)
	return &GraphValue[T]{p: p}, nil
}

// Bind binds the parameter to b for one launch (Graph.LaunchWith). b must
// have the length of the buffer the parameter was made from, and be a
// buffer of the graph's context.
func (p *GraphBuffer[T]) Bind(b Buffer[T]) Binding {
	if p == nil {
		return Binding{}
	}
	return Binding{p: p.p, v: paramVal{m: b.m}, n: b.n, gen: b.gen}
}

// Bind binds the parameter to v for one launch (Graph.LaunchWith).
func (p *GraphValue[T]) Bind(v T) Binding {
	if p == nil {
		return Binding{}
	}
	var pv paramVal
	if unsafe.Sizeof(v) <= 8 && unsafe.Alignof(v) <= 8 {
		pv.bits = desc.ScalarBits(v)
	} else {
		pv.bytes = string(unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v)))
	}
	return Binding{p: p.p, v: pv}
}

// LaunchWith is Launch with every parameter of the graph (BufferParam,
// ValueParam) bound by one of bind: the launch uses the bound buffers and
// values, and later launches are not affected by them. A parameter of
// another graph, a parameter bound twice or not at all, a buffer of
// another length or context, a freed buffer, or a copy whose bound source
// and destination share memory, is an error wrapping ErrInvalidArgument
// (ErrFreed for a freed buffer) that names the parameter, and nothing is
// enqueued. Concurrent launches of one graph, each on its own queue with
// its own bindings, do not interfere: each queue has the graph prepared
// for it, and a launch sets what its bindings change under the graph's
// lock, which is never held while waiting for the device.
func (g *Graph) LaunchWith(q *Queue, bind []Binding, wait ...*Event) error {
	return g.launch(nil, q, wait, bind, true)
}

// resolve checks bind against g's parameters and returns the value of
// each, in g.params' order, with the memory of each bound buffer held
// (Mem.useAll) until doneVals. Called with g.mu held.
func (g *Graph) resolve(q *Queue, bind []Binding) ([]paramVal, error) {
	vals := make([]paramVal, len(g.params))
	set := make([]bool, len(g.params))
	var err error
	for i, b := range bind {
		if err = g.checkBinding(q, i, b, set); err != nil {
			break
		}
		set[b.p.index] = true
		if b.p.m != nil && !b.v.m.useAll() {
			err = fmt.Errorf("binding %d: %s: buffer: %w", i, b.p.describe(), ErrFreed)
			break
		}
		vals[b.p.index] = b.v
	}
	if err == nil {
		for i, ok := range set {
			if !ok {
				err = fmt.Errorf("%s: %w: not bound (bind every parameter of the graph)", g.params[i].describe(), ErrInvalidArgument)
				break
			}
		}
	}
	if err == nil {
		err = g.checkCopies(vals)
	}
	if err != nil {
		doneVals(vals)
		return nil, err
	}
	return vals, nil
}

// checkBinding checks binding i, b, of a launch on q; set says which
// parameters are bound already.
func (g *Graph) checkBinding(q *Queue, i int, b Binding, set []bool) error {
	p := b.p
	switch {
	case p == nil:
		return fmt.Errorf("binding %d: %w: the zero Binding", i, ErrInvalidArgument)
	case p.g != g:
		return fmt.Errorf("binding %d: %w: a parameter of graph %q", i, ErrInvalidArgument, p.g.name)
	case set[p.index]:
		return fmt.Errorf("binding %d: %s: %w: bound twice", i, p.describe(), ErrInvalidArgument)
	case p.m == nil:
		return nil
	}
	m := b.v.m
	if m != nil && m.gen.Load() != b.gen {
		return fmt.Errorf("binding %d: %s: buffer: %w", i, p.describe(), ErrFreed)
	}
	if _, err := m.driverBuffer(); err != nil {
		return fmt.Errorf("binding %d: %s: %w", i, p.describe(), err)
	}
	if err := q.ctx.sameContext("the bound buffer", m.ctx); err != nil {
		return fmt.Errorf("binding %d: %s: %w", i, p.describe(), err)
	}
	if b.n != p.n {
		return fmt.Errorf("binding %d: %s: %w: a buffer of %d elements", i, p.describe(), ErrInvalidArgument, b.n)
	}
	return nil
}

// doneVals ends the uses of the bound memory that resolve held.
func doneVals(vals []paramVal) {
	for _, v := range vals {
		if v.m != nil {
			v.m.doneAll()
		}
	}
}

// checkCopies checks the copies whose source or destination a buffer
// parameter stands for, bound to vals, as CopyTo checks its buffers
// (checkOverlap).
func (g *Graph) checkCopies(vals []paramVal) error {
	for _, p := range g.params {
		for _, s := range p.sites {
			c := &g.cmds[s.cmd]
			if c.kind == trace.Kernel || c.dc.Kind != driver.GraphCopy {
				continue
			}
			src, dst := g.boundMem(s.cmd, siteSrc, vals), g.boundMem(s.cmd, siteDst, vals)
			if err := checkOverlap(c.name, src, dst, c.dc.SrcOffset, c.dc.DstOffset, c.dc.Size); err != nil {
				return fmt.Errorf("%s: %w", g.describe(s.cmd), err)
			}
		}
	}
	return nil
}

// boundMem returns the memory of command cmd's source or destination
// (site) under vals: the bound buffer where a parameter stands for it.
func (g *Graph) boundMem(cmd, site int, vals []paramVal) *Mem {
	for _, p := range g.params {
		if p.m != nil && slices.Contains(p.sites, paramSite{cmd, site}) {
			return vals[p.index].m
		}
	}
	c := &g.cmds[cmd]
	if site == siteSrc || c.dc.Kind == driver.GraphRead || len(c.mems) == 1 {
		return c.mems[0]
	}
	return c.mems[1]
}

// bindLocked makes x, the graph prepared for a queue, launch with vals:
// it sets the kernel objects' arguments that vals change and tells x the
// commands that differ from its last launch's. Called with g.mu held.
func (g *Graph) bindLocked(x *graphExec, vals []paramVal) error {
	if len(g.params) == 0 {
		return nil
	}
	dirty := make([]bool, len(g.cmds))
	// x.last is unknown when nil, and stale when a parameter was added
	// since x's last launch (BufferParam, ValueParam): bind all anew.
	known := len(x.last) == len(vals)
	for i, p := range g.params {
		if known && x.last[i] == vals[i] {
			continue
		}
		for _, s := range p.sites {
			dirty[s.cmd] = true
		}
	}
	for i := range g.cmds {
		c := &g.cmds[i]
		if c.kind != trace.Kernel || !g.hasSites(i) {
			continue
		}
		want := slices.Clone(c.args)
		for _, p := range g.params {
			for _, s := range p.sites {
				if s.cmd == i {
					want[s.arg] = p.arg(c.args[s.arg], vals[p.index])
				}
			}
		}
		if err := setArgs(c.own, want, c.cur); err != nil {
			x.last, c.cur = nil, nil // unknown: set them all next time
			return fmt.Errorf("%s: %w", g.describe(i), err)
		}
		c.cur = want
	}
	for i, d := range dirty {
		if !d {
			continue
		}
		if err := g.updateCmd(x, i, vals); err != nil {
			x.last = nil
			return fmt.Errorf("%s: %w", g.describe(i), err)
		}
	}
	x.last = append(x.last[:0], vals...)
	return nil
}

// hasSites reports whether a parameter stands for an argument of command
// i.
func (g *Graph) hasSites(i int) bool {
	for _, p := range g.params {
		for _, s := range p.sites {
			if s.cmd == i {
				return true
			}
		}
	}
	return false
}

// arg returns the argument a, recorded where p stands, bound to v.
func (p *graphParam) arg(a graphArg, v paramVal) graphArg {
	if p.m != nil {
		a.mem = v.m
	} else {
		a.bits, a.bytes = v.bits, v.bytes
	}
	return a
}

// updateCmd tells x that command i changed under vals: a launch's
// arguments (its kernel object's, set already), or a copy's, fill's or
// transfer's buffers.
func (g *Graph) updateCmd(x *graphExec, i int, vals []paramVal) error {
	c := &g.cmds[i]
	if c.kind == trace.Kernel {
		return x.drv.Update(i, c.r.ndrange())
	}
	cg, ok := x.drv.(driver.CommandGraph)
	if !ok {
		return fmt.Errorf("%w: the backend's graphs cannot change a %s's buffers", errors.ErrUnsupported, c.name)
	}
	dc := c.dc
	if err := g.boundCommand(&dc, i, vals); err != nil {
		return err
	}
	return cg.SetCommand(i, dc)
}

// boundCommand sets the buffers of dc, command i's, to those vals bind.
func (g *Graph) boundCommand(dc *driver.GraphCommand, i int, vals []paramVal) error {
	var err error
	if dc.Kind != driver.GraphFill && dc.Kind != driver.GraphWrite {
		if dc.Src, err = g.boundMem(i, siteSrc, vals).driverBuffer(); err != nil {
			return err
		}
	}
	if dc.Kind != driver.GraphRead {
		if dc.Dst, err = g.boundMem(i, siteDst, vals).driverBuffer(); err != nil {
			return err
		}
	}
	return nil
}

// paramUses records the use of the bound memory by the launch just
// enqueued on q, for stream-ordered reuse (recordUses).
func paramUses(q *Queue, vals []paramVal) {
	if !q.ctx.queues.multi.Load() {
		return
	}
	p := q.pts.point()
	for _, v := range vals {
		if v.m != nil {
			v.m.used(q, p)
		}
	}
}

// boundAt reports whether parameters stand for every place where command
// i uses its j-th memory, so that no launch uses that memory itself: a
// buffer parameter's sites, fixed when it was made, not the memory it was
// made from, which an Update may put at another argument. Called with g.mu
// held.
func (g *Graph) boundAt(i, j int) bool {
	for _, s := range memSites(&g.cmds[i], i, j) {
		found := false
		for _, p := range g.params {
			found = found || p.m != nil && slices.Contains(p.sites, s)
		}
		if !found {
			return false
		}
	}
	return true
}
