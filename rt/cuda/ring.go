package cuda

/*
#cgo LDFLAGS: -lpthread
#cgo noescape dgen_ring_wake
#cgo nocallback dgen_ring_wake
#include "dgen_ring.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// A submitRing takes a queue's back-to-back launches off the goroutine's
// thread, so that rt's Go-side work for the next launch runs while the
// driver makes this one.
//
// A launch through cuLaunchKernel costs a goroutine 3.6–3.8 µs on an H200's
// host, most of it the driver's code, which leaves little of rt's own work
// in the core's caches for the next launch: measured with bench/scaling
// (2026-12-03), rt's launch loop ran at 0.85–0.94× a C loop's through one
// cgo call a launch at 1–4 goroutines, and the same loop writing launch
// records into a ring that a thread of its own launched ran at 1.03–1.07×
// it; rt's own loop through the ring, 0.97–1.07× it at 1–16 goroutines
// (2026-12-04, docs/BENCHMARKS.md). So a launch without a wait list or an
// event (a loop's: the queue's
// plain launches) that comes within ringGap of the queue's last one is
// written as a record into the queue's ring, in C memory and with no cgo
// call: the kernel's function, its launch shape, and its argument slots
// copied, so that the kernel may be set up for its next launch at once.
// The ring's thread (dgen_ring.c), started by the queue's first launches
// that come back to back, makes the driver calls in order on the queue's
// stream; it spins for 50 µs when the ring is empty, then sleeps until a
// producer wakes it. A launch that comes later than ringGap after the last
// one, on an empty ring, is made directly, so that a lone launch waits for
// no thread, as is one whose arguments do not fit a record, and one that
// finds the thread asleep on an empty ring (takes).
//
// The stream's order is kept: every other command on the queue waits
// first for the records written before it (drain), and so does a direct
// launch, a Flush and a Finish. What a record may use is destroyed only after the
// records written so far on every queue of the device have been launched
// (settle): a buffer's memory, an image's objects, a module and its
// functions. A launch that fails on the ring's thread fails the queue's
// next command (its error wraps the driver's, with its kind), which is not
// made.
type submitRing struct {
	mu    sync.Mutex    // serialises the producers; protects the fields below; held across no driver call or wait
	r     *C.dgen_ring  // nil until the queue's launches first come back to back
	off   bool          // the ring's thread did not start, or the queue is released: launch directly
	tail  uint32        // records written
	head  uint32        // the last head seen, at most the ring's
	last  time.Duration // when the last launch came, since processStart
	woken time.Duration // when a launch last woke the thread to take the next ones
}

// ringGap is the longest time between two of a queue's launches that
// sends the second through the ring: back to back, as a loop launches.
const ringGap = 20 * time.Microsecond

// ringSlots is a kernel's argument slots as a record carries them: the
// offset of each parameter's value in them, and their size; nil offsets
// where they do not fit a record.
type ringSlots struct {
	offs []C.ushort
	size uintptr
}

// newRingSlots returns the record layout of slots of size bytes at offs.
func newRingSlots(offs []uintptr, size uintptr) ringSlots {
	if len(offs) > C.DGEN_RING_PARAMS || size > C.DGEN_RING_BYTES {
		return ringSlots{}
	}
	s := ringSlots{offs: make([]C.ushort, len(offs)), size: size}
	for i, o := range offs {
		s.offs[i] = C.ushort(o)
	}
	return s
}

// launchPlain launches k on q with shape l: through q's ring when the
// launch comes back to back with the queue's last, or directly.
func (q *queue) launchPlain(k *kernel, l *launchShape) error {
	rg := &q.ring
	now := time.Since(processStart)
	rg.mu.Lock()
	soon := now-rg.last < ringGap
	rg.last = now
	if rg.r == nil && soon && !rg.off && k.ring.offs != nil {
		rg.open(q)
	}
	if r := rg.r; r != nil && k.ring.offs != nil && rg.takes(r, soon, now) {
		if !rg.room(r) {
			rg.mu.Unlock()
			return fmt.Errorf("cuLaunchKernel: kernel %s: the queue was released during the launch", k.name)
		}
		if err := ringErr(r); err != nil {
			rg.mu.Unlock()
			return err
		}
		rg.push(k.fns[q.dev], k, l)
		rg.mu.Unlock()
		if atomic.LoadUint32(word(&r.sleeping)) != 0 {
			C.dgen_ring_wake(r)
		}
		return nil
	}
	r, tail := rg.r, rg.tail
	rg.mu.Unlock()
	if err := settled(r, tail); err != nil {
		return err
	}
	if res := C.dgen_launch_plain(q.d.ctx, k.fns[q.dev], l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
		l.shared, q.s, k.paramArray()); res != 0 {
		return plainError(res)
	}
	return nil
}

// takes reports whether a launch at now (soon: back to back with the
// last) goes to ring r, rather than directly; rg.mu is held. It must where
// records are pending, for the stream's order. On an empty ring it does
// where the launch is soon and the thread is awake; where the thread
// sleeps, takes wakes it (at most every ringWake) and sends the launch
// directly, so that the thread's wake-up overlaps the producer's launches
// instead of delaying them. A back-to-back launch to an awake thread reads
// no word that the thread stores, which would take the thread's cache line
// from it at every launch.
func (rg *submitRing) takes(r *C.dgen_ring, soon bool, now time.Duration) bool {
	if soon && atomic.LoadUint32(word(&r.sleeping)) == 0 {
		return true
	}
	if rg.head = atomic.LoadUint32(word(&r.head)); rg.tail != rg.head {
		return true // pending: a sleeping thread has been woken for them
	}
	if soon && now-rg.woken > ringWake {
		rg.woken = now
		C.dgen_ring_wake(r)
	}
	return false
}

// ringWake is the least time between two wake-ups of a ring's sleeping
// thread for direct launches: longer than the thread takes to wake.
const ringWake = 200 * time.Microsecond

// word is a 32-bit word of a ring, for sync/atomic.
func word(w *C.uint32_t) *uint32 { return (*uint32)(unsafe.Pointer(w)) }

// room returns once ring r has room for a record, with rg.mu held as on
// entry; it waits for the thread to launch half the ring with rg.mu
// released, so that a producer waiting for the thread holds up no other
// caller of the queue's ring (a free's settle, another command's drain).
// It reports false where the queue's Release closed r meanwhile.
func (rg *submitRing) room(r *C.dgen_ring) bool {
	for rg.tail-rg.head >= C.DGEN_RING {
		if rg.head = atomic.LoadUint32(word(&r.head)); rg.tail-rg.head < C.DGEN_RING {
			break
		}
		want := rg.tail - C.DGEN_RING/2
		rg.mu.Unlock()
		C.dgen_ring_wait(r, C.uint32_t(want))
		rg.mu.Lock()
		if rg.r != r {
			return false
		}
	}
	return true
}

// push writes the launch of f, k's function on the queue's device, with
// shape l as the next record of the ring, which has room, and publishes
// it. rg.mu is held.
func (rg *submitRing) push(f C.CUfunction, k *kernel, l *launchShape) {
	r := rg.r
	rec := &r.recs[rg.tail%C.DGEN_RING]
	rec.f = f
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&rec.args[0])), k.ring.size), unsafe.Slice((*byte)(k.slots), k.ring.size))
	rec.grid, rec.block, rec.shared = l.grid, l.block, l.shared
	rec.n = C.ushort(copy(rec.off[:], k.ring.offs))
	rg.tail++
	atomic.StoreUint32(word(&r.tail), rg.tail)
}

// ringErr returns the error of a launch that failed on r's thread since
// the last call, and clears it.
func ringErr(r *C.dgen_ring) error {
	p := (*int32)(unsafe.Pointer(&r.err))
	if atomic.LoadInt32(p) == 0 {
		return nil
	}
	if code := atomic.SwapInt32(p, 0); code != 0 {
		return fmt.Errorf("an earlier launch on the queue: %w", plainError(C.CUresult(code)))
	}
	return nil
}

// written returns the ring and the records written to it so far, for a
// caller to wait for.
func (rg *submitRing) written() (*C.dgen_ring, uint32) {
	rg.mu.Lock()
	defer rg.mu.Unlock()
	return rg.r, rg.tail
}

// drain waits until the records written so far have been launched, and
// returns the error of a launch of the ring's that failed since the last
// call: what every other command of the queue does first. The queue's
// next launch is made directly, so that a launch that a synchronisation
// follows (Config.SyncLaunches, compute-sanitizer's runs) never takes the
// ring.
func (rg *submitRing) drain() error {
	rg.mu.Lock()
	r, tail := rg.r, rg.tail
	rg.last = -ringGap // the next launch is not back to back with the last
	rg.mu.Unlock()
	return settled(r, tail)
}

// settled waits until r's thread has launched the records before tail,
// and returns the error of a launch of r's that failed since the last
// call; it returns nil at once where r is nil.
func settled(r *C.dgen_ring, tail uint32) error {
	if r == nil {
		return nil
	}
	ringWait(r, tail)
	return ringErr(r)
}

// ringWait returns once r's thread has launched the records before tail.
func ringWait(r *C.dgen_ring, tail uint32) {
	if int32(atomic.LoadUint32(word(&r.head))-tail) < 0 {
		C.dgen_ring_wait(r, C.uint32_t(tail))
	}
}

// Rings are C memory that is never freed: a stopped ring waits in
// spareRings for the next queue, so that a call that still holds a
// released queue's ring (a command racing the queue's Release, a user's
// mistake) reads memory that exists.
var (
	sparesMu   sync.Mutex
	spareRings []*C.dgen_ring
)

// open starts a ring for q's stream, or sets rg.off where its thread does
// not start; rg.mu is held.
func (rg *submitRing) open(q *queue) {
	sparesMu.Lock()
	var r *C.dgen_ring
	if n := len(spareRings); n > 0 {
		r, spareRings = spareRings[n-1], spareRings[:n-1]
	} else if r = C.dgen_ring_new(); r == nil {
		rg.off = true
	}
	sparesMu.Unlock()
	if r == nil {
		return
	}
	if C.dgen_ring_start(r, q.d.ctx, q.s) != 0 {
		rg.off = true
		sparesMu.Lock()
		spareRings = append(spareRings, r)
		sparesMu.Unlock()
		return
	}
	rg.r, rg.tail, rg.head = r, 0, 0
}

// close stops the ring's thread once it has launched every record, and
// sends the queue's later launches directly.
func (rg *submitRing) close() {
	rg.mu.Lock()
	r := rg.r
	rg.r, rg.off = nil, true
	rg.mu.Unlock()
	if r == nil {
		return
	}
	C.dgen_ring_stop(r)
	sparesMu.Lock()
	spareRings = append(spareRings, r)
	sparesMu.Unlock()
}

// settleRings returns once the records written so far on the rings of d's
// queues have been launched: what a call that destroys something a record
// may use (memory, an image, a module) waits for.
func (d *device) settleRings() {
	qs := d.mem.queues.Hold()
	defer d.mem.queues.Unhold(qs)
	for _, q := range qs {
		q.settle()
	}
}

// settle returns once the records written so far on q's ring have been
// launched.
func (q *queue) settle() {
	if r, tail := q.ring.written(); r != nil {
		ringWait(r, tail)
	}
}
