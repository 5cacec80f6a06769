package rt

import (
	"fmt"
	"io"
	"os"

	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/progcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// The context's kernel/program cache is package rt/internal/progcache;
// this file connects it to the context: it builds through the context's
// driver and traces through its tracer.

// CacheStats counts what a context's program cache did.
type CacheStats struct {
	Builds       int64 `json:"builds"`        // programs compiled from source
	DiskHits     int64 `json:"disk_hits"`     // programs loaded from the persistent cache
	MemHits      int64 `json:"mem_hits"`      // programs found in memory (done or being built)
	BuildErrors  int64 `json:"build_errors"`  // builds that failed with ErrBuildFailed
	Retries      int64 `json:"retries"`       // waiters that retried after a failure that was not a build error
	Evictions    int64 `json:"evictions"`     // programs evicted from memory
	OOMFlushes   int64 `json:"oom_flushes"`   // flushes of the whole cache on ErrOutOfMemory
	KernelMisses int64 `json:"kernel_misses"` // fast kernel cache misses
	Programs     int   `json:"programs"`      // programs in memory now
	Bytes        int64 `json:"bytes"`         // their binary sizes
	// Remote counts what the shared remote tier (DGEN_CACHE_REMOTE) did.
	Remote diskcache.RemoteStats `json:"remote"`
}

// CacheStats returns the counters of the context's program cache.
func (c *Context) CacheStats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	s := c.pc.Stats()
	return CacheStats{
		Builds: s.Builds, DiskHits: s.DiskHits, MemHits: s.MemHits, BuildErrors: s.BuildErrors,
		Retries: s.Retries, Evictions: s.Evictions, OOMFlushes: s.OOMFlushes, KernelMisses: s.KernelMisses,
		Programs: s.Programs, Bytes: s.Bytes, Remote: c.remoteStats(),
	}
}

// PersistentCache returns the persistent cache beneath the context's
// program cache; it is disabled (Enabled false) when the configuration
// turns it off or its directory cannot be used.
func (c *Context) PersistentCache() *diskcache.Cache {
	if c == nil {
		return nil
	}
	return c.disk
}

// initCache opens the remote tier and the persistent cache that cfg
// configures, warning when one cannot be used, and sets up the context's
// program cache over them.
func (c *Context) initCache(cfg CacheConfig) {
	c.openRemote(&cfg) // fleet.go
	if cfg.Disk.Warnings == nil {
		cfg.Disk.Warnings = warnings(&cfg)
	}
	disk, err := diskcache.Open(cfg.Disk)
	c.disk = disk
	if err != nil {
		fmt.Fprintf(warnings(&cfg), "dgen: warning: persistent program cache off: %v\n", err)
	}
	pcfg := progcache.Config{
		InMemory:          cfg.InMemory,
		EvictionThreshold: cfg.EvictionThreshold,
		CompileOptions:    cfg.CompileOptions,
		Disk:              disk,
		Hooks: progcache.Hooks{
			Event: func(ev trace.Cache) { c.traceCache(0, ev) },
			Now:   c.traceNow,
			Log:   cfg.Disk.Trace,
		},
	}
	for _, d := range c.devices {
		pcfg.Devices = append(pcfg.Devices, diskcache.Device{Platform: d.Platform, Name: d.Name, Version: d.Version, DriverVersion: d.DriverVersion})
	}
	c.pc.Init((*cacheBuilder)(c), pcfg)
}

// warnings returns where cfg's warnings go.
func warnings(cfg *CacheConfig) io.Writer {
	if cfg.Warnings == nil {
		return os.Stderr
	}
	return cfg.Warnings
}

// cacheBuilder is the context as the program cache's builder.
type cacheBuilder Context

func (b *cacheBuilder) Enter(img *progcache.Image) error {
	c := (*Context)(b)
	if err := c.enter(); err != nil {
		return err
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
	p, err := (*Context)(b).buildDirect(buildRequest{name: name, source: source, options: options})
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

func (b *cacheBuilder) NewKernel(p driver.Program, program, name string) (*Kernel, error) {
	return (&BuiltProgram{ctx: (*Context)(b), drv: p, name: program}).Kernel(name)
}

// build is the one function through which every program is made: a
// program built from source goes through the cache, keyed by the hash of
// its source with its name as the image id; one loaded from binaries the
// caller gave is made directly.
func (c *Context) build(req buildRequest) (*BuiltProgram, error) {
	if req.binaries != nil {
		return c.buildDirect(req)
	}
	return c.programFor(&progcache.Image{ID: req.name, Name: req.name, Source: req.source, Options: req.options})
}

// programFor returns img built for every device of the context through
// the cache. The caller may Release the program it gets; the cache keeps
// its own reference. A compile error wraps ErrBuildFailed and carries the
// build log.
func (c *Context) programFor(img *progcache.Image) (*BuiltProgram, error) {
	if c == nil {
		return nil, c.enter() // the error of a nil context
	}
	p, name, err := c.pc.Program(img)
	if err != nil {
		return nil, err
	}
	return &BuiltProgram{ctx: c, drv: p, name: name}, nil
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
