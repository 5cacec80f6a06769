package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/rt/driver"
)

// chooseBackend returns the backend that cfg names and the devices to open
// on it. An empty name or "auto" tries the backends of
// driver.AutoBackends in order (rt/cuda for an NVIDIA GPU when libcuda
// loads, then "opencl") and takes the first on which cfg.Device selects a
// device; where none does, the error adds why a backend declined
// automatic selection (driver.AutoDecliner). Device indices ("P:D") are
// the OpenCL backend's under automatic selection, as `dgen devices` lists
// them under "opencl"; name the backend to use another's.
func chooseBackend(cfg Config) (driver.Backend, []driver.DeviceInfo, error) {
	name := strings.ToLower(strings.TrimSpace(string(cfg.Backend)))
	if name != "" && name != "auto" {
		b, err := driver.Lookup(name)
		if err != nil {
			return nil, nil, err
		}
		devs, err := devicesOn(b, cfg)
		return b, devs, err
	}
	names := driver.AutoBackends()
	if isIndexSelector(cfg.Device) || len(names) == 0 {
		names = []string{"opencl"}
	}
	var errs []error
	for _, n := range names {
		b, err := driver.Lookup(n)
		if err != nil {
			return nil, nil, err
		}
		devs, err := devicesOn(b, cfg)
		if err == nil {
			return b, devs, nil
		}
		if len(names) > 1 {
			err = fmt.Errorf("backend %s: %w", n, err)
		}
		errs = append(errs, err)
	}
	// A backend that declined (rt/cuda on an NVIDIA GPU without NVIDIA's
	// OpenCL) may own the device asked for: say what it lacks.
	return nil, nil, errors.Join(append(errs, driver.AutoDeclined()...)...)
}

// devicesOn returns the devices of b that cfg.Device selects.
func devicesOn(b driver.Backend, cfg Config) ([]driver.DeviceInfo, error) {
	ps, err := b.Platforms()
	if err != nil {
		return nil, fmt.Errorf("open context: list platforms: %w", err)
	}
	devs, err := devsel.Select(ps, cfg.Device)
	if err != nil {
		if cfg.deviceEnv != "" && cfg.deviceEnv == cfg.Device {
			return nil, fmt.Errorf("open context: DGEN_DEVICE=%q: %w", cfg.Device, err)
		}
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
