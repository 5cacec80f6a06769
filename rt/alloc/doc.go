// Package alloc is the allocation policy of the dgen runtime: a tag-keyed
// free list of device buffers, after Futhark's GPU allocator, over an
// abstract [Device].
//
// The package holds no mechanism. The runtime package rt wraps a real OpenCL
// device in the [Device] interface (clCreateBuffer, forcing residency, and
// clReleaseMemObject); this package only decides when to call it.
//
// # Tagged allocations
//
// Every allocation site has a [Tag], a small integer id with a readable name
// that generated code registers with rt. Every driver block carries the tag of
// the site that allocated it, and the policy is exactly Futhark's (2018):
//
//   - Requested sizes below 4 bytes are rounded up to 4. Call the rounded
//     request min.
//   - A tag holds at most one free block. An allocation under a tag that
//     holds a free block of size size takes that block out of the free list and
//     reuses it only if min <= size <= 2*min, where min is the (rounded)
//     requested size and size is the held block's size. Otherwise the held
//     block is released to the driver and a fresh block of exactly min bytes
//     is allocated.
//   - Freeing an allocation puts its block back under its own tag; if the tag
//     already holds a free block, that older block is released first.
//
// # Beyond the seed
//
// Each addition can be switched off (see [Config] and [SeedPolicy]) so that it
// can be measured against the plain policy:
//
//   - A tag holds every block freed under it, not one (unless
//     Config.OneBlockPerTag): goroutines that allocate under one site at once
//     all reuse, where the seed's policy would release every block but the
//     last one freed and allocate again. A request takes a fitting block
//     (min <= size <= 2*min) whose uses were on its own queue if there is
//     one, else the most recently freed that fits; when none fits, the
//     least recently freed block is released, so a tag whose sizes drift
//     keeps no more blocks than it had.
//   - Allocations under [NoTag] are served from a size-class pool, PyOpenCL's
//     MemoryPool binning: a size falls into the bin named by its floor(log2)
//     and the next Config.BinBits mantissa bits, the driver is asked for the
//     largest size of that bin, and each bin holds any number of free blocks.
//   - When the driver reports out of memory (an error for which
//     Config.IsOutOfMemory reports true; by default one that wraps
//     [ErrDeviceOutOfMemory]), free blocks are released, largest first, until
//     at least the requested size has been released, and the allocation is
//     retried; when nothing is left to release the allocation fails with an
//     [*OutOfMemoryError].
//   - A request above Device.MaxAlloc fails at once with [ErrTooLarge],
//     without a driver call.
//   - Config.MaxHeld bounds the bytes held in free lists: beyond it the least
//     recently freed blocks are released.
//   - [Allocator.ReleaseAll] releases every held block; [Allocator.Close]
//     releases everything, blocks in use included.
//   - [Allocator.Stats] returns a snapshot of per-tag statistics.
//
// # Stream-ordered reuse
//
// dgen has many in-order queues, and OpenCL orders nothing between them: a
// block freed while a kernel on queue A still reads it, then reused at once
// by a kernel on queue B, would be overwritten under A's feet. Reuse is
// therefore stream-ordered, as CUDA's cudaFreeAsync and cudaMallocAsync
// are:
//
//   - [Allocation.FreeAfter] records the block's last uses: for each [Queue]
//     that used it, a point in that queue (a count the runtime keeps of
//     commands enqueued there) up to which its commands include every use.
//     [Allocation.Free] records none: the host used the block, and is done.
//   - [Allocator.AllocOn] names the queue q on which the allocation will be
//     used first. A held block whose uses are all on q is handed out as
//     before, with no Device call: q is in order, so whatever q runs next
//     runs after them. Uses on another queue for which [Device.Completed]
//     answers true (the runtime knows a point complete after a Finish or a
//     blocking transfer on that queue) need nothing either.
//   - Otherwise [Device.Order] makes q wait for the remaining uses on the
//     device, without blocking the host. The runtime's OpenCL device
//     enqueues a marker on each use's queue (it completes once everything
//     enqueued there so far has, the use included), flushes that queue (an
//     event of one queue is waited for by another only once its queue is
//     flushed), and enqueues on q a marker whose wait list is those markers:
//     q is in order, so the commands enqueued on it afterwards start after
//     that marker. A marker rather than an event per use: a use costs no
//     event (on NVIDIA an event costs as much as a launch), and the marker
//     is only paid for on a cross-queue reuse. It may wait for more than the
//     use (everything enqueued on the old queue until the reuse), never less.
//   - If Order fails, the block is released, not handed out, and AllocOn
//     returns the error.
//   - A block released to the driver (misfit, replaced, bound, Close) may
//     still be in use on a queue: OpenCL's clReleaseMemObject frees the
//     memory only once the commands that use it have completed (OpenCL 1.2,
//     section 5.4.1), so nothing is overwritten. When a driver allocation
//     fails for lack of memory, the blocks released to retry it are first
//     waited for on the host (Order with the nil queue), so that their
//     memory is really free when the allocation is retried.
//
// The allocation is ready on q. Used first on another queue, it must be
// ordered after q by the caller (an event of q in its wait list), as with
// cudaMallocAsync.
//
// # Best fit
//
// Config.BestFit selects the policy that Futhark's runtime uses since 2020
// (rts/c/free_list.h; Futhark issues 1006 and 1014, the waste cap after
// 1715): one free list across tags, in which every freed block is held. A
// request takes the smallest held block that is at least its size and
// either has its tag, is under 4096 bytes, or would be less than half empty;
// among blocks of one size, one that needs no ordering on the request's
// queue. Held blocks are released only on out of memory, by Config.MaxHeld,
// ReleaseAll and Close. Stream-ordered reuse applies unchanged.
//
// # Handles
//
// [Allocator.Alloc] returns an [Allocation], a small value that names its
// block together with a generation. Freeing an allocation advances the
// block's generation, so a stale copy of the handle — freed already, or
// whose block has since been handed to another allocation, perhaps under
// another tag — can neither free the block nor read it: its methods return
// an error that wraps [ErrFreed].
//
// # Concurrency
//
// An [Allocator] is safe for concurrent use by multiple goroutines. One mutex
// guards the free lists and statistics; it is not held during calls to the
// Device or to the [Hook], so a slow driver allocation does not stall reuse
// from other goroutines. Handle checks ([Allocation.Block]) take no lock.
package alloc
