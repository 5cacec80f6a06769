package progcache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/dgen-go/dgen/rt/diskcache"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Errors of the cache. rt exports them as its own sentinels.
var (
	// ErrClosed reports the use of a closed cache, or of a kernel that was
	// evicted.
	ErrClosed = errors.New("closed")
	// ErrInvalidArgument reports a nil image or kernel key.
	// It is rt/driver's, which a backend's refusal of an argument wraps.
	ErrInvalidArgument = driver.ErrInvalidArgument
)

// Object is the value that the cache keeps for a kernel (Kernel.Object):
// rt's prototype of the kernel's instances, which the Builder makes and
// releases.
type Object any

// Builder makes what the cache holds, through the driver: rt implements
// it for a context. Its errors wrap driver.ErrBuildFailed for a compile
// error and driver.ErrOutOfMemory when the device is out of memory; the
// cache stores the former and flushes itself on the latter.
type Builder[K Object] interface {
	// Enter begins an operation of the cache on img (nil for none), which
	// Exit ends; the owner's Close waits for the operations inside. It
	// fails, and the operation with it, when the owner is closed or img
	// cannot be built as it stands (malformed options).
	Enter(img *Image) error
	// Exit ends an operation that Enter began.
	Exit()
	// Build compiles source with options for every device.
	Build(name, source, options string) (driver.Program, error)
	// Load creates a program from binaries, one per device.
	Load(name string, binaries [][]byte, options string) (driver.Program, error)
	// NewKernel creates the kernel called name of p, the program called
	// program.
	NewKernel(p driver.Program, program, name string) (K, error)
	// ReleaseKernel releases a kernel object that NewKernel made.
	ReleaseKernel(k K) error
}

// Hooks receive what the cache does, for tracing. Nil fields are off.
type Hooks struct {
	// Event receives memory hits, disk hits (with the load's duration) and
	// evictions.
	Event func(trace.Cache)
	// Now returns the clock that durations are measured on, or 0 when no
	// one would use them.
	Now func() int64
	// Log receives one line for every cache decision (DGEN_CACHE_TRACE).
	Log io.Writer
}

// Config configures a cache.
type Config struct {
	// InMemory keeps built programs so that a second request for one
	// returns the first. Kernels keep their program in any case.
	InMemory bool
	// EvictionThreshold is the total size in bytes of program binaries
	// above which the least recently used programs are evicted, with
	// their kernels; 0 means never.
	EvictionThreshold int64
	// CompileOptions are appended to the options of every program built
	// and are part of every key.
	CompileOptions string
	// Disk is the persistent cache beneath; nil or disabled means none.
	Disk *diskcache.Cache
	// Devices are the devices that programs are built for, in order, as
	// the persistent cache's keys name them.
	Devices []diskcache.Device
	// Hooks receive the cache's trace events.
	Hooks Hooks
	// Faulted, if set, returns the device fault of the cache's owner (rt:
	// the context's DeviceFault), or nil. A program built once it returns
	// an error is released, and the build fails with that error: nothing
	// built on a faulted device is written to the persistent cache or the
	// remote tier beneath it, whose binaries a faulted driver may have
	// left incomplete.
	Faulted func() error
}

// Stats counts what a cache did.
type Stats struct {
	Builds       int64 // programs compiled from source
	DiskHits     int64 // programs loaded from the local persistent cache (a remote hit is the remote tier's, not counted here)
	MemHits      int64 // programs found in memory, built (a request that waited for another's build counts once it succeeded), and first fast kernel hits after the spec values changed
	BuildErrors  int64 // builds that failed with ErrBuildFailed
	Retries      int64 // waiters that retried after a failure that was not a build error
	Evictions    int64 // programs evicted from memory
	OOMFlushes   int64 // flushes of the whole cache on ErrOutOfMemory
	KernelMisses int64 // fast kernel cache misses
	Programs     int   // programs in memory now
	Bytes        int64 // their binary sizes
}

// maxWaitRetries bounds how often a goroutine that waited on another's
// build retries after a failure that was not a build error.
const maxWaitRetries = 3

// Cache is a context's kernel/program cache. The zero value is not usable;
// Init sets it up. It is safe for concurrent use.
type Cache[K Object] struct {
	b     Builder[K]
	cfg   Config
	hooks Hooks

	logMu sync.Mutex

	mu     sync.Mutex             // guards the fields below and fast's writers
	progs  map[string]*entry[K]   // by full key
	lru    list[K]                // done entries, least recently used first
	bytes  int64                  // binary sizes of the entries in lru
	all    map[*sharedProgram]int // every live program, for close
	closed bool

	// overdue is set when an eviction pass left the cache above its
	// threshold because the entries it would have evicted were held
	// (entry.pins): the last holder to let go of an entry evicts then
	// (unpin). Written under mu.
	overdue atomic.Bool

	fast atomic.Pointer[fastTable[K]] // kernel.go

	specMu  sync.Mutex // guards specSets and writes of spec
	spec    atomic.Pointer[specSet]
	specGen atomic.Uint64 // counts changes of spec, for the memory hits of fast kernel hits (kernel.go)
	// epoch counts the events after which CurrentSince looks again:
	// changes of spec, kernels doomed, and the LRU's passes that clear
	// the used marks (kernel.go).
	epoch    atomic.Uint64
	specSets map[string]*specSet

	builds, diskHits, memHits, buildErrors, retries, evictions, oomFlushes, kernelMisses atomic.Int64
}

// Init sets up c to make programs and kernels with b as cfg says.
func (c *Cache[K]) Init(b Builder[K], cfg Config) {
	c.b = b
	c.cfg = cfg
	c.hooks = cfg.Hooks
	c.progs = make(map[string]*entry[K])
	c.all = make(map[*sharedProgram]int)
	c.specSets = make(map[string]*specSet)
	c.spec.Store(c.internSpecs(nil))
	c.fast.Store(&fastTable[K]{})
}

// Logf writes a line to the Log hook, if any, as the cache's own
// decisions are.
func (c *Cache[K]) Logf(format string, args ...any) {
	if c.hooks.Log == nil {
		return
	}
	c.logMu.Lock()
	defer c.logMu.Unlock()
	fmt.Fprintf(c.hooks.Log, "dgen cache: "+format+"\n", args...)
}

func (c *Cache[K]) event(ev trace.Cache) {
	if c.hooks.Event != nil {
		c.hooks.Event(ev)
	}
}

func (c *Cache[K]) now() int64 {
	if c.hooks.Now == nil {
		return 0
	}
	return c.hooks.Now()
}

// Stats returns the cache's counters.
func (c *Cache[K]) Stats() Stats {
	c.mu.Lock()
	n, b := c.lru.len, c.bytes
	c.mu.Unlock()
	return Stats{
		Builds: c.builds.Load(), DiskHits: c.diskHits.Load(), MemHits: c.memHits.Load(),
		BuildErrors: c.buildErrors.Load(), Retries: c.retries.Load(), Evictions: c.evictions.Load(),
		OOMFlushes: c.oomFlushes.Load(), KernelMisses: c.kernelMisses.Load(), Programs: n, Bytes: b,
	}
}

// sharedProgram is a driver program shared by the cache and the handles it
// gave out; it is released when the last of them lets go, or at Close.
type sharedProgram struct {
	drv      driver.Program
	refs     atomic.Int32
	released atomic.Bool
}

func newShared(p driver.Program) *sharedProgram {
	sp := &sharedProgram{drv: p}
	sp.refs.Store(1)
	return sp
}

func (sp *sharedProgram) drop() error {
	if sp.refs.Add(-1) == 0 {
		return sp.release()
	}
	return nil
}

// tryRef takes a reference to sp unless its last one is gone already.
func (sp *sharedProgram) tryRef() bool {
	for {
		n := sp.refs.Load()
		if n <= 0 {
			return false
		}
		if sp.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
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

// ref returns a new reference to sp.
func ref(sp *sharedProgram) driver.Program {
	sp.refs.Add(1)
	return &programRef{sp: sp}
}

// entry is one program of the cache. done is closed when the build has
// finished; the fields after it are then fixed (but for the list links
// and kernels, guarded by Cache.mu).
type entry[K Object] struct {
	key   string
	name  string
	specs []SpecValue // the specialization-constant values of the program
	done  chan struct{}

	sp    *sharedProgram // on success
	size  int64          // binary bytes
	err   error          // the stored build error, or the failure waiters retry after
	retry bool           // err is not a build error: waiters retry

	// For a build on a goroutine of its own (getOrBuildContext): cancel
	// cancels the build's context, and waiters counts the goroutines
	// waiting for it, guarded by Cache.mu.
	cancel  context.CancelFunc
	waiters int

	used       atomic.Bool // set by fast kernel cache hits since the last eviction pass
	prev, next *entry[K]   // LRU links, guarded by Cache.mu
	inLRU      bool
	kernels    []*Kernel[K]            // guarded by Cache.mu
	making     map[kernelID]*making[K] // kernels made or being made, guarded by Cache.mu

	// pins counts the goroutines that hold the entry, from finding it
	// until they have made what they came for (a kernel object, an
	// instance through Spawn): eviction passes over a held entry, so that
	// another goroutine's build cannot take a program from under a launch.
	// rt's core holds one entry at a time per goroutine, so the programs
	// held above the threshold are at most one per goroutine in the cache.
	// gone is set by the eviction that unlinks the entry, under Cache.mu,
	// before it looks at pins; a holder that takes a pin without the lock
	// (pinFast) looks at gone after it: one of the two sees the other.
	pins atomic.Int32
	gone atomic.Bool
}

// list is an intrusive doubly linked list of entries.
type list[K Object] struct {
	head, tail *entry[K]
	len        int
}

func (l *list[K]) pushBack(e *entry[K]) {
	e.prev, e.next, e.inLRU = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = e
	} else {
		l.head = e
	}
	l.tail = e
	l.len++
}

func (l *list[K]) remove(e *entry[K]) {
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

// Program returns img built for every device under the cache's
// specialization-constant values: from memory, else from the persistent
// cache, else built (and stored in both). It returns a reference to the
// program, which the caller releases, and the program's name; the cache
// keeps its own reference. A compile error wraps driver.ErrBuildFailed.
func (c *Cache[K]) Program(img *Image) (driver.Program, string, error) {
	return c.ProgramContext(context.Background(), img)
}

// ProgramContext is Program bounded by ctx. When ctx is done before the
// program is, it returns an error wrapping ctx.Err(); the build goes on
// for the other goroutines that wait for it (and into the cache), and
// stops waiting for the persistent cache's lock and its remote tier once
// no goroutine waits for it any more. The driver's compile itself cannot
// be stopped: it finishes in the background.
func (c *Cache[K]) ProgramContext(ctx context.Context, img *Image) (driver.Program, string, error) {
	return c.ProgramWithContext(ctx, img, nil)
}

// ProgramWithContext is ProgramContext under the cache's values with over
// in their place, as KernelWith is Kernel: the variant that a launch with
// those values of its own builds, which Program builds ahead of it.
func (c *Cache[K]) ProgramWithContext(ctx context.Context, img *Image, over []SpecValue) (driver.Program, string, error) {
	if err := c.b.Enter(img); err != nil {
		return nil, "", err
	}
	defer c.b.Exit()
	if img == nil {
		return nil, "", fmt.Errorf("build program: %w: nil image", ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("build program %q: %w", img.Name, err)
	}
	specs := c.spec.Load()
	if len(over) > 0 {
		specs = c.overlay(specs, over)
	}
	k := c.keyOf(img, specs)
	if err := k.checkSet(); err != nil {
		return nil, "", err
	}
	if !c.cfg.InMemory {
		sp, err := c.produceContext(ctx, k)
		if err != nil {
			return nil, "", err
		}
		p := ref(sp)
		sp.drop() // the handle's reference is the only one
		return p, k.name, nil
	}
	e, err := c.getOrBuildContext(ctx, k)
	if err != nil {
		return nil, "", err
	}
	p := ref(e.sp)
	e.sp.drop() // getOrBuildContext's reference; the handle holds its own
	c.unpin(e)
	return p, k.name, nil
}

// produceContext is produce for a cache that keeps nothing in memory,
// bounded by ctx: when ctx is done first, the program that the build
// makes after all is released.
func (c *Cache[K]) produceContext(ctx context.Context, k key) (*sharedProgram, error) {
	if ctx.Done() == nil {
		sp, _, err := c.produce(ctx, k)
		return sp, err
	}
	if err := c.b.Enter(k.img); err != nil { // the build's own, ended when it is
		return nil, err
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var (
		mu       sync.Mutex
		gone     bool // the caller returned: the build's program is no one's
		finished bool
		sp       *sharedProgram
		err      error
		done     = make(chan struct{})
	)
	go func() {
		defer c.b.Exit()
		p, _, perr := c.produce(bctx, k)
		mu.Lock()
		if gone {
			mu.Unlock()
			if perr == nil {
				p.drop()
			}
			return
		}
		sp, err, finished = p, perr, true
		mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		cancel()
		return sp, err
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	if finished {
		cancel()
		return sp, err
	}
	gone = true
	cancel()
	return nil, fmt.Errorf("build program %q: %w", k.name, ctx.Err())
}

// key is everything that identifies a program of the cache, and what
// building it needs.
type key struct {
	img   *Image
	name  string
	hash  uint64
	specs []SpecValue
	enc   string // canonical encoding of specs
	opts  string // program, API and environment options, without the spec defines
	full  string // the map key
}

func (c *Cache[K]) keyOf(img *Image, specs *specSet) key {
	k := key{img: img, name: img.Name, hash: img.SourceHash}
	if k.name == "" {
		k.name = img.ID
	}
	if k.hash == 0 {
		k.hash = xxhash.Sum64String(img.Source)
	}
	k.specs = specs.resolve(img.SpecConsts)
	k.enc = encodeSpecs(k.specs)
	k.opts = joinOptions(img.Options, c.cfg.CompileOptions)
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
func (k *key) buildOptions() string {
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

// getOrBuildContext returns the done entry for k, building it if no
// goroutine has, with a reference to its program that the caller drops and
// a pin (entry.pins) that the caller lets go of with unpin: one goroutine
// builds, outside the cache's lock, while the others wait on the entry. A
// build error is stored and every waiter gets it; a failure that is not a
// build error removes the entry, so that waiters retry (at most
// maxWaitRetries times). The pin is taken before the build or the wait
// begins, so that no eviction takes the entry between its build and the
// caller's use. Where ctx can be done, the build runs on a goroutine of its
// own, which every waiter (the one that started it among them) waits for: a
// waiter whose ctx is done returns, and the build goes on for the others;
// once none waits, its context is cancelled (awaitEntry).
func (c *Cache[K]) getOrBuildContext(ctx context.Context, k key) (*entry[K], error) {
	for attempt := 0; ; {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, fmt.Errorf("build program %q: %w", k.name, ErrClosed)
		}
		e, ok := c.progs[k.full]
		if !ok {
			e = &entry[K]{key: k.full, name: k.name, specs: k.specs, done: make(chan struct{})}
			c.progs[k.full] = e
		}
		// The caller's pin. Until the entry is done it is in no list that
		// eviction looks at, so the failures below let go of it with a
		// plain decrement.
		e.pins.Add(1)
		if !ok {
			if ctx.Done() == nil {
				c.mu.Unlock()
				c.fill(ctx, e, k)
				if e.err != nil {
					e.pins.Add(-1)
					return nil, e.err
				}
				return e, nil
			}
			if err := c.b.Enter(k.img); err != nil { // the build's own, ended when it is
				delete(c.progs, k.full)
				e.pins.Add(-1)
				c.mu.Unlock()
				return nil, err
			}
			bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			e.cancel = cancel
			go c.fillAsync(bctx, e, k)
		}
		if err := c.awaitEntry(ctx, e); err != nil {
			e.pins.Add(-1)
			c.mu.Unlock()
			return nil, fmt.Errorf("build program %q: %w", k.name, err)
		}
		if e.err == nil {
			if !e.inLRU { // held, so closed meanwhile: look again, and find it closed
				e.pins.Add(-1)
				c.mu.Unlock()
				continue
			}
			if ok {
				// A hit only now: the program is built and in memory. A
				// waiter whose build failed found nothing.
				c.memHits.Add(1)
				c.event(trace.Cache{Op: trace.MemoryHit, Program: k.name})
			}
			e.sp.refs.Add(1)
			c.lru.remove(e)
			c.lru.pushBack(e)
			c.mu.Unlock()
			return e, nil
		}
		e.pins.Add(-1)
		c.mu.Unlock()
		if !ok || !e.retry || attempt >= maxWaitRetries {
			return nil, e.err
		}
		attempt++
		c.retries.Add(1)
		c.Logf("retry %s after: %v", k.name, e.err)
	}
}

// awaitEntry waits until e is done or ctx is, with c.mu held (and let go
// while it waits), and returns ctx's error if ctx was done first. The last
// waiter to give up on an entry that a goroutine of its own builds cancels
// the build's context.
func (c *Cache[K]) awaitEntry(ctx context.Context, e *entry[K]) error {
	select {
	case <-e.done:
		return nil
	default:
	}
	e.waiters++
	c.mu.Unlock()
	c.Logf("wait for %s", e.name)
	var err error
	select {
	case <-e.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.mu.Lock()
	e.waiters--
	if err != nil {
		select {
		case <-e.done:
			return nil // done meanwhile: take it
		default:
		}
		if e.waiters == 0 && e.cancel != nil {
			c.Logf("stop waiting for %s: no one waits for it", e.name)
			e.cancel()
		}
	}
	return err
}

// fillAsync is fill on a goroutine of its own, which holds the caller's
// reference to the program until the entry is done: every waiter takes
// its own.
func (c *Cache[K]) fillAsync(ctx context.Context, e *entry[K], k key) {
	defer c.b.Exit()
	c.fill(ctx, e, k)
	e.cancel()
	if e.err == nil {
		e.sp.drop()
	}
}

// fill builds the entry e, which this goroutine inserted, and publishes the
// outcome. ctx bounds the waits for the persistent cache.
func (c *Cache[K]) fill(ctx context.Context, e *entry[K], k key) {
	sp, size, err := c.produce(ctx, k)
	if err != nil && errors.Is(err, driver.ErrOutOfMemory) {
		c.oomFlushes.Add(1)
		c.Logf("out of memory building %s: evict everything and retry", k.name)
		c.evictAll(nil)
		sp, size, err = c.produce(ctx, k)
	}
	c.mu.Lock()
	var victims []*entry[K]
	switch {
	case err == nil && c.closed:
		sp.release()
		err = fmt.Errorf("build program %q: %w", k.name, ErrClosed)
		fallthrough
	case err != nil:
		e.err = err
		if errors.Is(err, driver.ErrBuildFailed) {
			c.buildErrors.Add(1)
		} else {
			e.retry = true
			delete(c.progs, k.full)
		}
	default:
		e.sp, e.size = sp, size
		sp.refs.Add(1) // the caller's
		c.all[sp]++
		c.lru.pushBack(e)
		c.bytes += size
		victims = c.overThreshold(e)
	}
	c.mu.Unlock()
	close(e.done)
	c.releaseVictims(victims)
}

// overThreshold unlinks the least recently used entries until the total
// binary size is at most the threshold, never keep nor a held entry, and
// returns them. Entries that fast kernel cache hits used since the last
// pass count as more recent than those that no one used. When held entries
// keep the cache above the threshold, it marks the cache overdue: the last
// holder's unpin passes again. Called with mu held.
func (c *Cache[K]) overThreshold(keep *entry[K]) []*entry[K] {
	t := c.cfg.EvictionThreshold
	if t <= 0 || c.bytes <= t {
		c.overdue.Store(false)
		return nil
	}
	var used []*entry[K]
	for e := c.lru.head; e != nil; e = e.next {
		if e.used.Load() {
			used = append(used, e)
		}
	}
	for _, e := range used {
		e.used.Store(false)
		c.lru.remove(e)
		c.lru.pushBack(e)
	}
	c.epoch.Add(1) // a hit marks its entry used again
	var (
		victims []*entry[K]
		held    bool
	)
	// Overdue until the pass ends, so that a holder that lets go after
	// evictable saw its pin finds the cache overdue (unpin) and passes
	// again, once this pass lets go of mu.
	c.overdue.Store(true)
	for e := c.lru.head; e != nil && c.bytes > t; {
		next := e.next
		switch {
		case e == keep:
		case !c.evictable(e):
			held = true
		default:
			c.unlink(e)
			victims = append(victims, e)
		}
		e = next
	}
	c.overdue.Store(held && c.bytes > t)
	return victims
}

// evictable reports whether no goroutine holds e, marking it gone if so:
// then no pin can be taken any more (pinFast), and the caller unlinks it.
// Called with mu held.
func (c *Cache[K]) evictable(e *entry[K]) bool {
	e.gone.Store(true)
	if e.pins.Load() > 0 {
		e.gone.Store(false)
		return false
	}
	return true
}

// pinFast takes a pin on the entry of ck, a kernel that the fast kernel
// cache returned, without the lock, and reports whether it got one: not if
// the entry is gone or going, or ck was doomed (evicted or closed). A false
// is no error: the caller takes the slow path, which pins under the lock.
func (c *Cache[K]) pinFast(ck *Kernel[K]) bool {
	e := ck.entry
	e.pins.Add(1)
	if e.gone.Load() || ck.doomed.Load() {
		c.unpin(e)
		return false
	}
	return true
}

// unpin lets go of a pin that getOrBuildContext or pinFast took on e, a
// done entry. The last holder of an entry while the cache is overdue
// passes over the LRU again: e counts as used now, so the programs of
// others go first.
func (c *Cache[K]) unpin(e *entry[K]) {
	if e.pins.Add(-1) > 0 || !c.overdue.Load() {
		return
	}
	c.mu.Lock()
	if c.closed || !c.overdue.Load() {
		c.mu.Unlock()
		return
	}
	keep := c.lru.tail
	if e.inLRU {
		c.lru.remove(e)
		c.lru.pushBack(e)
		keep = e
	}
	victims := c.overThreshold(keep)
	c.mu.Unlock()
	c.releaseVictims(victims)
}

// unlink removes a done entry from the maps, the list and the fast kernel
// cache. Called with mu held.
func (c *Cache[K]) unlink(e *entry[K]) {
	c.lru.remove(e)
	c.bytes -= e.size
	if c.progs[e.key] == e {
		delete(c.progs, e.key)
	}
	c.evictions.Add(1)
	c.Logf("evict %s (%d bytes)", e.name, e.size)
	c.event(trace.Cache{Op: trace.Eviction, Program: e.name})
	if len(e.kernels) > 0 {
		c.dropFast(e)
	}
}

// killKernels takes e's kernels out of the cache and releases them (kill),
// returning the release errors.
func (c *Cache[K]) killKernels(e *entry[K]) []error {
	c.mu.Lock()
	ks := e.kernels
	e.kernels, e.making = nil, nil
	c.mu.Unlock()
	var errs []error
	for _, ck := range ks {
		if err := ck.kill(); err != nil {
			errs = append(errs, err)
		}
	}
	c.epoch.Add(1) // after the kills: CurrentSince sees them
	return errs
}

// releaseVictims releases the kernels and programs of unlinked entries,
// outside mu.
func (c *Cache[K]) releaseVictims(victims []*entry[K]) {
	for _, e := range victims {
		c.killKernels(e)
		c.mu.Lock()
		c.all[e.sp]--
		if c.all[e.sp] <= 0 {
			delete(c.all, e.sp)
		}
		c.mu.Unlock()
		e.sp.drop()
	}
}

// evictAll evicts every done program but keep (nil for none) and those
// that goroutines hold (whose memory their references keep in any case),
// as after an out-of-memory error.
func (c *Cache[K]) evictAll(keep *entry[K]) {
	c.mu.Lock()
	var victims []*entry[K]
	for e := c.lru.head; e != nil; {
		next := e.next
		if e != keep && c.evictable(e) {
			c.unlink(e)
			victims = append(victims, e)
		}
		e = next
	}
	c.mu.Unlock()
	c.releaseVictims(victims)
}

// produce makes the program of k: from the persistent cache if it holds a
// binary for every device, else by building it from source, storing the
// binaries. It returns the program with one reference and its binary size.
// ctx bounds the wait for another process's build of k and the remote
// tier's I/O; a ctx done before the build begins is an error wrapping its
// error, which waiters retry after.
func (c *Cache[K]) produce(ctx context.Context, k key) (*sharedProgram, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("build program %q: %w", k.name, err)
	}
	if c.cfg.Disk == nil || !c.cfg.Disk.Enabled() || keepsArgInfo(k.opts) {
		return c.buildOnly(k)
	}
	keys := make([]diskcache.Key, len(c.cfg.Devices))
	for i, d := range c.cfg.Devices {
		keys[i] = diskcache.Key{Device: d, ImageID: k.img.ID, ImageHash: k.hash, SpecConsts: []byte(k.enc), Options: k.opts, ProgramName: k.name}
	}
	// Load: every device's binary must be there. With one device,
	// GetOrBuild makes a second process wait for the first one's build.
	var (
		bins    [][]byte
		fetched bool // from the remote tier, which counts the hit
	)
	if len(keys) == 1 {
		bin, sp, size, f, err := c.getOrBuild1(ctx, k, keys[0])
		if sp != nil || err != nil {
			return sp, size, err
		}
		bins, fetched = [][]byte{bin}, f
	} else {
		bins, fetched = c.getAll(k, keys)
	}
	if bins != nil {
		if sp, size, done, err := c.load(k, keys, bins, fetched); done {
			return sp, size, err
		}
	}
	return c.buildAndStore(k, keys)
}

// build builds k's program from source.
func (c *Cache[K]) build(k key) (driver.Program, error) {
	c.builds.Add(1)
	c.Logf("build %s", k.name)
	return c.b.Build(k.name, k.img.Source, k.buildOptions())
}

// unfaulted returns p, k's program just built, unless the owner's device
// faulted (Config.Faulted): then it releases p and returns the fault.
func (c *Cache[K]) unfaulted(k key, p driver.Program) (driver.Program, error) {
	if c.cfg.Faulted == nil {
		return p, nil
	}
	if err := c.cfg.Faulted(); err != nil {
		p.Release()
		c.Logf("build %s: device fault: not stored", k.name)
		return nil, fmt.Errorf("build program %q: %w", k.name, err)
	}
	return p, nil
}

// buildOnly builds k's program with no persistent cache; its size counts
// only when the memory cache evicts by size.
func (c *Cache[K]) buildOnly(k key) (*sharedProgram, int64, error) {
	p, err := c.build(k)
	if err != nil {
		return nil, 0, err
	}
	var size int64
	if c.cfg.EvictionThreshold > 0 {
		if bins, err := p.Binaries(); err == nil {
			size = binSize(bins)
		}
	}
	return newShared(p), size, nil
}

// getOrBuild1 asks the persistent cache for the one device's binary,
// building (once across processes) on a miss. It returns either the
// binary to load, with whether the remote tier gave it, or the program it
// built (or an error).
func (c *Cache[K]) getOrBuild1(ctx context.Context, k key, dk diskcache.Key) ([]byte, *sharedProgram, int64, bool, error) {
	var (
		built driver.Program
		berr  error
	)
	bin, outcome, err := c.cfg.Disk.GetOrBuild(ctx, dk, func() ([]byte, error) {
		built, berr = c.build(k)
		if berr == nil {
			built, berr = c.unfaulted(k, built)
		}
		if berr != nil {
			return nil, berr
		}
		bs, err := built.Binaries()
		if err == nil {
			err = checkBinaries(bs, 1)
		}
		if err != nil {
			return nil, fmt.Errorf("binaries of program %q: %w", k.name, err)
		}
		return bs[0], nil
	})
	switch {
	case berr != nil:
		return nil, nil, 0, false, berr
	case err != nil && built != nil:
		c.Logf("store %s: %v", k.name, err)
		return nil, newShared(built), 0, false, nil
	case err != nil:
		return nil, nil, 0, false, err
	case outcome == diskcache.Built:
		return nil, newShared(built), int64(len(bin)), false, nil
	}
	return bin, nil, 0, outcome == diskcache.Fetched, nil
}

// getAll returns every device's binary from the persistent cache, or nil
// if one is missing; fetched reports that one came from the remote tier.
func (c *Cache[K]) getAll(k key, keys []diskcache.Key) (bins [][]byte, fetched bool) {
	for _, key := range keys {
		bin, outcome, ok, err := c.cfg.Disk.Lookup(key)
		if err != nil {
			c.Logf("load %s: %v", k.name, err)
		}
		if !ok {
			return nil, false
		}
		fetched = fetched || outcome == diskcache.Fetched
		bins = append(bins, bin)
	}
	return bins, fetched
}

// load creates k's program from bins. done is false when the driver
// refused them for another reason than memory: then the caller builds. A
// load of binaries that the remote tier gave (fetched) is the remote's hit,
// which it counts, not a disk hit.
func (c *Cache[K]) load(k key, keys []diskcache.Key, bins [][]byte, fetched bool) (sp *sharedProgram, size int64, done bool, err error) {
	t0 := c.now()
	loaded := c.markLoads(keys, bins)
	p, err := c.b.Load(k.name, bins, k.buildOptions())
	loaded()
	if err == nil && fetched {
		c.Logf("load %s fetched from the remote tier", k.name)
		return newShared(p), binSize(bins), true, nil
	}
	if err == nil {
		c.diskHits.Add(1)
		if t0 != 0 {
			c.event(trace.Cache{Op: trace.DiskHit, Program: k.name, Duration: c.now() - t0})
		}
		c.Logf("load %s from disk", k.name)
		return newShared(p), binSize(bins), true, nil
	}
	if errors.Is(err, driver.ErrOutOfMemory) {
		return nil, 0, true, err
	}
	c.Logf("load %s from disk failed, building: %v", k.name, err)
	return nil, 0, false, nil
}

// buildAndStore builds k's program and stores its binaries.
func (c *Cache[K]) buildAndStore(k key, keys []diskcache.Key) (*sharedProgram, int64, error) {
	p, err := c.build(k)
	if err == nil {
		p, err = c.unfaulted(k, p)
	}
	if err != nil {
		return nil, 0, err
	}
	bs, err := p.Binaries()
	if err == nil {
		err = checkBinaries(bs, len(keys))
	}
	if err != nil {
		c.Logf("binaries of %s: %v", k.name, err)
		return newShared(p), 0, nil
	}
	for i, key := range keys {
		if err := c.cfg.Disk.Put(key, bs[i]); err != nil {
			c.Logf("store %s: %v", k.name, err)
		}
	}
	return newShared(p), binSize(bs), nil
}

// markLoads marks the loads of bins into the driver in the persistent
// cache, so that a crash during one quarantines the binary (see
// diskcache.Cache.Loading), and returns the function that ends them.
func (c *Cache[K]) markLoads(keys []diskcache.Key, bins [][]byte) (done func()) {
	dones := make([]func(), len(keys))
	for i := range keys {
		dones[i] = c.cfg.Disk.Loading(keys[i], bins[i])
	}
	return func() {
		for _, d := range dones {
			d()
		}
	}
}

// checkBinaries checks that a driver returned one binary per device: a
// driver that returns fewer is an error, not an index out of range.
func checkBinaries(bs [][]byte, devices int) error {
	if len(bs) != devices {
		return fmt.Errorf("%w: the driver returned %d binaries for %d devices", driver.ErrInvalidBinary, len(bs), devices)
	}
	return nil
}

// keepsArgInfo reports whether opts ask the program to keep its kernels'
// argument information (-cl-kernel-arg-info), which a program loaded from
// binaries lacks: such a program skips the persistent cache and is built
// from source.
func keepsArgInfo(opts string) bool {
	return strings.Contains(" "+opts+" ", " -cl-kernel-arg-info ")
}

func binSize(bins [][]byte) int64 {
	var n int64
	for _, b := range bins {
		n += int64(len(b))
	}
	return n
}

// Close releases every cached kernel and program; references given out
// become unusable. It returns the release errors.
func (c *Cache[K]) Close() []error {
	c.mu.Lock()
	if c.closed || c.progs == nil {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	var victims []*entry[K]
	for e := c.lru.head; e != nil; e = e.next {
		victims = append(victims, e)
	}
	c.fast.Store(&fastTable[K]{})
	sps := make([]*sharedProgram, 0, len(c.all))
	for sp := range c.all {
		sps = append(sps, sp)
	}
	c.mu.Unlock()
	var errs []error
	for _, e := range victims {
		errs = append(errs, c.killKernels(e)...)
	}
	for _, sp := range sps {
		if err := sp.release(); err != nil {
			errs = append(errs, fmt.Errorf("release program: %w", err))
		}
	}
	return errs
}
