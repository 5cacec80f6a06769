package main

import (
	"math/rand/v2"
	"testing"
)

// openEnvs opens one context per mode, closed when the test ends.
func openEnvs(t *testing.T) []*Env {
	t.Helper()
	var envs []*Env
	for _, m := range Modes() {
		e, err := OpenEnv(m)
		if err != nil {
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
					before := e.Ctx.AllocStats().DriverAllocs
					if err := c.Run(); err != nil {
						t.Fatalf("%s: run %d: %v", e.Mode, run, err)
					}
					allocs = e.Ctx.AllocStats().DriverAllocs - before
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
