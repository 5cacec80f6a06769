package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// openEnvs opens one context per mode, closed when the test ends.
func openEnvs(t *testing.T) []*Env {
	t.Helper()
	var envs []*Env
	for _, m := range Modes() {
		e, err := OpenEnv(m)
		if err != nil {
			testenv.SkipWithoutDevice(t, err)
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		envs = append(envs, e)
	}
	return envs
}

// TestPrograms runs every program on its first dataset at a test size, on
// fresh random inputs, in every mode, twice (the second run meets the free
// lists the first left), and verifies each result against the Go
// reference. Under an allocator policy the second run must ask the driver
// for less memory than DriverMode does.
func TestPrograms(t *testing.T) {
	envs := openEnvs(t)
	for _, p := range Programs {
		t.Run(p.Name, func(t *testing.T) {
			seed := rand.Uint64()
			s := p.Test
			var driverAllocs uint64
			for _, e := range envs {
				c, err := p.New(e, s, seed)
				if err != nil {
					t.Fatalf("%s: %v", e.Mode, err)
				}
				var allocs uint64
				for run := range 2 {
					before := e.Ctx.Stats().Alloc.DriverAllocs
					if err := c.Run(); err != nil {
						t.Fatalf("%s: run %d: %v", e.Mode, run, err)
					}
					allocs = e.Ctx.Stats().Alloc.DriverAllocs - before
					if err := c.Verify(); err != nil {
						t.Errorf("%s: run %d, size %+v, seed %d: %v", e.Mode, run, s, seed, err)
					}
				}
				if err := c.Close(); err != nil {
					t.Errorf("%s: close: %v", e.Mode, err)
				}
				if e.Driver {
					driverAllocs = allocs
				} else if allocs >= max(driverAllocs, 1) && driverAllocs > 0 {
					t.Errorf("%s: %d driver allocations in the second run, driver mode %d", e.Mode, allocs, driverAllocs)
				}
				t.Logf("%s: %d driver allocations in the second run", e.Mode, allocs)
			}
		})
	}
}

// corrupt inverts four bytes in the middle of a case's last result on the
// device and returns their offset.
func corrupt(q *rt.Queue, c Case) (int, error) {
	switch c := c.(type) {
	case *cannyCase:
		return invert(q, c.class)
	case *kmeansCase:
		return invert(q, c.centroids)
	case *rayCase:
		return invert(q, c.colour)
	case *cryptCase:
		return invert(q, c.cipher)
	case *pricingCase:
		return invert(q, c.put)
	case *bfsCase:
		return invert(q, c.cost)
	case *lavaCase:
		return invert(q, c.fx)
	case *ludCase:
		return invert(q, c.a)
	case *hotspotCase:
		return invert(q, c.out)
	}
	return 0, fmt.Errorf("no result for %T", c)
}

// invert inverts the four bytes of b at the 4-byte boundary nearest below
// its middle, reading and writing the elements that hold them.
func invert[T any](q *rt.Queue, b rt.Buffer[T]) (int, error) {
	es := int(unsafe.Sizeof(*new(T)))
	off := b.Len() * es / 2 &^ 3
	first, last := off/es, (off+3)/es
	v := make([]T, last-first+1)
	if err := b.ReadAt(q, first, v); err != nil {
		return 0, err
	}
	bs := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*es)
	for i := range 4 {
		bs[off-first*es+i] ^= 0xff
	}
	return off, b.WriteAt(q, first, v)
}

// TestVerifyCatchesCorruption inverts four bytes in the middle of each
// program's result on the device: Verify must fail.
func TestVerifyCatchesCorruption(t *testing.T) {
	e, err := OpenEnv("full")
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer e.Close()
	for _, p := range Programs {
		t.Run(p.Name, func(t *testing.T) {
			c, err := p.New(e, p.Test, rand.Uint64())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
			off, err := corrupt(e.Q, c)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Verify(); err == nil {
				t.Errorf("Verify accepts a result with bytes %d-%d inverted", off, off+3)
			} else {
				t.Logf("caught: %v", err)
			}
		})
	}
}

// TestNeighbours checks lavaMD's neighbour lists at the corners, edges and
// centre of a 3 x 3 x 3 cube.
func TestNeighbours(t *testing.T) {
	nbs := neighbours(3)
	tests := []struct{ box, want int }{{0, 8}, {1, 12}, {4, 18}, {13, 27}, {26, 8}}
	for _, tt := range tests {
		nb := nbs[tt.box*27 : tt.box*27+27]
		n := 0
		for n < 27 && nb[n] >= 0 {
			n++
		}
		if n != tt.want || nb[0] != int32(tt.box) {
			t.Errorf("box %d: %d neighbours %v, want %d, itself first", tt.box, n, nb, tt.want)
		}
	}
}

// TestPinnedFlags runs the programs that read a flag every iteration with
// the flag read into pinned memory (Env.Pinned), and verifies them.
func TestPinnedFlags(t *testing.T) {
	e, err := OpenEnv("full")
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatal(err)
	}
	defer e.Close()
	e.Pinned = true
	for _, name := range []string{"kmeans", "bfs", "canny"} {
		t.Run(name, func(t *testing.T) {
			p, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			seed := rand.Uint64()
			c, err := p.New(e, p.Test, seed)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
			if err := c.Verify(); err != nil {
				t.Errorf("seed %d: %v", seed, err)
			}
		})
	}
	if e.flag == nil {
		t.Error("no flag was read through pinned memory")
	}
}
