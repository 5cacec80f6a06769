package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
)

// The hooks of rt's tests (package rt_test, in rt): what they observe and
// force of the core's unexported state, through a context on a real
// device. Nothing else calls them, and rt does not show them (mkfacade's
// hiddenFiles).

// Names for the program and kernel cache (package rt/internal/progcache).

type (
	ProgramImage   = progcache.Image
	KernelSpec     = progcache.KernelKey
	CachedKernel   = progcache.Kernel[*prototype]
	CacheSpecValue = progcache.SpecValue
)

func NewKernelSpec(img *ProgramImage, name string) *KernelSpec {
	return progcache.NewKernelKey(img, name)
}

func (c *Context) ProgramFor(img *ProgramImage) (*builtProgram, error) { return c.programFor(img) }

func (c *Context) KernelFor(spec *KernelSpec, q *Queue) (*CachedKernel, error) {
	ck, err := c.cache.pc.Kernel(spec, c.devIndex(q))
	if err != nil {
		return nil, c.foreignQueue(spec, q, err)
	}
	return ck, nil
}

// SpawnKernel returns a kernel object of its own of the cached kernel of
// spec on q's device, made from the cached program as an instance is
// (spawn), with the cache's kernel it was made from. The kernel is rt/raw's
// (raw.go): live in the context until the caller releases it, or Close.
func (c *Context) SpawnKernel(spec *KernelSpec, q *Queue) (*RawKernel, *CachedKernel, error) {
	ck, err := c.cache.pc.KernelHeld(context.Background(), spec, c.devIndex(q), nil)
	if err != nil {
		return nil, nil, c.foreignQueue(spec, q, err)
	}
	defer c.cache.pc.Unhold(ck)
	k := new(RawKernel)
	if err := c.spawn(ck, &k.kernelObject); err != nil {
		return nil, nil, err
	}
	if err := c.enter(); err != nil {
		k.release()
		return nil, nil, err
	}
	defer c.exit()
	c.live.add(k)
	return k, ck, nil
}

// foreignQueue returns err, or for a queue of another context an error
// that names both contexts' devices.
func (c *Context) foreignQueue(spec *KernelSpec, q *Queue, err error) error {
	if q == nil || spec == nil || q.ctx == c {
		return err
	}
	return fmt.Errorf("get kernel %q: %w", spec.Name(), c.sameContext("the queue", q.ctx))
}

func (q *Queue) LaunchSkip(skip int, k *RawKernel, r Range, wait ...*Event) (*Event, error) {
	return q.launch(k.object(), nil, &r, wait, launchCall{op: opLaunch, skip: skip})
}

func (q *Queue) SubmitSkip(skip int, k *RawKernel, r Range, wait ...*Event) error {
	_, err := q.launch(k.object(), nil, &r, wait, launchCall{op: opSubmit, skip: skip})
	return err
}

// CachedNumArgs returns the number of arguments of the cached kernel ck.
func CachedNumArgs(ck *CachedKernel) int { return ck.Object().nargs }

// ParkAcquired parks a kernel instance that a registered kernel's Acquire
// returned, as its Submit and Launch do last.
func ParkAcquired(k *Kernel) { k.park() }

func (m *Mem) Driver() (driver.Buffer, error) { return m.driverBuffer() }

// The unexported parts of the API that rt's external tests drive.

type SpecPair = specValue

func (c *Context) SetSpecValue(name, value string) error { return c.setSpecValue(name, value) }
func (c *Context) ClearSpecValue(name string) error      { return c.clearSpecValue(name) }
func (c *Context) SpecValues() []SpecPair                { return c.specValues() }
func SpecLiteral[T any](v T) (string, error)             { return specLiteral(v) }
func (d *Device) ClockError() time.Duration              { return d.clockError() }
func (c *Context) NewMem(size int64) (*Mem, error)       { return c.newMem(size) }
func (c *Context) PersistentCache() *diskcache.Cache     { return c.persistentCache() }
func (q *Queue) Profiling() bool                         { return q.profilingOn() }
func (c *Context) SyncLaunchesOn() bool                  { return c.fault.syncLaunches }
func (c *Context) ProfilingOn() bool                     { return c.settings.profiling }

// AllocTaggedOn reports whether the context's allocators have the tagged
// policy (alloc.SeedPolicy) rather than the full one.
func (c *Context) AllocTaggedOn() bool {
	return c.settings.alloc.OneBlockPerTag && c.settings.alloc.DisableUntaggedPool
}
func (e *Event) Status() (driver.EventStatus, error) { return e.status() }

func (c *Context) LoadProgram(name string, binaries [][]byte, options string) (*builtProgram, error) {
	return c.loadProgram(name, binaries, options)
}

// BuildSource is rt/raw's Build, with the program's unexported methods
// (KernelNames, Binaries) reachable.
func (c *Context) BuildSource(name, source, options string) (*builtProgram, error) {
	return c.build(buildRequest{name: name, source: source, options: options})
}

// NilProgram returns a nil program, whose methods return errors.
func NilProgram() *builtProgram { return nil }

// DefaultDiskCache returns the default persistent cache configuration
// in dir.
func DefaultDiskCache(dir string) DiskCacheConfig {
	return diskCacheConfig(diskcache.DefaultConfig(dir))
}

// ReleaseSamplers releases the context's driver samplers now, as Close
// does: the fault of a sampler gone before a graph that recorded it
// launches. A later SetSampler makes new ones.
func ReleaseSamplers(c *Context) error {
	c.images.mu.Lock()
	ss := c.images.samplers
	c.images.samplers = nil
	c.images.mu.Unlock()
	return errors.Join(releaseSamplers(ss)...)
}

// GraphNative reports, for each queue the graph was prepared for, whether
// it was prepared as the device API's own graph object.
func GraphNative(g *Graph) []bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []bool
	for _, x := range g.execs {
		out = append(out, x.opt.Native)
	}
	return out
}

// GraphLen returns the number of commands the graph recorded.
func GraphLen(g *Graph) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.cmds)
}

// Instances returns the number of kernel instances the context holds.
func Instances(c *Context) int {
	c.instances.mu.Lock()
	defer c.instances.mu.Unlock()
	return len(c.instances.m)
}

// BlockID names the driver buffer of m: the same for every Mem that the
// allocator makes for one block.
func (m *Mem) BlockID() uint64 { return m.id }

// ForgetLostDevices forgets the devices that backends lost to faults
// (fault.go), which the process otherwise keeps until it ends: each fault
// test starts with every device usable.
func ForgetLostDevices() {
	processFaults.mu.Lock()
	defer processFaults.mu.Unlock()
	processFaults.m = nil
}

// SetLaunchPCs turns on the recording of every launch's Go line, as
// Config.SyncLaunches does, without the synchronisation: what
// BenchmarkLaunchPC measures.
func SetLaunchPCs(c *Context, on bool) { c.fault.launchPCs = on }

// Live returns the number of objects the context made for its user that
// are not released yet (live.go): what Close would release.
func Live(c *Context) int { return c.live.count() }

// DriverContext returns the backend's context of c.
func DriverContext(c *Context) driver.Context { return c.drv }

// HasSymbols reports whether the executable's symbol table can be read:
// go test strips it, go test -c keeps it.
func HasSymbols() bool { return len(dataSymbols()) > 0 }

// CheckLaunch runs every check that a launch of k over r on q makes
// before the driver sees it, and returns the range as the driver would
// receive it (with the work-group size rt chose, if it did), launching
// nothing.
func CheckLaunch(q *Queue, k *RawKernel, r Range) (Range, error) {
	if err := q.enter(); err != nil {
		return r, err
	}
	defer q.exit()
	if k == nil {
		return r, nilKernel("check")
	}
	_, err := q.checkLaunch(&k.kernelObject, nil, &r, nil, opCheck)
	return r, err
}

// GroupLimits returns the most work-groups per dimension and in all that
// q's device takes in one launch, as its backend reports them (0: no
// limit known).
func GroupLimits(q *Queue) ([3]int64, int64) { return q.dev.lim.groups, q.dev.lim.total }

// Tuning is the whole outcome of a SpecConst.Tune, for tests.
type Tuning[T any] struct {
	Value  T
	Cached bool
	Timed  int
	Values []T
	Times  []time.Duration
	Errs   []error
}

// TuneFull is SpecConst.TuneContext with the whole outcome.
func TuneFull[T any](ctx context.Context, q *Queue, s *SpecConst[T], run func(*Queue, T) error) (Tuning[T], error) {
	r, err := s.tune(ctx, q, run)
	return Tuning[T]{r.value, r.cached, r.timed, r.values, r.times, r.errs}, err
}

// TuneRecordKey returns the cache key under which Tune keeps the tuning
// record of s for q's device, for tests that forge records.
func TuneRecordKey[T any](q *Queue, s *SpecConst[T]) diskcache.Key {
	d := s.registration()
	return q.ctx.tuneKey(d, checkOf(d), q)
}

// LiveQueues returns the number of the context's queues that Close would
// release: the default queue, the pool's, and NewQueue's not released.
func LiveQueues(c *Context) int {
	return c.queues.len()
}

// UseLogLen returns the number of queues that m's use log records besides
// its first (streamorder.go).
func UseLogLen(m *Mem) int {
	var n int
	if x := m.uses.more.Load(); x != nil {
		n = len(x.uses)
	}
	return n
}

// CountDriverEvents has q, a queue that nothing uses yet, count the
// driver events that its fills, copies and markers create, and returns
// the count: its driver queue is wrapped in one that counts them, and
// forwards driver.SubmitQueue to the backend's queue, which must have it.
func CountDriverEvents(q *Queue) *atomic.Int64 {
	c := &countingQueue{Queue: q.drv, sq: q.drv.(driver.SubmitQueue)}
	q.drv = c
	return &c.n
}

// countingQueue is the driver queue of CountDriverEvents.
type countingQueue struct {
	driver.Queue
	sq driver.SubmitQueue
	n  atomic.Int64
}

func (c *countingQueue) count(ev driver.Event, err error) (driver.Event, error) {
	if ev != nil {
		c.n.Add(1)
	}
	return ev, err
}

func (c *countingQueue) FillBuffer(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) (driver.Event, error) {
	return c.count(c.Queue.FillBuffer(b, pattern, offset, size, wait))
}

func (c *countingQueue) CopyBuffer(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) (driver.Event, error) {
	return c.count(c.Queue.CopyBuffer(src, dst, srcOffset, dstOffset, size, wait))
}

func (c *countingQueue) Marker(wait []driver.Event) (driver.Event, error) {
	return c.count(c.Queue.Marker(wait))
}

func (c *countingQueue) SubmitFill(b driver.Buffer, pattern []byte, offset, size int64, wait []driver.Event) error {
	return c.sq.SubmitFill(b, pattern, offset, size, wait)
}

func (c *countingQueue) SubmitCopy(src, dst driver.Buffer, srcOffset, dstOffset, size int64, wait []driver.Event) error {
	return c.sq.SubmitCopy(src, dst, srcOffset, dstOffset, size, wait)
}
