package progcache

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// spawn makes an instance of ck's kernel through Spawn, as rt's core does,
// and releases it.
func spawn(ck *Kernel[*testKernel]) error {
	var k driver.Kernel
	err := ck.Spawn(func(p driver.Program) (err error) {
		k, err = p.NewKernel("fill")
		return err
	})
	if err != nil {
		return err
	}
	return k.Release()
}

// TestEvictionBetweenBuildAndKernel forces the interleaving of issue 52:
// between the build of A's program and the creation of its kernel object,
// another goroutine builds B, which a threshold of one byte makes evict
// everything else. The kernel of A must be made all the same (A's entry is
// held from its build on), and the cache must still come down to what the
// threshold allows once the caller has let go: one program, A's, used
// last.
func TestEvictionBetweenBuildAndKernel(t *testing.T) {
	c, b := newCache(t, Config{InMemory: true, EvictionThreshold: 1}, false)
	a := NewKernelKey(uniqueImage("test.HoldA", "1"), "fill")
	imgB := uniqueImage("test.HoldB", "2")
	var berr error
	b.beforeKernel = func() {
		var p driver.Program
		if p, _, berr = c.Program(imgB); berr == nil {
			berr = p.Release()
		}
	}
	ck, err := c.Kernel(a, 0)
	if berr != nil {
		t.Fatalf("B, built between A's build and A's kernel: %v", berr)
	}
	if err != nil {
		t.Fatalf("A's kernel, whose program B's build would evict: %v; want the kernel", err)
	}
	if ck.Doomed() {
		t.Errorf("A's kernel is doomed when Kernel returns it")
	}
	if s := c.Stats(); s.Programs != 1 || s.Evictions != 1 {
		t.Errorf("stats %+v: want B evicted once A was let go, one program left", s)
	}
	if again, err := c.Kernel(a, 0); err != nil || again != ck {
		t.Errorf("A again: %p, %v; want the cached kernel %p", again, err, ck)
	}
}

// TestKernelHeld checks the hold that the core takes from its lookup to
// the instance it spawns: while A is held, a build that would evict it
// leaves it alone (above the threshold), Spawn works, and Unhold evicts
// what the threshold asks; Close still closes a held kernel.
func TestKernelHeld(t *testing.T) {
	for _, fast := range []bool{false, true} {
		name := "miss"
		if fast {
			name = "hit"
		}
		t.Run(name, func(t *testing.T) {
			c, _ := newCache(t, Config{InMemory: true, EvictionThreshold: 1}, false)
			a := NewKernelKey(uniqueImage("test.HeldA", "1"), "fill")
			if fast {
				if _, err := c.Kernel(a, 0); err != nil { // in the fast kernel cache
					t.Fatal(err)
				}
			}
			ck, err := c.KernelHeld(t.Context(), a, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			ckB, err := c.Kernel(NewKernelKey(uniqueImage("test.HeldB", "2"), "fill"), 0)
			if err != nil {
				t.Fatal(err)
			}
			if ck.Doomed() {
				t.Fatalf("A doomed while held")
			}
			if s := c.Stats(); s.Programs != 2 {
				t.Errorf("stats %+v while A is held: want A and B", s)
			}
			if err := spawn(ck); err != nil {
				t.Errorf("Spawn of held A after B's build: %v", err)
			}
			c.Unhold(ck)
			if s := c.Stats(); s.Programs != 1 || !ckB.Doomed() || ck.Doomed() {
				t.Errorf("stats %+v, A doomed %v, B doomed %v after Unhold: want B evicted, A, used last, kept", s, ck.Doomed(), ckB.Doomed())
			}

			ck, err = c.KernelHeld(t.Context(), a, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
			if err := spawn(ck); !errors.Is(err, ErrClosed) {
				t.Errorf("Spawn of a held kernel after Close: %v; want ErrClosed", err)
			}
			c.Unhold(ck)
			if _, err := c.KernelHeld(t.Context(), a, 0, nil); !errors.Is(err, ErrClosed) {
				t.Errorf("KernelHeld after Close: %v; want ErrClosed", err)
			}
		})
	}
}
