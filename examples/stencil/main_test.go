package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// openCPU opens a context on the device that DGEN_DEVICE selects, else on
// PoCL.
func openCPU(t *testing.T) *rt.Context {
	t.Helper()
	ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(testenv.Backend()), Device: testenv.Device()})
	if err != nil {
		testenv.SkipWithoutDevice(t, err)
		t.Fatalf("open a context on %q: %v", testenv.Device(), err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// TestModesMatchReference runs every mode on fresh random inputs, on
// grids that are not multiples of the tile and step counts that are not
// multiples of the pyramid height, against the Go reference.
func TestModesMatchReference(t *testing.T) {
	ctx := openCPU(t)
	grids := []struct{ rows, cols, iters int }{{64, 64, 12}, {50, 70, 13}, {33, 17, 5}}
	for _, g := range grids {
		seed := rand.Uint64()
		temp, power := Inputs(max(g.rows, g.cols), seed)
		temp, power = temp[:g.rows*g.cols], power[:g.rows*g.cols]
		sim, err := NewSim(ctx, power, g.rows, g.cols)
		if err != nil {
			t.Fatal(err)
		}
		want := Reference(temp, power, g.rows, g.cols, g.iters, sim.p)
		for _, pyramid := range []int{1, 2, 3, 7} {
			for _, mode := range Modes {
				t.Run(fmt.Sprintf("%dx%d/%d/pyramid%d/%s", g.rows, g.cols, g.iters, pyramid, mode), func(t *testing.T) {
					res, err := sim.Run(mode, temp, g.iters, pyramid)
					if err != nil {
						t.Fatal(err)
					}
					if e := MaxAbsErr(res.Temp, want); e > Tolerance {
						t.Errorf("max error %g K against the reference (seed %d)", e, seed)
					}
					if wantL := (g.iters + pyramid - 1) / pyramid; res.Launches != wantL {
						t.Errorf("%d launches, want %d", res.Launches, wantL)
					}
					switch mode {
					case "tagged", "untagged":
						if res.AllocsAfterFirst != 0 || res.DriverAllocs != 2 || res.Reuses != uint64(res.Launches-1) {
							t.Errorf("%s: %d driver allocations (%d after the first step), %d reuses; want 2, 0, %d", mode, res.DriverAllocs, res.AllocsAfterFirst, res.Reuses, res.Launches-1)
						}
					case "driver":
						if res.DriverAllocs != uint64(1+res.Launches) {
							t.Errorf("driver: %d driver allocations, want %d", res.DriverAllocs, 1+res.Launches)
						}
					case "swap", "raw":
						if res.DriverAllocs != 2 {
							t.Errorf("%s: %d driver allocations, want 2", mode, res.DriverAllocs)
						}
					}
				})
			}
		}
		sim.Close()
	}
	if s := ctx.Stats().Alloc; s.Total().InUse != 0 {
		t.Errorf("%d bytes still in use after the runs", s.Total().InUse)
	}
}

// TestTaggedNoDriverAllocAfterFirstStep runs a longer tagged loop.
func TestTaggedNoDriverAllocAfterFirstStep(t *testing.T) {
	ctx := openCPU(t)
	temp, power := Inputs(48, rand.Uint64())
	sim, err := NewSim(ctx, power, 48, 48)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	for range 2 { // the second run starts from released free lists too
		res, err := sim.Run("tagged", temp, 100, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.AllocsAfterFirst != 0 {
			t.Errorf("tagged: %d driver allocations after the first step, want 0", res.AllocsAfterFirst)
		}
	}
	if ts := ctx.Stats().Alloc.Tag(mustTag(t)); ts.Name != "tempSite" || ts.Reuses != 198 {
		t.Errorf("tempSite statistics %+v: want name tempSite, 198 reuses", ts)
	}
}

func mustTag(t *testing.T) uint32 {
	tag := tempSite.Tag()
	if tag == 0 {
		t.Fatal("tempSite is not registered")
	}
	return tag
}

// TestRegistration: tempSite is registered under its name, which the
// statistics of its tag carry once the allocator has seen it.
func TestRegistration(t *testing.T) {
	ctx := openCPU(t)
	b, err := tempSite.Alloc(ctx.Queue(), 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if name := ctx.Stats().Alloc.Tag(mustTag(t)).Name; name != "tempSite" {
		t.Errorf("tempSite registered under the name %q, want tempSite", name)
	}
}

func TestRunErrors(t *testing.T) {
	ctx := openCPU(t)
	temp, power := Inputs(16, 1)
	sim, err := NewSim(ctx, power, 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	tests := []struct {
		name           string
		mode           string
		temp           []float32
		iters, pyramid int
	}{
		{"unknown mode", "lifo", temp, 4, 1},
		{"pyramid 0", "tagged", temp, 4, 0},
		{"pyramid 8", "tagged", temp, 4, 8},
		{"short input", "swap", temp[:10], 4, 1},
		{"negative steps", "driver", temp, -1, 1},
	}
	for _, tt := range tests {
		if _, err := sim.Run(tt.mode, tt.temp, tt.iters, tt.pyramid); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tt.name, err)
		}
	}
	if _, err := NewSim(ctx, power, 5, 5); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("NewSim with a wrong power length: %v", err)
	}
	if _, err := parseModes("tagged,heap"); err == nil {
		t.Errorf("parseModes accepted heap")
	}
}
