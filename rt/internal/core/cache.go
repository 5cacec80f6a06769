package core

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// The context's kernel/program cache is package rt/internal/progcache;
// this file connects it to the context: it builds through the context's
// driver and traces through its tracer.

// contextCache is a context's program cache with what lies beneath it.
// OpenConfig sets it up (initCache): disk and remote are set then and
// never change; pc is safe for concurrent use; buildNanos is an atomic
// counter.
type contextCache struct {
	pc         progcache.Cache[*prototype] // the kernel/program cache (initCache)
	disk       *diskcache.Cache            // beneath pc
	remote     diskcache.RemoteTier        // beneath disk; nil without DGEN_CACHE_REMOTE
	buildNanos atomic.Int64                // the time of pc's builds from source, for stats.Cache
}

// persistentCache returns the persistent cache beneath the context's
// program cache; it is disabled (Enabled false) when the configuration
// turns it off or its directory cannot be used.
func (c *Context) persistentCache() *diskcache.Cache {
	if c == nil {
		return nil
	}
	return c.cache.disk
}

// initCache opens the remote tier and the persistent cache that cfg
// configures, warning when one cannot be used, and sets up the context's
// program cache over them.
func (c *Context) initCache(cfg CacheConfig) {
	dcfg := cfg.Disk.diskConfig(c.log())
	dcfg.Remote = c.openRemote(&cfg, dcfg.Trace)
	disk, err := diskcache.Open(dcfg)
	c.cache.disk = disk
	if err != nil {
		c.log().Warn("dgen: persistent program cache off", "dir", disk.Dir(), "err", err)
	}
	pcfg := progcache.Config{
		InMemory:          cfg.InMemory,
		EvictionThreshold: cfg.EvictionThreshold,
		CompileOptions:    cfg.CompileOptions,
		Disk:              disk,
		Faulted:           c.faultErr,
		Hooks: progcache.Hooks{
			Event: func(ev trace.Cache) { c.traceCache(0, ev) },
			Now:   c.traceNow,
			Log:   dcfg.Trace,
		},
	}
	for _, d := range c.devices {
		pcfg.Devices = append(pcfg.Devices, diskcache.Device{Platform: d.Platform, Name: d.Name, Version: d.Version, DriverVersion: d.DriverVersion})
	}
	c.cache.pc.Init((*cacheBuilder)(c), pcfg)
}

// cacheBuilder is the context as the program cache's builder.
type cacheBuilder Context

func (b *cacheBuilder) Enter(img *progcache.Image) error {
	c := (*Context)(b)
	if err := c.enter(); err != nil {
		if img != nil {
			return fmt.Errorf("build program %s: %w", img.Name, err)
		}
		return fmt.Errorf("build program: %w", err)
	}
	if img != nil {
		if err := checkImageOptions(img); err != nil {
			c.exit()
			return fmt.Errorf("build program %s: %w", img.Name, err)
		}
	}
	return nil
}

func (b *cacheBuilder) Exit() { (*Context)(b).exit() }

func (b *cacheBuilder) Build(name, source, options string) (driver.Program, error) {
	t0 := time.Now()
	p, err := (*Context)(b).buildDirect(buildRequest{name: name, source: source, options: options})
	b.cache.buildNanos.Add(int64(time.Since(t0)))
	if err != nil {
		return nil, err
	}
	return p.drv, nil
}

func (b *cacheBuilder) Load(name string, binaries [][]byte, options string) (driver.Program, error) {
	p, err := (*Context)(b).buildDirect(buildRequest{name: name, binaries: binaries, options: options})
	if err != nil {
		return nil, err
	}
	return p.drv, nil
}

// NewKernel makes the cache's kernel of (program, name): the prototype of
// the kernel's instances (instance.go).
func (b *cacheBuilder) NewKernel(p driver.Program, program, name string) (*prototype, error) {
	c := (*Context)(b)
	drv, n, err := (&builtProgram{ctx: c, drv: p, name: program}).driverKernel(name)
	if err != nil {
		return nil, err
	}
	return &prototype{drv: drv, prog: program, name: name, nargs: n, wg: make([]atomic.Pointer[wgInfo], len(c.devices))}, nil
}

// ReleaseKernel releases a prototype and its spare instances.
func (b *cacheBuilder) ReleaseKernel(k *prototype) error {
	k.pool.kill()
	if err := k.drv.Release(); err != nil {
		return fmt.Errorf("release kernel %q: %w", k.name, err)
	}
	return nil
}

// devIndex returns the index of q's device in the context, or -1 when q is
// not a queue of the context, which the cache reports as an invalid
// argument.
func (c *Context) devIndex(q *Queue) int {
	if q == nil || q.ctx != c {
		return -1
	}
	return q.dev.index
}

// openRemote connects the context's cache to the shared remote tier that
// cfg.Remote names, if any, and returns it to be put beneath the
// persistent cache; its trace goes to trace. A remote that cannot be
// opened is logged once and left out.
func (c *Context) openRemote(cfg *CacheConfig, trace io.Writer) diskcache.Remote {
	if cfg.Remote.URL == "" {
		return nil
	}
	rc := cfg.Remote.remoteConfig()
	rc.Logger, rc.Trace, rc.Events = c.log(), trace, c.remoteEvent
	r, err := diskcache.OpenRemote(rc)
	if err != nil || r == nil {
		if err == nil {
			err = errors.New("no tier")
		}
		c.log().Warn("dgen: remote program cache off", "err", err)
		return nil
	}
	c.cache.remote = r
	return r
}

// remoteEvent traces remote hits and publishes as cache events.
func (c *Context) remoteEvent(e diskcache.RemoteEvent) {
	op := trace.RemoteHit
	if e.Op == diskcache.RemotePublish {
		op = trace.RemotePublish
	}
	c.traceCache(0, trace.Cache{Op: op, Program: e.Program, Duration: e.Duration.Nanoseconds()})
}
