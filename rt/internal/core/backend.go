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

// chooseBackend returns the backend that cfg names, its name and the
// devices to open on it. An empty name or "auto" tries the backends of
// driver.AutoBackends in order (rt/cuda for an NVIDIA GPU when libcuda
// loads, then "opencl") and takes the first on which cfg.Device selects a
// device; where none does, the error adds why a backend declined
// automatic selection (driver.AutoDecliner). Device indices ("P:D") are
// the OpenCL backend's under automatic selection, as `dgen devices` lists
// them under "opencl"; name the backend to use another's.
func chooseBackend(cfg Config) (driver.Backend, string, []driver.DeviceInfo, error) {
	name := strings.ToLower(strings.TrimSpace(string(cfg.Backend)))
	if name != "" && name != "auto" {
		b, err := driver.Lookup(name)
		if err != nil {
			return nil, "", nil, err
		}
		devs, err := devicesOn(b, cfg)
		return b, name, devs, err
	}
	names := driver.AutoBackends()
	if isIndexSelector(cfg.Device) || len(names) == 0 {
		names = []string{"opencl"}
	}
	var errs []error
	for _, n := range names {
		b, err := driver.Lookup(n)
		if err != nil {
			return nil, "", nil, err
		}
		devs, err := devicesOn(b, cfg)
		if err == nil {
			return b, n, devs, nil
		}
		if len(names) > 1 {
			err = fmt.Errorf("backend %s: %w", n, err)
		}
		errs = append(errs, err)
	}
	// A backend that declined (rt/cuda on an NVIDIA GPU without NVIDIA's
	// OpenCL) may own the device asked for: say what it lacks.
	return nil, "", nil, errors.Join(append(errs, driver.AutoDeclined()...)...)
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
		return nil, fmt.Errorf("open context: %w", err)
	}
	return devs, nil
}

// isIndexSelector reports a selector of the form P:D or P:*.
func isIndexSelector(sel string) bool {
	ps, _, ok := strings.Cut(strings.TrimSpace(sel), ":")
	_, err := strconv.Atoi(ps)
	return ok && err == nil
}
