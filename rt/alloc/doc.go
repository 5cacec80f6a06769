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
