package rt

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgen-go/dgen/internal/envconf"
	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// Config says which backend and devices a context opens, and how.
type Config struct {
	// Backend names a registered backend ("opencl", "cuda"); empty or
	// "auto" chooses one (see chooseBackend in backend.go): rt/cuda for an
	// NVIDIA GPU when it is imported and libcuda loads, else "opencl".
	Backend string
	// Device is a device selector in the form SelectDevices documents.
	// It is ignored when Devices is set.
	Device string
	// Devices, if set, are the devices to open, all of one platform.
	Devices []driver.DeviceInfo
	// Profiling turns on device timestamps for every queue of the context.
	// Tracing (Trace or Tracer set) with device-time sampling turns it on
	// too.
	Profiling bool
	// Alloc configures the allocator of each device (AllocSite.Alloc and
	// Alloc).
	Alloc AllocConfig
	// Trace selects the built-in trace subscribers and the device-time
	// sampling, in the form of DGEN_TRACE (see trace.ParseOptions):
	// "perfetto:PATH", "summary", "log", "device=16", comma-separated.
	// Empty means none. It is ignored when Tracer is set.
	Trace string
	// Tracer, if set, is the tracer the context reports to, with the
	// subscribers Go code gave it; the context does not close it.
	Tracer *trace.Tracer
	// Cache configures the kernel/program cache; nil means what the
	// environment asks for (CacheConfigFromEnv).
	Cache *CacheConfig
}

// ConfigFromEnv returns the configuration that the environment asks for,
// reading variables through getenv (os.Getenv if nil): DGEN_DEVICE (a
// selector), DGEN_BACKEND, DGEN_PROFILE (1 or 0), DGEN_ALLOC_POLICY (full,
// tagged or bestfit), DGEN_ALLOC_MAX_HELD (a byte count such as 512MiB; 0 for no bound),
// DGEN_TRACE (see Config.Trace) and the cache variables of
// CacheConfigFromEnv. A malformed value is an error that names the variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := Config{Backend: getenv("DGEN_BACKEND"), Device: getenv("DGEN_DEVICE")}
	if v := getenv("DGEN_PROFILE"); v != "" {
		b, ok := envconf.Bool(v)
		if !ok {
			return cfg, fmt.Errorf("DGEN_PROFILE=%q: %s", v, envconf.BoolSyntax)
		}
		cfg.Profiling = b
	}
	if v := getenv("DGEN_ALLOC_POLICY"); v != "" {
		cfg.Alloc.Policy = AllocPolicy(strings.ToLower(strings.TrimSpace(v)))
		if _, err := cfg.Alloc.policy(); err != nil {
			return cfg, fmt.Errorf("DGEN_ALLOC_POLICY=%q: want full, tagged or bestfit", v)
		}
	}
	if v := getenv("DGEN_ALLOC_MAX_HELD"); v != "" {
		n, err := envconf.Size(v)
		if err != nil {
			return cfg, fmt.Errorf("DGEN_ALLOC_MAX_HELD=%q: %w", v, err)
		}
		cfg.Alloc.MaxHeld = n
	}
	if err := traceConfig(&cfg, getenv); err != nil {
		return cfg, err
	}
	cc, err := CacheConfigFromEnv(getenv)
	cfg.Cache = &cc
	return cfg, err
}

// Context is an open backend context over one or more devices of one
// platform, with a default queue on its first device. It is safe for
// concurrent use. Close it when done.
type Context struct {
	drv       driver.Context
	devices   []*Device
	queue     *Queue
	profiling bool

	tr        *trace.Tracer // never nil; see tracing.go
	ownTracer bool          // tr was made by the context, which closes it
	traced    bool          // tracing configured
	devTimes  bool          // traced with device-time sampling: queues profile
	nqueues   atomic.Int32  // queue ids

	closed atomic.Bool
	guard  closeGuard // calls in progress, which Close waits for (guard.go)
	mu     sync.Mutex // guards queues and the creation of allocators
	queues []*Queue

	decls                        declState // storage of the device globals of registered declarations
	allocCfg                     alloc.Config
	allocs                       []allocSlot // by device index, created on first use
	driverAllocs, driverReleases atomic.Uint64
	pc                           progcache.Cache[*Kernel] // the kernel/program cache (cache.go)
	disk                         *diskcache.Cache         // beneath pc
	remote                       diskcache.RemoteTier     // beneath disk; nil without DGEN_CACHE_REMOTE
	images                       imageState               // formats, samplers, images of allocation sites (image.go)
}

// Open opens a context on the device that the environment selects
// (DGEN_DEVICE; by default the first GPU, else the first CPU device).
func Open() (*Context, error) {
	cfg, err := ConfigFromEnv(nil)
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	return OpenConfig(cfg)
}

// OpenConfig opens a context as cfg says.
func OpenConfig(cfg Config) (*Context, error) {
	acfg, err := cfg.Alloc.policy()
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	cc, err := resolveCacheConfig(cfg.Cache)
	if err != nil {
		return nil, fmt.Errorf("open context: %w", err)
	}
	b, devs, err := chooseBackend(cfg) // backend.go
	if err != nil {
		return nil, err
	}
	for _, d := range devs[1:] {
		if d.PlatformIndex != devs[0].PlatformIndex {
			return nil, fmt.Errorf("open context on %s and %s: %w: devices of different platforms", devs[0].Label(), d.Label(), ErrInvalidArgument)
		}
	}
	drv, err := b.NewContext(devs)
	if err != nil {
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	c := &Context{drv: drv, profiling: cfg.Profiling, allocCfg: acfg, allocs: make([]allocSlot, len(devs))}
	for i, d := range devs {
		c.devices = append(c.devices, &Device{DeviceInfo: d, index: i})
	}
	if err := c.openTracing(cfg); err != nil {
		drv.Release()
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	if c.queue, err = c.NewQueue(c.devices[0]); err != nil {
		c.closeTracing()
		drv.Release()
		return nil, fmt.Errorf("open context on %s: %w", labels(devs), err)
	}
	c.initCache(cc)
	return c, nil
}

func labels(devs []driver.DeviceInfo) string {
	var s []string
	for _, d := range devs {
		s = append(s, strconv.Quote(d.Name))
	}
	return strings.Join(s, ", ")
}

// Devices returns the context's devices.
func (c *Context) Devices() []*Device {
	if c == nil {
		return nil
	}
	return c.devices
}

// Queue returns the context's default queue, on its first device.
func (c *Context) Queue() *Queue {
	if c == nil {
		return nil
	}
	return c.queue
}

// NewQueue creates an in-order queue on dev, which must be one of the
// context's devices. The context releases it on Close.
func (c *Context) NewQueue(dev *Device) (*Queue, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if dev == nil || dev.index >= len(c.devices) || c.devices[dev.index] != dev {
		return nil, fmt.Errorf("create queue: %w: the device is not one of this context's (%s)", ErrInvalidArgument, c.deviceLabel())
	}
	dq, err := c.drv.NewQueue(dev.index, c.profiling)
	if err != nil {
		return nil, fmt.Errorf("create queue on %q: %w", dev.Name, err)
	}
	q := &Queue{ctx: c, dev: dev, drv: dq, profiling: c.profiling, id: int(c.nqueues.Add(1) - 1)}
	if err := c.initQueueTrace(q); err != nil {
		dq.Release()
		return nil, err
	}
	c.mu.Lock()
	c.queues = append(c.queues, q)
	c.mu.Unlock()
	return q, nil
}

// Close waits for every command enqueued on the context's queues, releases
// every buffer of the allocators, held or in use, and the queues, then the
// context. It is safe to call while other goroutines use the context: it
// waits for the calls in progress, and every later call returns an error
// wrapping ErrClosed (a buffer from the allocator reports ErrClosed and
// ErrFreed; freeing it does nothing). Close is idempotent; a nil Context is
// an error wrapping ErrInvalidArgument.
func (c *Context) Close() error {
	if c == nil {
		return fmt.Errorf("close context: %w: nil context", ErrInvalidArgument)
	}
	if c.closed.Swap(true) {
		return nil
	}
	c.drain()
	c.mu.Lock()
	qs := c.queues
	c.queues = nil
	c.mu.Unlock()
	// Drain the queues before anything they use is released.
	var errs []error
	for _, q := range qs {
		if err := q.drv.Finish(); err != nil {
			errs = append(errs, fmt.Errorf("close context: finish queue on %q: %w", q.dev.Name, err))
		}
		q.drainTrace()
	}
	errs = append(errs, c.closeAllocators()...)
	errs = append(errs, c.closeImages()...)
	for _, q := range qs {
		if err := q.drv.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release queue on %q: %w", q.dev.Name, err))
		}
	}
	cacheErrs := c.pc.Close()
	c.closeRemote() // fleet.go
	for _, err := range cacheErrs {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	if err := c.releaseDecls(); err != nil {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	if err := c.closeTracing(); err != nil {
		errs = append(errs, err)
	}
	if err := c.drv.Release(); err != nil {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	return errors.Join(errs...)
}
