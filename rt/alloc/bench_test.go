package alloc

import (
	"sync/atomic"
	"testing"
)

// benchDevice is the cheapest possible Device: no lock, no map, no log. The
// hit benchmarks use it; the driver-path benchmarks use the fake device
// (a mutex and a map per call), the direct path of which
// BenchmarkDeviceDirect measures.
type benchDevice struct{ n atomic.Int64 }

func (d *benchDevice) Alloc(size int64) (Block, error) {
	d.n.Add(1)
	return &fakeBlock{size: size}, nil
}
func (d *benchDevice) Release(Block) error { d.n.Add(-1); return nil }
func (d *benchDevice) MaxAlloc() int64     { return 1 << 40 }
func (d *benchDevice) Completed(Use) bool  { return false }
func (d *benchDevice) Order(Queue, []Use) error {
	d.n.Add(0)
	return nil
}

func benchAllocFree(b *testing.B, dev Device, cfg Config, tag Tag, size int64) {
	a, err := New(dev, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		h, err := a.Alloc(tag, size)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Free(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTaggedHit is a reused tagged allocation: Alloc served from the
// tag's free block, then Free back to it.
func BenchmarkTaggedHit(b *testing.B) { benchAllocFree(b, &benchDevice{}, Config{}, 7, 1<<20) }

// BenchmarkUntaggedHit is a reused untagged allocation from the size-class
// pool.
func BenchmarkUntaggedHit(b *testing.B) { benchAllocFree(b, &benchDevice{}, Config{}, NoTag, 1<<20) }

// BenchmarkDriverPath is an untagged allocation with the pool disabled: every
// Alloc and Free goes to the fake device, through the allocator.
func BenchmarkDriverPath(b *testing.B) {
	d := newFake()
	d.nolog = true
	benchAllocFree(b, d, Config{DisableUntaggedPool: true}, NoTag, 1<<20)
}

// BenchmarkDeviceDirect calls the fake device directly, without the
// allocator.
func BenchmarkDeviceDirect(b *testing.B) {
	d := newFake()
	d.nolog = true
	b.ReportAllocs()
	for b.Loop() {
		blk, err := d.Alloc(1 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Release(blk); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTaggedMisfit alternates two sizes more than 2x apart under one
// tag: every Alloc releases the held block and allocates afresh.
func BenchmarkTaggedMisfit(b *testing.B) {
	a, _ := New(&benchDevice{}, Config{})
	b.ReportAllocs()
	size := int64(1 << 10)
	for b.Loop() {
		h, err := a.Alloc(7, size)
		if err != nil {
			b.Fatal(err)
		}
		_ = h.Free()
		size ^= 1<<10 | 1<<12
	}
}

// BenchmarkTaggedHitParallel is the hit path from GOMAXPROCS goroutines, each
// with its own tag, contending on the allocator's mutex.
func BenchmarkTaggedHitParallel(b *testing.B) {
	a, _ := New(&benchDevice{}, Config{})
	var next atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		tag := Tag(next.Add(1))
		for pb.Next() {
			h, err := a.Alloc(tag, 4096)
			if err != nil {
				b.Error(err)
				return
			}
			_ = h.Free()
		}
	})
}

// BenchmarkBlock is the stale check of a live handle.
func BenchmarkBlock(b *testing.B) {
	a, _ := New(&benchDevice{}, Config{})
	h, _ := a.Alloc(1, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Block(); err != nil {
			b.Fatal(err)
		}
	}
}
