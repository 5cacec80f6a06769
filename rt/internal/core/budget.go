package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgen-go/dgen/rt/stats"
)

// The device-memory budget (Config.MemoryLimit), as GOMEMLIMIT is the
// heap's: each device's account of the bytes that the context holds there,
// and the waits of the allocations past it.
//
// What counts is every driver allocation that rt makes on the device and
// has not released: the blocks of the allocators, held in free lists or
// in use (allocator.go's devAlloc, images' imageDevice), and the memory
// from the driver (newMem: NewBuffer and the storage of device globals;
// NewImage), which counts on the context's first device, as its messages
// name it. Views and an image over a buffer lie in memory counted already;
// pinned memory is the host's. An allocation charges its bytes before the
// driver call and is refunded when the call fails or the memory is
// released, so that the account never exceeds the limit, whatever runs at
// once.
//
// Past the limit the charge fails with a *limitError, which wraps
// ErrMemoryLimit and ErrOutOfMemory: the allocator takes it for out of
// memory, and releases blocks it holds and retries (rt/alloc's retry);
// then waitForMemory returns the blocks that the device's other
// allocators hold, and waits for a free, bounded by the ctx of the
// Context forms. Every free wakes the waiters: a refund, and a Free to an
// allocator's free list (whose block a waiter may reuse).

// memBudget is one device's account of the bytes the context holds there.
type memBudget struct {
	limit int64 // Config.MemoryLimit; 0 for none. Set by OpenConfig, never changed after.
	// waiters counts the allocations that wait for a free: wake does
	// nothing while it is 0, so that a free costs one atomic load then.
	waiters atomic.Int32

	mu       sync.Mutex // protects the fields below; never held across a driver call
	used     int64
	peak     int64
	freed    chan struct{} // closed, and replaced, by wake; nil until a waiter watches
	waits    uint64
	waitTime time.Duration
	failures uint64
}

// limitError is the error of an allocation past its device's memory
// limit: it wraps ErrMemoryLimit and ErrOutOfMemory.
type limitError struct {
	dev               string
	size, used, limit int64
	never             bool // size alone is above the limit: no wait can help
}

func (e *limitError) Error() string {
	if e.never {
		return fmt.Sprintf("%d bytes on %q: %v: the limit is %d bytes (Config.MemoryLimit, DGEN_MEMORY_LIMIT)", e.size, e.dev, ErrMemoryLimit, e.limit)
	}
	return fmt.Sprintf("%d bytes on %q: %v: %d of %d bytes in use (Config.MemoryLimit, DGEN_MEMORY_LIMIT)", e.size, e.dev, ErrMemoryLimit, e.used, e.limit)
}

// Is makes a limitError match ErrMemoryLimit and ErrOutOfMemory.
func (e *limitError) Is(target error) bool {
	return target == ErrMemoryLimit || target == ErrOutOfMemory
}

// charge accounts size bytes about to be allocated on d; past the limit it
// fails with a *limitError, and nothing is accounted.
func (d *Device) charge(size int64) error {
	b := &d.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.limit > 0 && b.used+size > b.limit {
		return &limitError{dev: d.Name, size: size, used: b.used, limit: b.limit, never: size > b.limit}
	}
	b.used += size
	b.peak = max(b.peak, b.used)
	return nil
}

// refund gives back size bytes that charge accounted, when their
// allocation failed or the memory was released, and wakes the waiters.
func (d *Device) refund(size int64) {
	b := &d.budget
	b.mu.Lock()
	b.used -= size
	b.mu.Unlock()
	b.wake()
}

// wake wakes the allocations that wait for a free, if any.
func (b *memBudget) wake() {
	if b.waiters.Load() == 0 {
		return
	}
	b.mu.Lock()
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// watch returns the channel that the next wake closes.
func (b *memBudget) watch() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed == nil {
		b.freed = make(chan struct{})
	}
	return b.freed
}

// tooLarge returns the error of an allocation of size bytes on d that no
// wait can serve, counting it, or nil.
func (d *Device) tooLarge(size int64) error {
	b := &d.budget
	if b.limit <= 0 || size <= b.limit {
		return nil
	}
	b.mu.Lock()
	b.failures++
	b.mu.Unlock()
	return &limitError{dev: d.Name, size: size, limit: b.limit, never: true}
}

// waitForMemory is the slow path of an allocation on dev whose first try
// failed with err, an error wrapping ErrMemoryLimit: it returns the blocks
// that dev's allocators hold, then, while try fails the same way, waits
// for a free and tries again, returning the blocks held again when that
// try fails, until ctx is done. A nil ctx (the plain
// forms) does not wait. try enters and exits the context itself, so that
// a wait holds no call open for Close, which wakes the waiters.
func (c *Context) waitForMemory(ctx context.Context, dev *Device, err error, try func() error) error {
	b := &dev.budget
	b.waiters.Add(1)
	defer b.waiters.Add(-1)
	var began time.Time
	defer func() {
		if !began.IsZero() {
			b.mu.Lock()
			b.waitTime += time.Since(began)
			b.mu.Unlock()
		}
	}()
	var ch <-chan struct{}
	for released := false; ; {
		var le *limitError
		if err == nil || !errors.As(err, &le) {
			return err
		}
		switch {
		case le.never:
		case !released:
			released = true
			c.releaseHeldOn(dev)
			ch = b.watch() // before each try: a free after it ends the wait that follows
			err = try()
			continue
		case ctx == nil:
		default:
			if began.IsZero() {
				began = time.Now()
				b.mu.Lock()
				b.waits++
				b.mu.Unlock()
			}
			select {
			case <-ch:
				// The free may have gone to a free list whose block try
				// cannot reuse (another tag or size, an image's pool, or
				// NewBuffer, which asks the driver): if try fails again,
				// return the held blocks again before the next wait.
				released = false
				ch = b.watch()
				err = try()
				continue
			case <-ctx.Done():
				err = fmt.Errorf("%w; waited %v for a free: %w", err, time.Since(began).Round(time.Microsecond), ctx.Err())
			}
		}
		b.mu.Lock()
		b.failures++
		b.mu.Unlock()
		return err
	}
}

// releaseHeldOn gives the blocks held in the free lists of dev's
// allocators, of buffers and of images, back to the driver; their errors
// are the allocators' to report on the next release.
func (c *Context) releaseHeldOn(dev *Device) {
	if d := c.allocs.slots[dev.index].Load(); d != nil {
		_ = d.a.ReleaseAll()
	}
	c.images.mu.Lock()
	var pools []interface{ ReleaseAll() error }
	for k, a := range c.images.pools {
		if k.dev == dev.index {
			pools = append(pools, a)
		}
	}
	c.images.mu.Unlock()
	for _, a := range pools {
		_ = a.ReleaseAll()
	}
}

// wakeBudgets wakes every allocation that waits for a free on c's
// devices: Close and a device fault end their waits.
func (c *Context) wakeBudgets() {
	for _, d := range c.devices {
		d.budget.wake()
	}
}

// budgetStats returns the account of each of the context's devices.
func (c *Context) budgetStats() []stats.Budget {
	s := make([]stats.Budget, len(c.devices))
	for i, d := range c.devices {
		b := &d.budget
		b.mu.Lock()
		s[i] = stats.Budget{Device: d.Name, Index: i, Limit: b.limit, Used: b.used, Peak: b.peak,
			Waits: b.waits, WaitTime: b.waitTime, Failures: b.failures}
		b.mu.Unlock()
	}
	return s
}
