// Package testenv holds what dgen's tests share about the machine they run
// on: whether it has an OpenCL (or CUDA) device for them. A test that needs
// a device skips, saying what to install, where the machine has none, and
// fails where DGEN_DEVICE names a device that is not there.
package testenv

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/rt/driver"
)

// SkipWithoutDevice skips t when err reports that no device matches the
// selection (it wraps rt.ErrNoDevice), saying what to install, so that a
// machine without an OpenCL driver skips the tests that need one rather than
// failing them. Where DGEN_DEVICE is set, the environment names the device
// the tests must run on, and a missing device is left to fail the test.
//
// A test binary links the backends its package imports: where
// DGEN_BACKEND names one it does not link (the GPU bundle runs every
// binary under DGEN_BACKEND=cuda, and some import rt/opencl alone), t
// skips, since it cannot run on that backend.
func SkipWithoutDevice(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if b := strings.ToLower(strings.TrimSpace(os.Getenv("DGEN_BACKEND"))); b != "" && b != "auto" {
		if _, lerr := driver.Lookup(b); lerr != nil {
			t.Skipf("DGEN_BACKEND=%s: this test binary does not link that backend (%v)", b, err)
		}
	}
	if !errors.Is(err, devsel.ErrNoDevice) {
		return
	}
	if sel := os.Getenv("DGEN_DEVICE"); sel != "" {
		t.Logf("DGEN_DEVICE=%q names a device this machine lacks: not skipping", sel)
		return
	}
	t.Skipf("no OpenCL device for this test (%v): install an OpenCL driver (on Debian or Ubuntu, PoCL for the CPU: apt-get install pocl-opencl-icd), or set DGEN_DEVICE to a device that `dgen devices` lists", err)
}

// RequireDevice skips t where the machine has no device for the tests: the
// one DGEN_DEVICE selects, else a CPU device (PoCL), on a backend that
// DGEN_BACKEND names, else on any that automatic selection tries. It is
// for tests that start child processes, or run a whole program, that
// would need one; the test binary must import a backend (rt/opencl). It
// asks the backends for their devices as rt.Open would, without rt, which
// imports nothing of the tests'.
func RequireDevice(t testing.TB) {
	t.Helper()
	sel := os.Getenv("DGEN_DEVICE")
	if sel == "" {
		sel = "cpu"
	}
	names := driver.AutoBackends()
	if b := strings.ToLower(strings.TrimSpace(os.Getenv("DGEN_BACKEND"))); b != "" && b != "auto" {
		names = []string{b}
	}
	err := fmt.Errorf("%w: no backend registered", devsel.ErrNoDevice)
	for _, n := range names {
		b, lerr := driver.Lookup(n)
		if lerr != nil {
			err = lerr
			continue
		}
		ps, perr := b.Platforms()
		if perr != nil {
			err = fmt.Errorf("%w: backend %s lists no platform: %v", devsel.ErrNoDevice, n, perr)
			continue
		}
		if _, err = devsel.Select(ps, sel); err == nil {
			return
		}
	}
	SkipWithoutDevice(t, err) // the test itself reports what else went wrong
}

// SkipExamplesWithoutDevice is for a TestMain, before m.Run: where the
// OpenCL backend (which the test binary imports) lists no device and
// DGEN_DEVICE is unset, it adds the examples, which cannot skip themselves,
// to -test.skip and says why on standard error. It parses the command line.
func SkipExamplesWithoutDevice() {
	if os.Getenv("DGEN_DEVICE") != "" {
		return
	}
	b, err := driver.Lookup("opencl")
	if err != nil {
		return
	}
	if ps, err := b.Platforms(); err == nil {
		for _, p := range ps {
			if len(p.Devices) > 0 {
				return
			}
		}
	}
	flag.Parse()
	skip := "^Example"
	if f := flag.Lookup("test.skip"); f != nil {
		if old := f.Value.String(); old != "" {
			skip = old + "|" + skip
		}
		if err := flag.Set("test.skip", skip); err == nil {
			fmt.Fprintln(os.Stderr, "testenv: no OpenCL device: the examples, which need one, are skipped (apt-get install pocl-opencl-icd)")
		}
	}
}

// Backend returns the backend that tests open their contexts on:
// DGEN_BACKEND where it is set (the GPU bundle runs every binary under
// DGEN_BACKEND=cuda and =opencl), else "" (automatic selection). A test
// that opens a Config of its own (which reads no variable) takes its
// backend and device from Backend and Device, as rt.Open would.
func Backend() string { return strings.TrimSpace(os.Getenv("DGEN_BACKEND")) }

// Device returns the device selector that tests open their contexts on:
// DGEN_DEVICE where it is set (to run the tests on a GPU, on whichever
// backend DGEN_BACKEND names), else "cpu", PoCL. A test that needs PoCL
// itself names it, and the backend "opencl", whatever the environment
// says.
func Device() string {
	if sel := os.Getenv("DGEN_DEVICE"); sel != "" {
		return sel
	}
	return "cpu"
}
