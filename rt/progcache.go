package rt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/fleetcache"
	"github.com/dgen-go/dgen/rt/trace"
)

// programImage is a device image as the program cache sees it: the
// registration of a //dgen:program declaration makes one, which
// Program.Build hands to programFor and kernel registration to
// newKernelKey. Its fields must not change once it has been used.
type programImage struct {
	// ID is the image's unique id, "<import path>.<Name>".
	ID string
	// Name is a readable name for errors and cache listings; empty means ID.
	Name string
	// Source is the kernel source that is built.
	Source string
	// SourceHash is the xxhash64 of Source; 0 means it is computed.
	SourceHash uint64
	// Options are the program's own build options.
	Options string
	// origin says where Options came from, for errors: a //dgen:program
	// directive, or (empty) the API.
	origin string
	// SpecConsts are the specialization constants the image uses, with
	// their default values; the context's values (SetSpecValue) override
	// the defaults. Nil means every value set on the context applies.
	SpecConsts []SpecValue
}

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
	Remote fleetcache.Stats `json:"remote"`
}

// maxWaitRetries bounds how often a goroutine that waited on another's
// build retries after a failure that was not a build error.
const maxWaitRetries = 3

// progCache is a context's kernel/program cache. The zero value is not
// usable; init sets it up.
type progCache struct {
	ctx *Context
	cfg CacheConfig

	disk    *diskcache.Cache
	fleet   *fleetcache.Fleet // nil without DGEN_CACHE_REMOTE
	devKeys []diskcache.Device

	traceMu sync.Mutex
	trace   io.Writer

	mu     sync.Mutex             // guards the fields below and fast's writers
	progs  map[string]*progEntry  // by full key
	lru    progList               // done entries, least recently used first
	bytes  int64                  // binary sizes of the entries in lru
	all    map[*sharedProgram]int // every live program, for close
	closed bool

	fast atomic.Pointer[fastTable] // kernelcache.go

	specMu   sync.Mutex // guards specSets and writes of spec
	spec     atomic.Pointer[specSet]
	specSets map[string]*specSet

	builds, diskHits, memHits, buildErrors, retries, evictions, oomFlushes, kernelMisses atomic.Int64
}

func resolveCacheConfig(cc *CacheConfig) (CacheConfig, error) {
	if cc != nil {
		return *cc, checkOptions(cc.CompileOptions, optionsFromConfig)
	}
	return CacheConfigFromEnv(nil)
}

func (pc *progCache) init(c *Context, cfg CacheConfig) {
	pc.ctx = c
	pc.cfg = cfg
	pc.progs = make(map[string]*progEntry)
	pc.all = make(map[*sharedProgram]int)
	pc.specSets = make(map[string]*specSet)
	pc.spec.Store(pc.internSpecs(nil))
	pc.fast.Store(&fastTable{})
	pc.trace = cfg.Disk.Trace
	for _, d := range c.devices {
		pc.devKeys = append(pc.devKeys, diskcache.Device{Platform: d.Platform, Name: d.Name, Version: d.Version, DriverVersion: d.DriverVersion})
	}
	pc.openRemote(&cfg) // fleet.go
	if cfg.Disk.Warnings == nil {
		cfg.Disk.Warnings = warnings(&cfg)
	}
	disk, err := diskcache.Open(cfg.Disk)
	pc.disk = disk
	if err != nil {
		fmt.Fprintf(warnings(&cfg), "dgen: warning: persistent program cache off: %v\n", err)
	}
}

func warnings(cfg *CacheConfig) io.Writer {
	if cfg.Warnings == nil {
		return os.Stderr
	}
	return cfg.Warnings
}

func (pc *progCache) tracef(format string, args ...any) {
	if pc.trace == nil {
		return
	}
	pc.traceMu.Lock()
	defer pc.traceMu.Unlock()
	fmt.Fprintf(pc.trace, "dgen cache: "+format+"\n", args...)
}

// Stats returns the counters of the context's program cache.
func (c *Context) CacheStats() CacheStats {
	if c == nil {
		return CacheStats{}
	}
	pc := &c.pc
	pc.mu.Lock()
	n, b := pc.lru.len, pc.bytes
	pc.mu.Unlock()
	return CacheStats{
		Builds: pc.builds.Load(), DiskHits: pc.diskHits.Load(), MemHits: pc.memHits.Load(),
		BuildErrors: pc.buildErrors.Load(), Retries: pc.retries.Load(), Evictions: pc.evictions.Load(),
		OOMFlushes: pc.oomFlushes.Load(), KernelMisses: pc.kernelMisses.Load(), Programs: n, Bytes: b,
		Remote: pc.fleet.Stats(),
	}
}

// PersistentCache returns the persistent cache beneath the context's
// program cache; it is disabled (Enabled false) when the configuration
// turns it off or its directory cannot be used.
func (c *Context) PersistentCache() *diskcache.Cache {
	if c == nil {
		return nil
	}
	return c.pc.disk
}

// sharedProgram is a driver program shared by the cache and the handles it
// gave out; it is released when the last of them lets go, or at Close.
type sharedProgram struct {
	drv      driver.Program
	refs     atomic.Int32
	released atomic.Bool
}

func (sp *sharedProgram) drop() error {
	if sp.refs.Add(-1) == 0 {
		return sp.release()
	}
	return nil
}

func (sp *sharedProgram) release() error {
	if sp.released.Swap(true) {
		return nil
	}
	return sp.drv.Release()
}

// programRef is one handle's reference to a shared program: a
// driver.Program whose Release drops the reference.
type programRef struct {
	sp   *sharedProgram
	once atomic.Bool
}

func (r *programRef) Binaries() ([][]byte, error)                  { return r.sp.drv.Binaries() }
func (r *programRef) KernelNames() ([]string, error)               { return r.sp.drv.KernelNames() }
func (r *programRef) NewKernel(name string) (driver.Kernel, error) { return r.sp.drv.NewKernel(name) }
func (r *programRef) Release() error {
	if r.once.Swap(true) {
		return nil
	}
	return r.sp.drop()
}

// handle returns a new BuiltProgram that holds a reference to sp.
func (c *Context) handle(sp *sharedProgram, name, options string) *BuiltProgram {
	sp.refs.Add(1)
	return &BuiltProgram{ctx: c, drv: &programRef{sp: sp}, name: name, options: options}
}

// progEntry is one program of the cache: the seed's BuildResult. done is
// closed when the build has finished; the fields after it are then fixed
// (but for the list links and kernels, guarded by progCache.mu).
type progEntry struct {
	key  string
	name string
	done chan struct{}

	sp    *sharedProgram // on success
	size  int64          // binary bytes
	err   error          // the stored build error, or the failure waiters retry after
	retry bool           // err is not a build error: waiters retry

	used       atomic.Bool // set by fast kernel cache hits since the last eviction pass
	prev, next *progEntry  // LRU links, guarded by progCache.mu
	inLRU      bool
	kernels    []*cachedKernel            // guarded by progCache.mu
	making     map[kernelID]*kernelMaking // kernels made or being made, guarded by progCache.mu
}

// progList is an intrusive doubly linked list of entries.
type progList struct {
	head, tail *progEntry
	len        int
}

func (l *progList) pushBack(e *progEntry) {
	e.prev, e.next, e.inLRU = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.len++
}

func (l *progList) remove(e *progEntry) {
	if !e.inLRU {
		return
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		l.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		l.tail = e.prev
	}
	e.prev, e.next, e.inLRU = nil, nil, false
	l.len--
}

// build is the one function through which every program is made: a
// program built from source goes through the cache, keyed by the hash of
// its source with its name as the image id; one loaded from binaries the
// caller gave is made directly.
func (c *Context) build(req buildRequest) (*BuiltProgram, error) {
	if req.binaries != nil {
		return c.buildDirect(req)
	}
	img := &programImage{ID: req.name, Name: req.name, Source: req.source, Options: req.options}
	return c.programFor(img)
}

// programFor returns img built for every device of the context under the
// context's specialization-constant values: from memory, else from the
// persistent cache, else built (and stored in both). The caller may
// Release the program it gets; the cache keeps its own reference. A
// compile error wraps ErrBuildFailed and carries the build log.
func (c *Context) programFor(img *programImage) (*BuiltProgram, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if img == nil {
		return nil, fmt.Errorf("build program: %w: nil image", ErrInvalidArgument)
	}
	if err := img.checkOptions(); err != nil {
		return nil, fmt.Errorf("build program %s: %w", img.Name, err)
	}
	k := c.pc.keyOf(img, c.pc.spec.Load())
	if !c.pc.cfg.InMemory {
		sp, _, err := c.pc.produce(k)
		if err != nil {
			return nil, err
		}
		p := c.handle(sp, k.name, k.opts)
		sp.drop() // the handle's reference is the only one
		return p, nil
	}
	e, err := c.pc.getOrBuild(k)
	if err != nil {
		return nil, err
	}
	p := c.handle(e.sp, k.name, k.opts)
	e.sp.drop() // getOrBuild's reference; the handle holds its own
	return p, nil
}

// progKey is everything that identifies a program of the context, and
// what building it needs.
type progKey struct {
	img   *programImage
	name  string
	hash  uint64
	specs []SpecValue
	enc   string // canonical encoding of specs
	opts  string // program, API and environment options, without the spec defines
	full  string // the map key
}

func (pc *progCache) keyOf(img *programImage, specs *specSet) progKey {
	k := progKey{img: img, name: img.Name, hash: img.SourceHash}
	if k.name == "" {
		k.name = img.ID
	}
	if k.hash == 0 {
		k.hash = xxhash.Sum64String(img.Source)
	}
	k.specs = specs.resolve(img.SpecConsts)
	k.enc = encodeSpecs(k.specs)
	k.opts = joinOptions(img.Options, pc.cfg.CompileOptions)
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(img.ID)))
	b = append(b, img.ID...)
	b = binary.LittleEndian.AppendUint64(b, k.hash)
	b = binary.AppendUvarint(b, uint64(len(k.enc)))
	b = append(b, k.enc...)
	b = append(b, k.opts...)
	k.full = string(b)
	return k
}

func joinOptions(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " ")
}

// buildOptions returns the options to build with: k's options and one -D
// per specialization constant.
func (k *progKey) buildOptions() string {
	var b strings.Builder
	b.WriteString(k.opts)
	for _, v := range k.specs {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("-D ")
		b.WriteString(v.Name)
		b.WriteByte('=')
		b.WriteString(v.Value)
	}
	return b.String()
}

// getOrBuild returns the done entry for k, building it if no goroutine
// has, with a reference to its program that the caller drops: one
// goroutine builds, outside the cache's lock, while the others wait on the
// entry. A build error is stored and every waiter gets it; a failure that
// is not a build error removes the entry, so that waiters retry (at most
// maxWaitRetries times).
func (pc *progCache) getOrBuild(k progKey) (*progEntry, error) {
	for attempt := 0; ; {
		pc.mu.Lock()
		if pc.closed {
			pc.mu.Unlock()
			return nil, fmt.Errorf("build program %q: %w", k.name, ErrClosed)
		}
		e, ok := pc.progs[k.full]
		if !ok {
			e = &progEntry{key: k.full, name: k.name, done: make(chan struct{})}
			pc.progs[k.full] = e
			pc.mu.Unlock()
			pc.fill(e, k)
			if e.err != nil {
				return nil, e.err
			}
			return e, nil
		}
		pc.memHits.Add(1)
		pc.ctx.traceCache(0, trace.Cache{Op: trace.MemoryHit, Program: k.name})
		select {
		case <-e.done:
		default:
			pc.mu.Unlock()
			pc.tracef("wait for %s", k.name)
			<-e.done
			pc.mu.Lock()
		}
		if e.err == nil {
			if !e.inLRU { // evicted meanwhile: look again
				pc.mu.Unlock()
				continue
			}
			e.sp.refs.Add(1)
			pc.lru.remove(e)
			pc.lru.pushBack(e)
			pc.mu.Unlock()
			return e, nil
		}
		pc.mu.Unlock()
		if !e.retry || attempt >= maxWaitRetries {
			return nil, e.err
		}
		attempt++
		pc.retries.Add(1)
		pc.tracef("retry %s after: %v", k.name, e.err)
	}
}

// fill builds the entry e, which this goroutine inserted, and publishes the
// outcome.
func (pc *progCache) fill(e *progEntry, k progKey) {
	sp, size, err := pc.produce(k)
	if err != nil && errors.Is(err, ErrOutOfMemory) {
		pc.oomFlushes.Add(1)
		pc.tracef("out of memory building %s: evict everything and retry", k.name)
		pc.evictAll(nil)
		sp, size, err = pc.produce(k)
	}
	pc.mu.Lock()
	var victims []*progEntry
	switch {
	case err == nil && pc.closed:
		sp.release()
		err = fmt.Errorf("build program %q: %w", k.name, ErrClosed)
		fallthrough
	case err != nil:
		e.err = err
		if errors.Is(err, ErrBuildFailed) {
			pc.buildErrors.Add(1)
		} else {
			e.retry = true
			delete(pc.progs, k.full)
		}
	default:
		e.sp, e.size = sp, size
		sp.refs.Add(1) // the caller's
		pc.all[sp]++
		pc.lru.pushBack(e)
		pc.bytes += size
		victims = pc.overThreshold(e)
	}
	pc.mu.Unlock()
	close(e.done)
	pc.releaseVictims(victims)
}

// overThreshold unlinks the least recently used entries until the total
// binary size is at most the threshold, never keep, and returns them.
// Entries that fast kernel cache hits used since the last pass count as
// more recent than those that no one used. Called with mu held.
func (pc *progCache) overThreshold(keep *progEntry) []*progEntry {
	t := pc.cfg.EvictionThreshold
	if t <= 0 || pc.bytes <= t {
		return nil
	}
	var used []*progEntry
	for e := pc.lru.head; e != nil; e = e.next {
		if e.used.Load() {
			used = append(used, e)
		}
	}
	for _, e := range used {
		e.used.Store(false)
		pc.lru.remove(e)
		pc.lru.pushBack(e)
	}
	var victims []*progEntry
	for e := pc.lru.head; e != nil && pc.bytes > t; {
		next := e.next
		if e != keep {
			pc.unlink(e)
			victims = append(victims, e)
		}
		e = next
	}
	return victims
}

// unlink removes a done entry from the maps, the list and the fast kernel
// cache. Called with mu held.
func (pc *progCache) unlink(e *progEntry) {
	pc.lru.remove(e)
	pc.bytes -= e.size
	if pc.progs[e.key] == e {
		delete(pc.progs, e.key)
	}
	pc.evictions.Add(1)
	pc.tracef("evict %s (%d bytes)", e.name, e.size)
	pc.ctx.traceCache(0, trace.Cache{Op: trace.Eviction, Program: e.name})
	if len(e.kernels) > 0 {
		pc.dropFast(e)
	}
}

// killKernels takes e's kernels out of the cache and releases each once no
// goroutine holds it, returning the release errors.
func (pc *progCache) killKernels(e *progEntry) []error {
	pc.mu.Lock()
	ks := e.kernels
	e.kernels, e.making = nil, nil
	pc.mu.Unlock()
	var errs []error
	for _, ck := range ks {
		if err := ck.kill(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// releaseVictims releases the kernels and programs of unlinked entries,
// outside mu: a kernel is released once no goroutine holds it.
func (pc *progCache) releaseVictims(victims []*progEntry) {
	for _, e := range victims {
		pc.killKernels(e)
		pc.mu.Lock()
		pc.all[e.sp]--
		if pc.all[e.sp] <= 0 {
			delete(pc.all, e.sp)
		}
		pc.mu.Unlock()
		e.sp.drop()
	}
}

// evictAll evicts every done program but keep (nil for none), as after an
// out-of-memory error.
func (pc *progCache) evictAll(keep *progEntry) {
	pc.mu.Lock()
	var victims []*progEntry
	for e := pc.lru.head; e != nil; {
		next := e.next
		if e != keep {
			pc.unlink(e)
			victims = append(victims, e)
		}
		e = next
	}
	pc.mu.Unlock()
	pc.releaseVictims(victims)
}

// produce makes the program of k: from the persistent cache if it holds a
// binary for every device, else by building it from source, storing the
// binaries. It returns the program with one reference and its binary size.
func (pc *progCache) produce(k progKey) (*sharedProgram, int64, error) {
	c := pc.ctx
	opts := k.buildOptions()
	build := func() (*BuiltProgram, error) {
		pc.builds.Add(1)
		pc.tracef("build %s", k.name)
		return c.buildDirect(buildRequest{name: k.name, source: k.img.Source, options: opts})
	}
	wrap := func(p *BuiltProgram, size int64) (*sharedProgram, int64, error) {
		sp := &sharedProgram{drv: p.drv}
		sp.refs.Store(1)
		return sp, size, nil
	}
	if !pc.disk.Enabled() {
		p, err := build()
		if err != nil {
			return nil, 0, err
		}
		var size int64
		if pc.cfg.EvictionThreshold > 0 {
			if bins, err := p.drv.Binaries(); err == nil {
				size = binSize(bins)
			}
		}
		return wrap(p, size)
	}
	keys := make([]diskcache.Key, len(pc.devKeys))
	for i, d := range pc.devKeys {
		keys[i] = diskcache.Key{Device: d, ImageID: k.img.ID, ImageHash: k.hash, SpecConsts: []byte(k.enc), Options: k.opts, ProgramName: k.name}
	}
	// Load: every device's binary must be there. With one device,
	// GetOrBuild makes a second process wait for the first one's build.
	var (
		bins  [][]byte
		built *BuiltProgram
	)
	if len(keys) == 1 {
		var berr error
		bin, outcome, err := pc.disk.GetOrBuild(context.Background(), keys[0], func() ([]byte, error) {
			built, berr = build()
			if berr != nil {
				return nil, berr
			}
			bs, err := built.drv.Binaries()
			if err != nil {
				return nil, fmt.Errorf("binaries of program %q: %w", k.name, err)
			}
			return bs[0], nil
		})
		switch {
		case berr != nil:
			return nil, 0, berr
		case err != nil && built != nil:
			pc.tracef("store %s: %v", k.name, err)
			return wrap(built, 0)
		case err != nil:
			return nil, 0, err
		case outcome == diskcache.Built:
			return wrap(built, int64(len(bin)))
		}
		bins = [][]byte{bin}
	} else {
		for _, key := range keys {
			bin, ok, err := pc.disk.Get(key)
			if err != nil {
				pc.tracef("load %s: %v", k.name, err)
			}
			if !ok {
				bins = nil
				break
			}
			bins = append(bins, bin)
		}
	}
	if bins != nil {
		t0 := c.traceNow()
		loaded := pc.markLoads(keys, bins)
		p, err := c.buildDirect(buildRequest{name: k.name, binaries: bins, options: opts})
		loaded()
		if err == nil {
			pc.diskHits.Add(1)
			if t0 != 0 {
				c.traceCache(0, trace.Cache{Op: trace.DiskHit, Program: k.name, Duration: c.tr.Now() - t0})
			}
			pc.tracef("load %s from disk", k.name)
			return wrap(p, binSize(bins))
		}
		if errors.Is(err, ErrOutOfMemory) {
			return nil, 0, err
		}
		pc.tracef("load %s from disk failed, building: %v", k.name, err)
	}
	p, err := build()
	if err != nil {
		return nil, 0, err
	}
	bs, err := p.drv.Binaries()
	if err != nil {
		pc.tracef("binaries of %s: %v", k.name, err)
		return wrap(p, 0)
	}
	for i, key := range keys {
		if err := pc.disk.Put(key, bs[i]); err != nil {
			pc.tracef("store %s: %v", k.name, err)
		}
	}
	return wrap(p, binSize(bs))
}

// markLoads marks the loads of bins into the driver in the persistent
// cache, so that a crash during one quarantines the binary (see
// diskcache.Cache.Loading), and returns the function that ends them.
func (pc *progCache) markLoads(keys []diskcache.Key, bins [][]byte) (done func()) {
	dones := make([]func(), len(keys))
	for i := range keys {
		dones[i] = pc.disk.Loading(keys[i], bins[i])
	}
	return func() {
		for _, d := range dones {
			d()
		}
	}
}

func binSize(bins [][]byte) int64 {
	var n int64
	for _, b := range bins {
		n += int64(len(b))
	}
	return n
}

// close releases every cached kernel and program; handles given out
// become unusable with the context.
func (pc *progCache) close() []error {
	pc.mu.Lock()
	if pc.closed || pc.progs == nil {
		pc.mu.Unlock()
		return nil
	}
	pc.closed = true
	var victims []*progEntry
	for e := pc.lru.head; e != nil; e = e.next {
		victims = append(victims, e)
	}
	pc.fast.Store(&fastTable{})
	sps := make([]*sharedProgram, 0, len(pc.all))
	for sp := range pc.all {
		sps = append(sps, sp)
	}
	pc.mu.Unlock()
	pc.closeRemote() // fleet.go
	var errs []error
	for _, e := range victims {
		for _, err := range pc.killKernels(e) {
			errs = append(errs, fmt.Errorf("close context: %w", err))
		}
	}
	for _, sp := range sps {
		if err := sp.release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: release program: %w", err))
		}
	}
	return errs
}
