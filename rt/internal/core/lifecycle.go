package core

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
)

// A context's life: Open sets up everything a context holds, from the
// backend's context to the program cache, and Close waits for the calls in
// progress (drain) and the device, then releases it all in order. Close's
// steps follow it here in the order it takes them, but the release of
// what the context made for its user (closeLive, live.go). What makes
// Close safe under concurrent use, the close guard and the queues' gates,
// is context.go's.

// Open opens a context as the environment says: it is OpenConfig of
// ConfigFromEnv(os.Getenv), on the device that DGEN_DEVICE selects, by
// default the first GPU, else the first CPU device. A malformed variable
// fails it with an error that names the variable.
func Open() (*Context, error) {
	cfg, err := ConfigFromEnv(os.Getenv) // env.go
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	return OpenConfig(cfg)
}

// OpenConfig opens a context as cfg says, and only as it says: it reads
// no DGEN_ variable, and a field left at its zero value has its documented
// default, whatever the environment holds (ConfigFromEnv reads that). It
// checks every setting first: a bad one fails it with an error wrapping
// ErrInvalidArgument that names the field.
func OpenConfig(cfg Config) (*Context, error) {
	// The variables of the driver libraries, which a backend must see as
	// its library sees them, are read where the backend asks (env.go).
	if err := cfg.check(); err != nil { // config.go
		return nil, fmt.Errorf("open context: %w", err)
	}
	acfg, err := cfg.allocConfig()
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	gcfg := cfg.graphConfig()
	cc := cfg.cacheConfig()
	driver.Configure(cfg.driverOptions())    // before any backend loads its library
	name, drv, devs, err := openBackend(cfg) // backend.go
	if err != nil {
		return nil, err
	}
	c := &Context{drv: drv, backend: name, settings: cfg.settings(acfg, gcfg), allocs: allocators{slots: make([]allocSlot, len(devs))},
		fault: faultState{syncLaunches: cfg.SyncLaunches, launchPCs: cfg.SyncLaunches}, guard: closeGuard{done: make(chan struct{})}}
	c.pool.max = cfg.QueuePool
	if c.pool.max <= 0 {
		c.pool.max = max(runtime.GOMAXPROCS(0), 16)
	}
	for i, d := range devs {
		c.devices = append(c.devices, newDevice(d, i))
		c.devices[i].budget.limit = cfg.MemoryLimit
	}
	if err := c.openTracing(cfg); err != nil {
		drv.Release()
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	if c.queue, err = c.NewQueue(c.devices[0]); err != nil {
		c.closeTracing()
		drv.Release()
		if errors.Is(err, ErrDeviceFault) {
			openFault(name, devs, err)
		}
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	if lc, ok := drv.(driver.LineInfoContext); ok && cfg.SyncLaunches {
		cc.CompileOptions = strings.TrimSpace(cc.CompileOptions + " " + lc.LineInfoOptions())
	}
	c.initCache(cc)
	_, noCUDA := driver.Lookup("cuda")
	noteNVIDIA(c.log(), nvidiaOnOpenCL(cfg, name, devs, noCUDA == nil))
	return c, nil
}

// Close waits for every command enqueued on the context's queues, then
// releases everything the context made that is not yet released: buffers
// (from the allocators, held or in use, and from NewBuffer), views,
// images, pinned memory, events, graphs, kernels and programs, and the
// queues, then the context. It is safe to call while other goroutines use
// the context: it waits for the calls in progress, and every later call
// returns an error wrapping ErrClosed, but Free and Release of the
// context's objects, which return nil (Close released them). Close is
// idempotent: a later call returns nil at once, though the first may
// still be releasing (Shutdown waits for it, and returns its error). A nil
// Context is an error wrapping ErrInvalidArgument.
//
// Close of a context that recorded a device fault (Err), or that notices
// one as it finishes the queues, waits for no device work: it releases
// everything all the same, ignoring the errors that only repeat the
// fault, and returns one error, the fault's.
func (c *Context) Close() error {
	if c == nil {
		return fmt.Errorf("close context: %w: nil context", ErrInvalidArgument)
	}
	if c.closed.Swap(true) {
		return nil
	}
	err := c.release()
	c.guard.err = err
	close(c.guard.done)
	return err
}

// closeWait closes c, or waits until the Close that another goroutine
// began has finished, and returns the first Close's error: Shutdown's
// "once the context is closed, with Close's error". A call inside one of
// c's calls must not make it (the first Close waits for that call).
func (c *Context) closeWait() error {
	c.Close()
	<-c.guard.done
	return c.guard.err
}

// release is Close's work, done once, by the first Close: it drains the
// calls in progress, finishes the queues and releases everything.
func (c *Context) release() error {
	c.pool.wakeAll() // AcquireQueueContext's waiters, a Shutdown waiting for the pool's queues
	c.wakeBudgets()  // allocations waiting for a free
	c.drain()
	qs := c.queues.takeAll()
	// Drain the queues before anything they use is released.
	var errs []error
	for _, q := range qs {
		if !c.faulted() {
			if err := q.drv.Finish(); err != nil {
				errs = append(errs, c.recordFault(qs, q, fmt.Errorf("close context: finish queue on %q: %w", q.dev.Name, err)))
			}
		}
		q.drainTrace(!c.faulted())
		for _, v := range q.viewsOf() {
			v.drainTrace(false) // the queue is finished: every task has completed
		}
	}
	errs = append(errs, c.closeGraphs()...)
	errs = append(errs, c.closeLive()...)
	errs = append(errs, c.closeAllocators()...)
	errs = append(errs, c.closeImages()...)
	for _, q := range qs {
		if err := q.unref(); err != nil { // the pinned memory mapped through it went with closeLive
			errs = append(errs, fmt.Errorf("close context: %w", err))
		}
	}
	errs = append(errs, c.closeHealth()...)
	cacheErrs := c.cache.pc.Close()
	cacheErrs = append(cacheErrs, c.closeInstances()...)
	c.closeRemote()
	for _, err := range cacheErrs {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	c.releaseDecls()
	if err := c.closeTracing(); err != nil {
		errs = append(errs, err)
	}
	if err := c.drv.Release(); err != nil {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	if f := c.fault.recorded.Load(); f != nil {
		return fmt.Errorf("close context: %w", f) // the release errors only repeat it
	}
	return errors.Join(errs...)
}

// drain waits until every call that entered before Close has exited: the
// context's calls, then those of each queue. Close calls it with c.closed
// set. Once no call of the context is inside, no queue is being created
// (NewQueue enters the context), so the queues are all there are.
func (c *Context) drain() {
	c.waitIdle(&c.guard.n)
	qs := c.queues.snapshot()
	for _, q := range qs {
		c.waitIdle(&q.gate.n)
	}
}

// waitIdle waits until n, a count of calls inside, is 0. Close calls it
// with c.closed set, after which the call that brings a count to 0 wakes
// it (wakeDrain).
func (c *Context) waitIdle(n *atomic.Int64) {
	g := &c.guard
	g.mu.Lock()
	g.idle.L = &g.mu
	for n.Load() != 0 {
		g.idle.Wait()
	}
	g.mu.Unlock()
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

// closeAllocators releases every allocator's blocks, held or in use, and
// its queue. Called by Close with c.closed set.
func (c *Context) closeAllocators() []error {
	c.allocs.mu.Lock() // no allocator is being installed
	c.allocs.mu.Unlock()
	var errs []error
	for i := range c.allocs.slots {
		d := c.allocs.slots[i].Load()
		if d == nil {
			continue
		}
		if err := d.a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator on %q: %w", d.dev.Name, err))
		}
		if !c.faulted() { // after a fault the wait can only fail again
			if err := d.q.Finish(); err != nil {
				errs = append(errs, fmt.Errorf("close context: allocator queue on %q: %w", d.dev.Name, err))
			}
		}
		if err := d.q.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator queue on %q: %w", d.dev.Name, err))
		}
	}
	return errs
}

// closeImages releases the samplers and the images held for allocation
// sites. Called by Close with c.closed set, after the queues have drained.
func (c *Context) closeImages() []error {
	c.images.mu.Lock()
	pools, samplers := c.images.pools, c.images.samplers
	c.images.pools, c.images.samplers = nil, nil
	c.images.mu.Unlock()
	var errs []error
	for _, a := range pools {
		if err := a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close context: images: %w", err))
		}
	}
	for _, err := range releaseSamplers(samplers) {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	return errs
}

// closeInstances releases every instance. Called by Close after drain.
func (c *Context) closeInstances() []error {
	c.instances.mu.Lock()
	ks := c.instances.m
	c.instances.m = nil
	c.instances.mu.Unlock()
	var errs []error
	for k := range ks {
		if err := k.release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release kernel %q: %w", k.name, err))
		}
	}
	return errs
}

// remoteFlushWait bounds how long Close waits for publishes to the remote
// tier that are still in flight.
const remoteFlushWait = 2 * time.Second

// closeRemote waits a little for publishes in flight, disconnects, and
// adds the counters to those recorded in the cache directory, which
// `dgen cache stat` shows; then it closes the persistent cache, which
// holds its directory open.
func (c *Context) closeRemote() {
	if c.cache.remote != nil {
		c.cache.remote.Close(remoteFlushWait)
		c.cache.disk.Wait()
		if c.cache.disk.Enabled() {
			if err := diskcache.RecordRemote(c.cache.disk.Dir(), c.cache.remote.Stats()); err != nil {
				c.cache.pc.Logf("%v", err)
			}
		}
	}
	if c.cache.disk != nil {
		c.cache.disk.Close()
	}
}

// releaseDecls drops the storage of device globals, which Close has
// released with the context's other live memory (live.go), and releases
// the events of their zero fills. Close calls it once no call is in
// progress, so no slot is being made or ordered.
func (c *Context) releaseDecls() {
	c.decls.mu.Lock()
	slots := c.decls.globals
	c.decls.globals, c.decls.host = nil, nil
	c.decls.mu.Unlock()
	for _, s := range slots {
		if s.fill != nil {
			s.fill.Release()
		}
	}
}

// closeTracing closes the tracer if the context opened it. Close has
// drained the queues' pending tasks.
func (c *Context) closeTracing() error {
	if !c.tracing.own {
		return nil
	}
	err := c.tracing.tr.Close()
	if c.tracing.log != nil {
		c.tracing.log.Flush()
	}
	if err != nil {
		return fmt.Errorf("close context: %w", err)
	}
	return nil
}
