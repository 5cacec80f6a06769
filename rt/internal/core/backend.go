package core

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/rt/driver"
)

// openBackend opens the driver context that cfg asks for, on the backend
// and devices that chooseBackend picks, and returns the backend's name
// with it. A device that the backend lost to a fault earlier in the
// process is not opened (chooseBackend); one whose opening fails with a
// fault (lost outside rt's knowledge) is recorded lost, and under
// automatic selection the choice is made again without it.
func openBackend(cfg Config) (string, driver.Context, []driver.DeviceInfo, error) {
	var err error
	for range 8 { // each round records a backend's devices lost
		var (
			name string
			b    driver.Backend
			devs []driver.DeviceInfo
		)
		name, b, devs, err = chooseBackend(cfg)
		if err != nil {
			return "", nil, nil, err
		}
		for _, d := range devs[1:] {
			if d.PlatformIndex != devs[0].PlatformIndex {
				return "", nil, nil, fmt.Errorf("open context on %s and %s: %w: devices of different platforms", devs[0].Label(), d.Label(), ErrInvalidArgument)
			}
		}
		var drv driver.Context
		if drv, err = b.NewContext(devs); err == nil {
			return name, drv, devs, nil
		}
		err = fmt.Errorf("open context on %s: %w", labels(devs), err)
		if !errors.Is(err, ErrDeviceFault) || !isAuto(cfg) {
			return "", nil, nil, err
		}
		openFault(name, devs, err) // chooseBackend skips it now
	}
	return "", nil, nil, err
}

// isAuto reports whether cfg leaves the backend to automatic selection.
func isAuto(cfg Config) bool {
	name := strings.ToLower(strings.TrimSpace(string(cfg.Backend)))
	return name == "" || name == "auto"
}

// chooseBackend returns the backend that cfg names, with its name, and
// the devices to open on it. An empty name or "auto" tries the backends of
// driver.AutoBackends in order (rt/cuda for an NVIDIA GPU when libcuda
// loads, then "opencl") and takes the first on which cfg.Device selects a
// device that the backend has not lost to a fault earlier in the process,
// logging a warning through cfg.Logger when it skipped one that had;
// where none does, the error adds why a backend declined automatic
// selection (driver.AutoDecliner). Device indices ("P:D") are the OpenCL
// backend's under automatic selection, as `dgen devices` lists them under
// "opencl"; name the backend to use another's. A backend named that lost
// the device is an error wrapping ErrDeviceFault that says to restart the
// process.
func chooseBackend(cfg Config) (string, driver.Backend, []driver.DeviceInfo, error) {
	if !isAuto(cfg) {
		name := strings.ToLower(strings.TrimSpace(string(cfg.Backend)))
		b, err := driver.Lookup(name)
		if err != nil {
			return "", nil, nil, err
		}
		devs, err := devicesOn(b, cfg)
		if err == nil {
			err = lostError(name, devs)
		}
		return name, b, devs, err
	}
	names := driver.AutoBackends()
	if isIndexSelector(cfg.Device) || len(names) == 0 {
		names = []string{"opencl"}
	}
	var errs []error
	var lost []string
	for _, n := range names {
		b, err := driver.Lookup(n)
		if err != nil {
			return "", nil, nil, err
		}
		devs, err := devicesOn(b, cfg)
		if err == nil {
			if err = lostError(n, devs); err != nil {
				lost = append(lost, n)
			}
		}
		if err == nil {
			if len(lost) > 0 {
				warnFallback(cfg.Logger, n, devs, lost)
			}
			return n, b, devs, nil
		}
		if len(names) > 1 {
			err = fmt.Errorf("backend %s: %w", n, err)
		}
		errs = append(errs, err)
	}
	// A backend that declined (rt/cuda on an NVIDIA GPU without NVIDIA's
	// OpenCL) may own the device asked for: say what it lacks.
	return "", nil, nil, errors.Join(append(errs, driver.AutoDeclined()...)...)
}

// nvidiaNoted is set once Open has said, through a context's logger, that
// it runs an NVIDIA GPU on NVIDIA's OpenCL for want of rt/cuda: once per
// process, since a server may open many contexts.
var nvidiaNoted atomic.Bool

// nvidiaOnOpenCL returns the NVIDIA GPU among devs that automatic
// selection put on the backend name "opencl", NVIDIA's OpenCL, while no
// backend "cuda" is registered (cudaLinked false): rt/cuda, which the
// program did not import, runs it at less cost per launch. It returns nil
// otherwise, and where cfg names the backend.
func nvidiaOnOpenCL(cfg Config, name string, devs []driver.DeviceInfo, cudaLinked bool) *driver.DeviceInfo {
	if b := strings.ToLower(strings.TrimSpace(string(cfg.Backend))); b != "" && b != "auto" || name != "opencl" || cudaLinked {
		return nil
	}
	for i, d := range devs {
		if d.Type == driver.DeviceGPU && (strings.Contains(d.Vendor, "NVIDIA") || strings.Contains(d.Platform, "NVIDIA")) {
			return &devs[i]
		}
	}
	return nil
}

// noteNVIDIA says once through log that the NVIDIA GPU d runs on NVIDIA's
// OpenCL because rt/cuda is not linked, and how to link it.
func noteNVIDIA(log *slog.Logger, d *driver.DeviceInfo) {
	if d == nil || nvidiaNoted.Swap(true) {
		return
	}
	log.Warn("dgen: the NVIDIA GPU runs on NVIDIA's OpenCL because the program does not import rt/cuda; "+
		`import _ "github.com/dgen-go/dgen/rt/backends" (or rt/cuda) to run it through CUDA's driver API, whose launches cost less`,
		"device", d.Label())
}

// devicesOn returns the devices of b that cfg.Device selects.
func devicesOn(b driver.Backend, cfg Config) ([]driver.DeviceInfo, error) {
	ps, err := b.Platforms()
	if err != nil {
		return nil, fmt.Errorf("open context: list platforms: %w", err)
	}
	devs, err := devsel.Select(ps, cfg.Device)
	if err != nil {
		return nil, fmt.Errorf("open context: %v: %w", setDevice, err)
	}
	return devs, nil
}

// isIndexSelector reports a selector of the form P:D or P:*.
func isIndexSelector(sel string) bool {
	ps, _, ok := strings.Cut(strings.TrimSpace(sel), ":")
	_, err := strconv.Atoi(ps)
	return ok && err == nil
}
