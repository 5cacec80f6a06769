package alloc

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
)

// Block is an opaque driver buffer, such as rt's wrapper of a cl_mem. The
// allocator never looks inside a Block; it only hands it back to the Device
// that returned it and to the holder of a live [Allocation].
type Block any

// Device is what the allocator needs from a device: driver allocation and
// release of buffers. The runtime implements it over OpenCL; tests implement
// it with a fake.
//
// The allocator calls a Device from several goroutines at once (it holds no
// lock during Device calls), so implementations must be safe for concurrent
// use.
type Device interface {
	// Alloc returns a fresh driver buffer of exactly size bytes. Drivers
	// that report exhaustion lazily, at first use (NVIDIA's OpenCL does),
	// should force residency here so that failure is seen at once. An
	// out-of-memory failure should wrap ErrDeviceOutOfMemory, or be
	// recognised by Config.IsOutOfMemory.
	Alloc(size int64) (Block, error)
	// Release hands b back to the driver. The allocator releases every
	// Block it obtained exactly once.
	Release(b Block) error
	// MaxAlloc reports the largest size a single Alloc may request, or a
	// value <= 0 if there is no known limit. It is called once, by New.
	MaxAlloc() int64
	// Completed reports whether the use u is known to have completed. It
	// must be cheap (the allocator calls it on every reuse of a block used
	// on another queue) and may answer false when it cannot tell without
	// asking the driver.
	Completed(u Use) bool
	// Order makes every command enqueued on q from now on wait until the
	// uses have completed, without blocking the host: on OpenCL, a marker
	// on each use's queue and a barrier on q that waits for the markers.
	// The uses are on queues other than q and not known to have completed.
	// A nil q means the host: Order then blocks until the uses have
	// completed.
	Order(q Queue, uses []Use) error
}

// Queue is an in-order device queue as the allocator sees one: a value the
// runtime hands to AllocOn and FreeAfter, compared with == and otherwise
// passed back to the Device untouched. The nil Queue is the host.
type Queue any

// Use is a point in a queue at which a block was used: the commands
// enqueued on Queue up to Point (a count the runtime keeps per queue) include
// every use of the block there.
type Use struct {
	Queue Queue
	Point uint64
}

// Tag identifies an allocation site: a small integer id, assigned and named
// by the runtime's registry (generated code registers one per //dgen:alloc
// site and kernel output field). Tags should be dense: the allocator keeps
// per-tag state in a slice indexed by the id.
type Tag uint32

// NoTag is the zero Tag: an allocation without a site. Untagged allocations
// are served by the size-class pool, or straight from the driver when the
// pool is disabled.
const NoTag Tag = 0

// MaxTag is the largest Tag the allocator accepts.
const MaxTag Tag = 1<<20 - 1

// minSize is the smallest block the allocator requests: Futhark's
// sizeof(int).
const minSize = 4

var (
	// ErrFreed reports the use of an Allocation that has been freed (or
	// released by Close): a double free, or a use after free.
	ErrFreed = errors.New("allocation already freed")
	// ErrTooLarge reports a request above the device's maximum single
	// allocation. No driver call is made.
	ErrTooLarge = errors.New("size exceeds the device's maximum allocation")
	// ErrClosed reports an allocation from a closed Allocator.
	ErrClosed = errors.New("allocator closed")
	// ErrInvalidSize reports a negative size.
	ErrInvalidSize = errors.New("invalid size")
	// ErrInvalidTag reports a Tag above MaxTag.
	ErrInvalidTag = errors.New("invalid tag")
	// ErrDeviceOutOfMemory is the sentinel a Device wraps in the error it
	// returns when the driver is out of memory (CL_MEM_OBJECT_ALLOCATION_FAILURE,
	// CL_OUT_OF_RESOURCES). Config.IsOutOfMemory can recognise other errors.
	ErrDeviceOutOfMemory = errors.New("device out of memory")
)

// OutOfMemoryError is returned by Alloc when the driver is out of memory and
// releasing held blocks did not help (or the retry is disabled). It wraps the
// last driver error.
type OutOfMemoryError struct {
	Tag       Tag    // the allocation's tag
	Name      string // the tag's readable name
	Size      int64  // the requested size, rounded up to 4
	AllocSize int64  // the size asked of the driver (larger for untagged bins)
	Held      int64  // bytes held in free lists when the first driver call failed
	Released  int64  // bytes released to the driver while retrying
	InUse     int64  // bytes in live allocations when the allocation failed
	Err       error  // the last driver error
}

// Error implements error.
func (e *OutOfMemoryError) Error() string {
	return fmt.Sprintf("alloc: tag %s: allocate %d bytes: out of device memory (%d bytes in use, %d held, %d released retrying): %v",
		e.Name, e.AllocSize, e.InUse, e.Held, e.Released, e.Err)
}

// Unwrap returns the driver's error.
func (e *OutOfMemoryError) Unwrap() error { return e.Err }

// Config selects the policy. The zero Config is the full policy: the seed's
// tagged free list plus every addition. SeedPolicy returns the plain policy.
type Config struct {
	// DisableUntaggedPool makes untagged allocations go straight to the
	// driver and back on Free.
	DisableUntaggedPool bool
	// BinBits is the number of mantissa bits of the untagged pool's size
	// classes: with 2, the bins of each octave are 1, 1.25, 1.5 and 1.75
	// times a power of two. Zero selects 2; a negative value selects 0
	// (pure powers of two); at most 8.
	BinBits int
	// DisableOOMRetry makes an out-of-memory driver failure final at once,
	// without releasing held blocks.
	DisableOOMRetry bool
	// MaxHeld, when positive, bounds the bytes held in free lists (tagged
	// and untagged together): after a Free, the least recently freed blocks
	// are released until the bound holds.
	MaxHeld int64
	// IsOutOfMemory reports whether a Device.Alloc error means the device
	// is out of memory. Nil means errors.Is(err, ErrDeviceOutOfMemory).
	IsOutOfMemory func(error) bool
	// Hook, if not nil, is told of every driver allocation, reuse and
	// driver release.
	Hook Hook
	// TagName returns a tag's readable name, for statistics and errors.
	// Nil names NoTag "untagged" and other tags "tag<id>".
	TagName func(Tag) string
	// OneBlockPerTag keeps at most one free block per tag, as Futhark's
	// 2018 allocator does: freeing under a tag that holds a block releases
	// the older one. Without it a tag holds every block freed under it
	// (bounded by MaxHeld), so that goroutines that allocate under one tag
	// at once all reuse blocks rather than replace each other's.
	OneBlockPerTag bool
	// BestFit replaces the tagged free lists and the size-class pool by
	// one free list across tags, searched for the best fit: the policy
	// Futhark's runtime moved to in 2020 (rts/c/free_list.h). Every freed
	// block is held; a request takes the smallest held block that is at
	// least its size and either has its tag, is smaller than 4096 bytes,
	// or would be less than half empty. DisableUntaggedPool and BinBits
	// are ignored.
	BestFit bool
}

// SeedPolicy returns the Config of the plain policy of the seed (Futhark,
// 2018): the tagged free list only, untagged allocations straight from the
// driver, no retry on out of memory and no bound on bytes held.
func SeedPolicy() Config {
	return Config{DisableUntaggedPool: true, DisableOOMRetry: true, OneBlockPerTag: true}
}

// Reason says why a block was released to the driver.
type Reason uint8

// The reasons for a driver release.
const (
	ReasonMisfit      Reason = iota + 1 // the tag's free block was outside [min, 2*min]
	ReasonReplaced                      // a Free under a tag that already held a block
	ReasonBound                         // bytes held exceeded Config.MaxHeld
	ReasonOutOfMemory                   // released to retry a failed driver allocation
	ReasonReleaseAll                    // Allocator.ReleaseAll
	ReasonUnpooled                      // Free of an untagged allocation with the pool disabled
	ReasonClose                         // Allocator.Close, or a driver block obtained after Close
	ReasonUnordered                     // Device.Order failed for a block about to be reused
)

var reasonNames = [...]string{"", "misfit", "replaced", "bound", "out-of-memory", "release-all", "unpooled", "close", "unordered"}

// String returns the reason's name.
func (r Reason) String() string {
	if int(r) < len(reasonNames) && r != 0 {
		return reasonNames[r]
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// Event describes one allocator decision, for a Hook.
type Event struct {
	Tag       Tag    // the tag of the block
	Size      int64  // the requested size rounded up to 4; 0 for releases
	BlockSize int64  // the size of the driver block
	Reason    Reason // why a block was released; 0 otherwise
}

// Hook receives allocator events, for tracing. Its methods are called
// without the allocator's lock held, possibly from several goroutines at
// once, after the event has happened. A nil Hook costs one comparison per
// event.
type Hook interface {
	// DriverAlloc is called after a new driver block was obtained.
	DriverAlloc(e Event)
	// Reuse is called after a request was served from a free list.
	Reuse(e Event)
	// DriverRelease is called after a block was handed back to the driver.
	DriverRelease(e Event)
}

// TagStats are the statistics of one tag, or of all tags together.
// Byte counts are of driver blocks, which may be larger than requested.
type TagStats struct {
	Tag            Tag
	Name           string
	Requests       uint64 // calls of Alloc
	Reuses         uint64 // requests served from a free list
	DriverAllocs   uint64 // requests served by a new driver block
	DriverReleases uint64 // blocks handed back to the driver
	Failures       uint64 // requests that returned an error
	Held           int64  // bytes in free blocks now
	HeldBlocks     int    // free blocks now
	InUse          int64  // bytes in live allocations now
	Peak           int64  // the highest Held+InUse (device bytes owned) so far
	PeakInUse      int64  // the highest InUse so far
	// Ordered counts reuses of a block last used on another queue, not
	// known to have completed, for which Device.Order made the new queue
	// wait.
	Ordered uint64
}

// Add adds the counts of x to t; Peak and PeakInUse become the larger of
// the two (the peaks of two allocators are not known to coincide).
func (t *TagStats) Add(x TagStats) {
	t.Requests += x.Requests
	t.Reuses += x.Reuses
	t.DriverAllocs += x.DriverAllocs
	t.DriverReleases += x.DriverReleases
	t.Failures += x.Failures
	t.Held += x.Held
	t.HeldBlocks += x.HeldBlocks
	t.InUse += x.InUse
	t.Ordered += x.Ordered
	t.Peak = max(t.Peak, x.Peak)
	t.PeakInUse = max(t.PeakInUse, x.PeakInUse)
}

// Stats is a snapshot of an Allocator's statistics.
type Stats struct {
	// Total sums every tag; its Peak is the peak of the total.
	Total TagStats
	// Tags has one entry per tag that has been used, in ascending order,
	// NoTag (the untagged pool) first.
	Tags []TagStats
	// OOMRetries counts driver allocations retried after releasing held
	// blocks.
	OOMRetries uint64
}

// Tag returns the statistics of tag t, or the zero TagStats (with Tag t) if
// t has not been used.
func (s Stats) Tag(t Tag) TagStats {
	i := sort.Search(len(s.Tags), func(i int) bool { return s.Tags[i].Tag >= t })
	if i < len(s.Tags) && s.Tags[i].Tag == t {
		return s.Tags[i]
	}
	return TagStats{Tag: t}
}

// Block states.
const (
	stateInUse uint8 = iota + 1
	stateFree
	stateReleased
)

// record is the allocator's bookkeeping of one driver block.
type record struct {
	a     *Allocator
	blk   Block
	size  int64
	tag   Tag
	bin   int32         // size class of an untagged pooled block, else -1
	gen   atomic.Uint64 // advanced by every Free; a handle is live while it matches
	state uint8         // guarded by a.mu
	uses  []Use         // where the block was last used, set by FreeAfter; guarded by a.mu while free

	prev, next   *record // a.lru (state free, LRU order) or a.used (state in use)
	bprev, bnext *record // the bin's free stack (untagged pooled, state free)
}

// list is an intrusive doubly linked list of records through prev and next.
type list struct {
	head, tail *record
	n          int
}

func (l *list) pushBack(r *record) {
	r.next = nil
	r.prev = l.tail
	if l.tail != nil {
		l.tail.next = r
	} else {
		l.head = r
	}
	l.tail = r
	l.n++
}

func (l *list) remove(r *record) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		l.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		l.tail = r.prev
	}
	r.prev, r.next = nil, nil
	l.n--
}

// bin is a LIFO stack of free blocks of one size class, through bprev and
// bnext.
type bin struct{ head *record }

func (b *bin) push(r *record) {
	r.bprev = nil
	r.bnext = b.head
	if b.head != nil {
		b.head.bprev = r
	}
	b.head = r
}

func (b *bin) remove(r *record) {
	if r.bprev != nil {
		r.bprev.bnext = r.bnext
	} else {
		b.head = r.bnext
	}
	if r.bnext != nil {
		r.bnext.bprev = r.bprev
	}
	r.bprev, r.bnext = nil, nil
}

// counters are one tag's statistics and free blocks.
type counters struct {
	free                                                  bin // the tag's free blocks, most recently freed first (tagged, not BestFit)
	requests, reuses, allocs, releases, failures, ordered uint64
	held, inUse, peak, peakInUse                          int64
	heldBlocks                                            int
	used                                                  bool
}

// An Allocator serves device buffers to allocation sites by the policy
// described in the package documentation. Create one per context and device
// with New. It is safe for concurrent use.
type Allocator struct {
	dev      Device
	cfg      Config
	maxAlloc int64
	binBits  uint
	pooled   bool
	isOOM    func(error) bool
	hook     Hook

	mu         sync.Mutex
	closed     bool
	tags       []counters // indexed by Tag
	bins       []bin      // indexed by size class
	lru        list       // every free block, least recently freed first
	used       list       // every block in use
	held       int64
	inUse      int64
	peak       int64
	peakInUse  int64
	oomRetries uint64

	// barrier is the use that Barrier set, counted among the last uses of
	// every block freed while it is set; it is written under mu and read
	// without it by free, which clears it once Device.Completed says it
	// completed.
	barrier atomic.Pointer[Use]
}

// New returns an Allocator over dev with the policy cfg.
func New(dev Device, cfg Config) (*Allocator, error) {
	if dev == nil {
		return nil, errors.New("alloc: new allocator: nil Device")
	}
	if cfg.BinBits > 8 {
		return nil, fmt.Errorf("alloc: new allocator: BinBits %d above 8", cfg.BinBits)
	}
	if cfg.MaxHeld < 0 {
		return nil, fmt.Errorf("alloc: new allocator: negative MaxHeld %d", cfg.MaxHeld)
	}
	a := &Allocator{
		dev:      dev,
		cfg:      cfg,
		maxAlloc: dev.MaxAlloc(),
		pooled:   !cfg.DisableUntaggedPool,
		isOOM:    cfg.IsOutOfMemory,
		hook:     cfg.Hook,
		tags:     make([]counters, 64),
	}
	switch {
	case cfg.BinBits == 0:
		a.binBits = 2
	case cfg.BinBits > 0:
		a.binBits = uint(cfg.BinBits)
	}
	if a.isOOM == nil {
		a.isOOM = func(err error) bool { return errors.Is(err, ErrDeviceOutOfMemory) }
	}
	return a, nil
}

// Name returns the readable name of tag t, by Config.TagName.
func (a *Allocator) Name(t Tag) string {
	if a.cfg.TagName != nil {
		return a.cfg.TagName(t)
	}
	if t == NoTag {
		return "untagged"
	}
	return "tag" + strconv.FormatUint(uint64(t), 10)
}

// tagLocked returns tag t's counters, growing the table as needed.
func (a *Allocator) tagLocked(t Tag) *counters {
	if int(t) >= len(a.tags) {
		n := 2 * len(a.tags)
		for n <= int(t) {
			n *= 2
		}
		tags := make([]counters, n)
		copy(tags, a.tags)
		a.tags = tags
	}
	c := &a.tags[t]
	c.used = true
	return c
}

// holdLocked puts r, no longer in use, in the free lists.
func (a *Allocator) holdLocked(r *record, c *counters) {
	r.state = stateFree
	a.lru.pushBack(r)
	a.held += r.size
	c.held += r.size
	c.heldBlocks++
	switch {
	case r.bin >= 0:
		a.bins[r.bin].push(r)
	case !a.cfg.BestFit:
		c.free.push(r)
	}
}

// unholdLocked takes the free block r out of every free list.
func (a *Allocator) unholdLocked(r *record) *counters {
	c := &a.tags[r.tag]
	a.lru.remove(r)
	a.held -= r.size
	c.held -= r.size
	c.heldBlocks--
	switch {
	case r.bin >= 0:
		a.bins[r.bin].remove(r)
	case !a.cfg.BestFit:
		c.free.remove(r)
	}
	return c
}

// dropLocked takes the free block r out of the free lists to be released.
func (a *Allocator) dropLocked(r *record) {
	c := a.unholdLocked(r)
	r.state = stateReleased
	c.releases++
}

// useLocked hands out r as an allocation of size bytes under tag t, whose
// counters are c.
func (a *Allocator) useLocked(r *record, c *counters, t Tag, size int64) Allocation {
	r.state = stateInUse
	r.tag = t // another tag only under BestFit
	a.used.pushBack(r)
	a.inUse += r.size
	c.inUse += r.size
	c.peakInUse = max(c.peakInUse, c.inUse)
	a.peakInUse = max(a.peakInUse, a.inUse)
	// A block that BestFit takes from another tag adds to this tag's bytes
	// owned without a driver allocation.
	c.peak = max(c.peak, c.held+c.inUse)
	a.peak = max(a.peak, a.held+a.inUse)
	return Allocation{r: r, gen: r.gen.Load(), size: size, tag: t}
}

// release hands r back to the driver; r is already out of every list.
func (a *Allocator) release(r *record, why Reason) error {
	err := a.dev.Release(r.blk)
	if a.hook != nil {
		a.hook.DriverRelease(Event{Tag: r.tag, BlockSize: r.size, Reason: why})
	}
	if err != nil {
		return fmt.Errorf("alloc: tag %s: release block of %d bytes (%s): %w", a.Name(r.tag), r.size, why, err)
	}
	return nil
}

// Alloc is AllocOn with the nil Queue: an allocation first used by the host,
// or by a caller that orders its queues itself. A reused block whose last
// use on some queue is not known to have completed is waited for on the
// host.
func (a *Allocator) Alloc(t Tag, size int64) (Allocation, error) {
	return a.AllocOn(nil, t, size)
}

// AllocOn returns an allocation of at least size bytes under tag t (NoTag
// for an untagged allocation), to be used first on queue q. Sizes below 4
// are rounded up to 4.
//
// A tagged request is served from the tag's free block if that block's size
// lies in [size, 2*size]; otherwise the held block is released and a driver
// block of exactly size bytes is allocated. An untagged request is served
// from its size class. Under Config.BestFit, any request is served by the
// best-fitting held block. A request above the device's maximum allocation
// fails with an error wrapping ErrTooLarge, without a driver call; a driver
// out-of-memory failure that releasing held blocks does not cure returns an
// *OutOfMemoryError.
//
// A reused block whose last uses (given to FreeAfter) were on queues other
// than q and are not known to have completed is ordered by Device.Order:
// commands enqueued on q after AllocOn returns run after those uses. Reuse
// on the queue that last used the block calls no Device method.
func (a *Allocator) AllocOn(q Queue, t Tag, size int64) (Allocation, error) {
	if size < 0 {
		return Allocation{}, fmt.Errorf("alloc: tag %s: allocate %d bytes: %w", a.Name(t), size, ErrInvalidSize)
	}
	if t > MaxTag {
		return Allocation{}, fmt.Errorf("alloc: allocate %d bytes: tag %d: %w (above %d)", size, t, ErrInvalidTag, MaxTag)
	}
	if size < minSize {
		size = minSize
	}
	allocSize, binNr := size, int32(-1)
	pooled := t == NoTag && a.pooled && !a.cfg.BestFit
	if pooled {
		b := binNumber(size, a.binBits)
		binNr, allocSize = int32(b), binSize(b, a.binBits)
		if a.maxAlloc > 0 && allocSize > a.maxAlloc {
			allocSize = a.maxAlloc // every request of this class that passes the check below fits
		}
	}

	a.mu.Lock()
	c := a.tagLocked(t)
	c.requests++
	if a.maxAlloc > 0 && size > a.maxAlloc {
		c.failures++
		a.mu.Unlock()
		return Allocation{}, fmt.Errorf("alloc: tag %s: allocate %d bytes: %w (%d)", a.Name(t), size, ErrTooLarge, a.maxAlloc)
	}
	if a.closed {
		c.failures++
		a.mu.Unlock()
		return Allocation{}, fmt.Errorf("alloc: tag %s: allocate %d bytes: %w", a.Name(t), size, ErrClosed)
	}
	r, misfit := a.findLocked(q, c, t, size, binNr)
	if r != nil {
		c.reuses++
		h := a.useLocked(r, c, t, size)
		a.mu.Unlock()
		if len(r.uses) > 0 {
			if err := a.order(q, r); err != nil {
				return Allocation{}, err
			}
		}
		if a.hook != nil {
			a.hook.Reuse(Event{Tag: t, Size: size, BlockSize: r.size})
		}
		return h, nil
	}
	a.mu.Unlock()

	if misfit != nil {
		if err := a.release(misfit, ReasonMisfit); err != nil {
			a.fail(t)
			return Allocation{}, err
		}
	}
	return a.allocDriver(t, size, allocSize, binNr)
}

// findLocked takes the free block that serves a request of size bytes under
// tag t (with counters c; size class binNr for a pooled untagged request)
// out of the free lists and returns it, or nil. Under the seed's tagged
// policy the tag's block leaves the free list even when it does not fit:
// then it is returned as misfit, to be released.
func (a *Allocator) findLocked(q Queue, c *counters, t Tag, size int64, binNr int32) (r, misfit *record) {
	switch {
	case a.cfg.BestFit:
		r = a.bestFitLocked(q, t, size)
	case binNr >= 0:
		if int(binNr) >= len(a.bins) {
			bins := make([]bin, binNr+1)
			copy(bins, a.bins)
			a.bins = bins
		}
		r = a.bins[binNr].head
	default:
		if r, misfit = tagFind(&c.free, q, size); misfit != nil {
			// The seed's free_list_find: a block that does not fit leaves
			// the free list, to be released.
			a.unholdLocked(misfit)
			misfit.state = stateReleased
			c.releases++
			return nil, misfit
		}
	}
	if r != nil {
		a.unholdLocked(r)
	}
	return r, nil
}

// tagFind returns the block of a tag's free blocks that serves a request of
// size bytes on q: by the seed's rule, one whose size lies in [size,
// 2*size], preferring one whose uses were all on q (no ordering needed),
// then the most recently freed. When none fits, it returns the least
// recently freed block as misfit, to be released: a tag whose sizes drift
// keeps no more blocks than it had. Under OneBlockPerTag the list holds at
// most one block, and this is the seed's free_list_find.
func tagFind(free *bin, q Queue, size int64) (r, misfit *record) {
	var last *record
	for b := free.head; b != nil; b = b.bnext {
		last = b
		if b.size < size || b.size-size > size {
			continue
		}
		if usedOnlyOn(b.uses, q) {
			return b, nil
		}
		if r == nil {
			r = b
		}
	}
	if r == nil {
		return nil, last
	}
	return r, nil
}

// bestFitLocked returns the smallest held block that serves a request of
// size bytes under tag t by Futhark's rule (the same tag, under 4096 bytes,
// or less than half wasted), or nil. Among blocks of one size it prefers one
// that needs no ordering on q, then the most recently freed.
func (a *Allocator) bestFitLocked(q Queue, t Tag, size int64) *record {
	var best *record
	bestOrdered := false
	for r := a.lru.tail; r != nil; r = r.prev {
		if r.size < size || r.tag != t && r.size >= bestFitSmall && 2*(r.size-size) >= r.size {
			continue
		}
		ordered := !usedOnlyOn(r.uses, q)
		if best == nil || r.size < best.size || r.size == best.size && bestOrdered && !ordered {
			best, bestOrdered = r, ordered
		}
	}
	return best
}

// bestFitSmall is the size below which a held block serves any tag under
// Config.BestFit: Futhark's free_list.h.
const bestFitSmall = 4096

// usedOnlyOn reports whether every use is on q or on the host.
func usedOnlyOn(uses []Use, q Queue) bool {
	for _, u := range uses {
		if u.Queue != q && u.Queue != nil {
			return false
		}
	}
	return true
}

// order makes q wait for the last uses of r, just taken from the free
// lists and handed out, that are on other queues and not known to have
// completed. If the device cannot order them, the allocation is taken back
// and its block released.
func (a *Allocator) order(q Queue, r *record) error {
	var pending []Use
	for _, u := range r.uses {
		if u.Queue != q && u.Queue != nil && !a.dev.Completed(u) {
			pending = append(pending, u)
		}
	}
	r.uses = r.uses[:0]
	if len(pending) == 0 {
		return nil
	}
	err := a.dev.Order(q, pending)
	a.mu.Lock()
	c := &a.tags[r.tag]
	if err == nil {
		c.ordered++
		a.mu.Unlock()
		return nil
	}
	c.reuses--
	c.failures++
	a.retireLocked(r)
	a.mu.Unlock()
	return errors.Join(fmt.Errorf("alloc: tag %s: reuse block of %d bytes after %d uses on other queues: %w", a.Name(r.tag), r.size, len(pending), err),
		a.release(r, ReasonUnordered))
}

// retireLocked takes r, in use, out of use to be released; every handle of
// it becomes stale.
func (a *Allocator) retireLocked(r *record) {
	a.used.remove(r)
	r.gen.Add(1)
	r.state = stateReleased
	c := &a.tags[r.tag]
	c.inUse -= r.size
	c.releases++
	a.inUse -= r.size
}

// settle waits on the host until the last uses of victims, blocks taken
// out of the free lists to be released, have completed, so that releasing
// them frees device memory at once.
func (a *Allocator) settle(victims []*record) error {
	var pending []Use
	for _, v := range victims {
		for _, u := range v.uses {
			if u.Queue != nil && !a.dev.Completed(u) {
				pending = append(pending, u)
			}
		}
	}
	if len(pending) == 0 {
		return nil
	}
	if err := a.dev.Order(nil, pending); err != nil {
		return fmt.Errorf("alloc: wait for %d uses of blocks to release: %w", len(pending), err)
	}
	return nil
}

// fail counts a failed request of tag t.
func (a *Allocator) fail(t Tag) {
	a.mu.Lock()
	a.tags[t].failures++
	a.mu.Unlock()
}

// allocDriver serves a request from a new driver block, releasing held
// blocks and retrying on out of memory.
func (a *Allocator) allocDriver(t Tag, size, allocSize int64, binNr int32) (Allocation, error) {
	blk, err := a.dev.Alloc(allocSize)
	held, released := int64(-1), int64(0)
	if err != nil && !a.cfg.DisableOOMRetry && a.isOOM(err) {
		for {
			a.mu.Lock()
			if held < 0 {
				held = a.held
			}
			victims := a.largestLocked(allocSize)
			if len(victims) > 0 {
				a.oomRetries++
			}
			a.mu.Unlock()
			if len(victims) == 0 {
				break
			}
			if serr := a.settle(victims); serr != nil {
				// Their uses may still run: keep the blocks rather than
				// release memory that is in use, and fail.
				a.rehold(victims)
				a.fail(t)
				return Allocation{}, errors.Join(fmt.Errorf("alloc: tag %s: allocate %d bytes: %w", a.Name(t), allocSize, err), serr)
			}
			for i, v := range victims {
				released += v.size
				if rerr := a.release(v, ReasonOutOfMemory); rerr != nil {
					for _, w := range victims[i+1:] {
						_ = a.release(w, ReasonOutOfMemory) // already out of the lists; the first error is reported
					}
					a.fail(t)
					return Allocation{}, rerr
				}
			}
			blk, err = a.dev.Alloc(allocSize)
			if err == nil || !a.isOOM(err) {
				break
			}
		}
	}

	a.mu.Lock()
	c := &a.tags[t]
	if err != nil {
		c.failures++
		if held < 0 {
			held = a.held
		}
		inUse := a.inUse
		a.mu.Unlock()
		if a.isOOM(err) {
			return Allocation{}, &OutOfMemoryError{Tag: t, Name: a.Name(t), Size: size, AllocSize: allocSize,
				Held: held, Released: released, InUse: inUse, Err: err}
		}
		return Allocation{}, fmt.Errorf("alloc: tag %s: allocate %d bytes: driver: %w", a.Name(t), allocSize, err)
	}
	r := &record{a: a, blk: blk, size: allocSize, tag: t, bin: binNr}
	c.allocs++
	if a.closed {
		// Closed while the driver allocated: give the block straight back.
		c.releases++
		c.failures++
		r.state = stateReleased
		a.mu.Unlock()
		if a.hook != nil {
			a.hook.DriverAlloc(Event{Tag: t, Size: size, BlockSize: allocSize})
		}
		if rerr := a.release(r, ReasonClose); rerr != nil {
			return Allocation{}, rerr
		}
		return Allocation{}, fmt.Errorf("alloc: tag %s: allocate %d bytes: %w", a.Name(t), size, ErrClosed)
	}
	h := a.useLocked(r, c, t, size)
	a.mu.Unlock()
	if a.hook != nil {
		a.hook.DriverAlloc(Event{Tag: t, Size: size, BlockSize: allocSize})
	}
	return h, nil
}

// rehold puts victims, taken out of the free lists by largestLocked, back.
// After Close they are released instead.
func (a *Allocator) rehold(victims []*record) {
	a.mu.Lock()
	closed := a.closed
	for _, v := range victims {
		if !closed {
			c := &a.tags[v.tag]
			c.releases--
			a.holdLocked(v, c)
		}
	}
	a.mu.Unlock()
	if closed {
		for _, v := range victims {
			_ = a.release(v, ReasonClose) // Close reports nothing for blocks it did not hold
		}
	}
}

// largestLocked takes free blocks out of the free lists, largest first (the
// least recently freed first among equals), until at least need bytes are
// taken or none is left, and returns them.
func (a *Allocator) largestLocked(need int64) []*record {
	if a.lru.n == 0 {
		return nil
	}
	all := make([]*record, 0, a.lru.n)
	for r := a.lru.head; r != nil; r = r.next {
		all = append(all, r)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].size > all[j].size })
	var got int64
	n := 0
	for n < len(all) && got < need {
		got += all[n].size
		a.dropLocked(all[n])
		n++
	}
	return all[:n]
}

// free returns h's block to the free lists, last used at uses (and at
// the barrier, while one is set and not known complete).
func (a *Allocator) free(h Allocation, uses []Use) error {
	r := h.r
	// Asked outside mu, as every Device method is.
	done := a.barrier.Load()
	if done != nil && !a.dev.Completed(*done) {
		done = nil
	}
	a.mu.Lock()
	if r.gen.Load() != h.gen || r.state != stateInUse {
		a.mu.Unlock()
		return fmt.Errorf("alloc: tag %s: free block of %d bytes: %w", a.Name(h.tag), r.size, ErrFreed)
	}
	r.gen.Add(1)
	r.uses = append(r.uses[:0], uses...)
	if b := a.barrier.Load(); b == done && b != nil {
		a.barrier.Store(nil)
	} else if b != nil {
		r.uses = addUse(r.uses, *b)
	}
	a.used.remove(r)
	c := &a.tags[r.tag]
	a.inUse -= r.size
	c.inUse -= r.size

	var old, direct *record
	switch {
	case r.bin >= 0, a.cfg.BestFit:
		a.holdLocked(r, c)
	case r.tag != NoTag:
		if old = c.free.head; old != nil && a.cfg.OneBlockPerTag {
			a.dropLocked(old)
		} else {
			old = nil
		}
		a.holdLocked(r, c)
	default: // untagged with the pool disabled
		r.state = stateReleased
		c.releases++
		direct = r
	}
	over := a.cfg.MaxHeld > 0 && a.held > a.cfg.MaxHeld
	a.mu.Unlock()

	var err error
	if old != nil {
		err = a.release(old, ReasonReplaced)
	}
	if direct != nil {
		err = a.release(direct, ReasonUnpooled)
	}
	if over {
		err = errors.Join(err, a.trim())
	}
	return err
}

// Barrier makes u one of the last uses of every block, held or in use,
// until Device.Completed reports it complete: a reuse on a queue other
// than u's is ordered after it. A runtime that recorded no uses until now
// (one with a single queue, where every reuse is in order) calls it when
// it makes a second queue, with the point on the first queue that covers
// every use it did not record, rather than wait for that queue to finish.
// A later Barrier replaces an earlier one that has not completed only for
// the blocks freed after it; the blocks held keep both.
func (a *Allocator) Barrier(u Use) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.barrier.Store(&u)
	for r := a.lru.head; r != nil; r = r.next {
		r.uses = addUse(r.uses, u)
	}
}

// addUse adds u to uses: a use on a queue that uses has already moves
// that queue's point to the later of the two.
func addUse(uses []Use, u Use) []Use {
	for i := range uses {
		if uses[i].Queue == u.Queue {
			uses[i].Point = max(uses[i].Point, u.Point)
			return uses
		}
	}
	return append(uses, u)
}

// trim releases the least recently freed blocks until bytes held are within
// Config.MaxHeld.
func (a *Allocator) trim() error {
	var errs []error
	for {
		a.mu.Lock()
		if a.held <= a.cfg.MaxHeld || a.lru.head == nil {
			a.mu.Unlock()
			return errors.Join(errs...)
		}
		v := a.lru.head
		a.dropLocked(v)
		a.mu.Unlock()
		if err := a.release(v, ReasonBound); err != nil {
			errs = append(errs, err)
		}
	}
}

// ReleaseAll releases every block held in the free lists to the driver.
// Allocations in use are not affected. It returns the driver's release
// errors, joined.
func (a *Allocator) ReleaseAll() error {
	a.mu.Lock()
	victims := a.takeFreeLocked()
	a.mu.Unlock()
	var errs []error
	for _, v := range victims {
		if err := a.release(v, ReasonReleaseAll); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// takeFreeLocked takes every free block out of the free lists.
func (a *Allocator) takeFreeLocked() []*record {
	victims := make([]*record, 0, a.lru.n)
	for r := a.lru.head; r != nil; r = r.next {
		victims = append(victims, r)
	}
	for _, v := range victims {
		a.dropLocked(v)
	}
	return victims
}

// Close releases every block, held or in use, and makes later allocations
// fail with ErrClosed. Allocations in use become stale: their methods return
// errors wrapping ErrFreed. (OpenCL keeps a released buffer alive until the
// commands enqueued on it complete.) Close is idempotent.
func (a *Allocator) Close() error {
	a.mu.Lock()
	a.closed = true
	victims := a.takeFreeLocked()
	for r := a.used.head; r != nil; {
		next := r.next
		a.retireLocked(r)
		victims = append(victims, r)
		r = next
	}
	a.mu.Unlock()
	var errs []error
	for _, v := range victims {
		if err := a.release(v, ReasonClose); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Stats returns a snapshot of the allocator's statistics.
func (a *Allocator) Stats() Stats {
	a.mu.Lock()
	s := Stats{OOMRetries: a.oomRetries}
	for i := range a.tags {
		c := &a.tags[i]
		if !c.used {
			continue
		}
		ts := TagStats{
			Tag: Tag(i), Requests: c.requests, Reuses: c.reuses, DriverAllocs: c.allocs,
			DriverReleases: c.releases, Failures: c.failures, Held: c.held, HeldBlocks: c.heldBlocks,
			InUse: c.inUse, Peak: c.peak, PeakInUse: c.peakInUse, Ordered: c.ordered,
		}
		s.Tags = append(s.Tags, ts)
		t := &s.Total
		t.Requests += ts.Requests
		t.Reuses += ts.Reuses
		t.DriverAllocs += ts.DriverAllocs
		t.DriverReleases += ts.DriverReleases
		t.Failures += ts.Failures
		t.Held += ts.Held
		t.HeldBlocks += ts.HeldBlocks
		t.InUse += ts.InUse
		t.Ordered += ts.Ordered
	}
	s.Total.Peak = a.peak
	s.Total.PeakInUse = a.peakInUse
	a.mu.Unlock()
	s.Total.Name = "total"
	for i := range s.Tags {
		s.Tags[i].Name = a.Name(s.Tags[i].Tag)
	}
	return s
}

// Allocation is a handle to a block handed out by an Allocator. It is a
// small value, to be copied freely; all copies are one allocation. Once the
// allocation is freed, every copy is stale: Free and Block return errors
// wrapping ErrFreed, even after the block has been handed to another
// allocation. The zero Allocation is stale.
type Allocation struct {
	r    *record
	gen  uint64
	size int64
	tag  Tag
}

// Free is FreeAfter with no uses: the block is free to reuse on any queue
// at once.
func (h Allocation) Free() error { return h.FreeAfter(nil) }

// FreeAfter returns the allocation's block to its tag's free list (or its
// size class, or the driver, by the policy), recording uses: for each queue
// on which the block was used, the point up to which its commands include
// every use. A later AllocOn on another queue that reuses the block makes
// that queue wait for those points (see the package documentation). The
// allocator keeps a copy of uses. Freeing a stale allocation returns an
// error wrapping ErrFreed and changes nothing. FreeAfter may also return a
// driver error from releasing a block the policy gave up.
func (h Allocation) FreeAfter(uses []Use) error {
	if h.r == nil {
		return fmt.Errorf("alloc: free zero Allocation: %w", ErrFreed)
	}
	return h.r.a.free(h, uses)
}

// Block returns the driver block of a live allocation, or an error wrapping
// ErrFreed if the allocation is stale. It takes no lock.
func (h Allocation) Block() (Block, error) {
	if h.r == nil {
		return nil, fmt.Errorf("alloc: use of zero Allocation: %w", ErrFreed)
	}
	if h.r.gen.Load() != h.gen {
		return nil, fmt.Errorf("alloc: tag %s: use of block of %d bytes: %w", h.r.a.Name(h.tag), h.r.size, ErrFreed)
	}
	return h.r.blk, nil
}

// Live reports whether the allocation has not been freed.
func (h Allocation) Live() bool { return h.r != nil && h.r.gen.Load() == h.gen }

// Size returns the requested size, rounded up to 4.
func (h Allocation) Size() int64 { return h.size }

// Cap returns the size of the driver block, at least Size: up to twice Size
// for a reused tagged block, the size class's size for an untagged one.
func (h Allocation) Cap() int64 {
	if h.r == nil {
		return 0
	}
	return h.r.size
}

// Tag returns the tag the allocation was made under.
func (h Allocation) Tag() Tag { return h.tag }
