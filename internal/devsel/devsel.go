// Package devsel picks devices by the selector of DGEN_DEVICE
// (rt.Config.Device), for rt, which opens them, and for the dgen command,
// whose devices subcommand shows what a selector picks.
package devsel

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dgen-go/dgen/rt/driver"
)

// ErrNoDevice reports that no device matches the selection; rt exports it
// as rt.ErrNoDevice.
var ErrNoDevice = errors.New("no matching device")

// Select returns the devices that selector picks among platforms, as
// rt.Open does and `dgen devices` shows. The selector is the value of
// DGEN_DEVICE (rt.Config.Device):
//
//	""              the first GPU, else the first CPU device, else the first device
//	gpu, cpu, accelerator
//	                the first device of that type
//	P:D             device D of platform P (indices from 0, as `dgen devices` prints)
//	P:*             every device of platform P, in one context
//	gpu:*, cpu:*, accelerator:*
//	                every device of that type on the first platform that has
//	                one, in one context (every GPU of NVIDIA's OpenCL platform
//	                wherever it is listed, every GPU under rt/cuda)
//	anything else   the first device whose name, or else whose platform's
//	                name, contains it (case-insensitive)
func Select(platforms []driver.PlatformInfo, selector string) ([]driver.DeviceInfo, error) {
	var all []driver.DeviceInfo
	for _, p := range platforms {
		all = append(all, p.Devices...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("select device %q: %w: no platform lists a device", selector, ErrNoDevice)
	}
	firstOfType := func(t driver.DeviceType) []driver.DeviceInfo {
		for _, d := range all {
			if d.Type == t {
				return []driver.DeviceInfo{d}
			}
		}
		return nil
	}
	sel := strings.TrimSpace(selector)
	if ts, all, ok := strings.Cut(sel, ":"); ok && all == "*" {
		if t, ok := deviceTypes[strings.ToLower(ts)]; ok {
			return everyOfType(platforms, t, selector)
		}
	}
	switch strings.ToLower(sel) {
	case "":
		if d := firstOfType(driver.DeviceGPU); d != nil {
			return d, nil
		}
		if d := firstOfType(driver.DeviceCPU); d != nil {
			return d, nil
		}
		return all[:1], nil
	case "gpu", "cpu", "accelerator":
		t := deviceTypes[strings.ToLower(sel)]
		if d := firstOfType(t); d != nil {
			return d, nil
		}
		return nil, fmt.Errorf("select device %q: %w: there is no %s device", selector, ErrNoDevice, t)
	}
	if ps, ds, ok := strings.Cut(sel, ":"); ok {
		if pi, err := strconv.Atoi(ps); err == nil {
			return byIndex(platforms, pi, ds, selector)
		}
	}
	return byName(all, sel, selector)
}

// Check reports whether selector is well formed, without asking which
// devices there are: a selector that starts with a platform index ("P:")
// must go on with a device index or "*", both 0 or more. Any other
// selector is well formed (a name picks nothing, at worst).
func Check(selector string) error {
	sel := strings.TrimSpace(selector)
	ps, ds, ok := strings.Cut(sel, ":")
	if !ok {
		return nil
	}
	pi, err := strconv.Atoi(ps)
	if err != nil {
		return nil // "gpu:*", or a name with a colon
	}
	if pi < 0 {
		return fmt.Errorf("select device %q: platform index %d is negative", selector, pi)
	}
	if ds == "*" {
		return nil
	}
	if di, err := strconv.Atoi(ds); err != nil || di < 0 {
		return fmt.Errorf("select device %q: device index %q is not a number 0 or more, nor *: want P:D or P:* (dgen devices lists the indices)", selector, ds)
	}
	return nil
}

// byIndex returns the devices of a selector "P:D" or "P:*", pi and ds
// its two parts.
func byIndex(platforms []driver.PlatformInfo, pi int, ds, selector string) ([]driver.DeviceInfo, error) {
	if pi < 0 || pi >= len(platforms) {
		return nil, fmt.Errorf("select device %q: %w: platform %d of %d", selector, ErrNoDevice, pi, len(platforms))
	}
	devs := platforms[pi].Devices
	if ds == "*" {
		if len(devs) == 0 {
			return nil, fmt.Errorf("select device %q: %w: platform %d has no device", selector, ErrNoDevice, pi)
		}
		return append([]driver.DeviceInfo(nil), devs...), nil
	}
	if err := Check(selector); err != nil {
		return nil, err
	}
	di, _ := strconv.Atoi(ds)
	if di < 0 || di >= len(devs) {
		return nil, fmt.Errorf("select device %q: %w: device %d of %d on platform %d", selector, ErrNoDevice, di, len(devs), pi)
	}
	return []driver.DeviceInfo{devs[di]}, nil
}

// byName returns the first device of all whose name, or else whose
// platform's name, contains sel, case-insensitively.
func byName(all []driver.DeviceInfo, sel, selector string) ([]driver.DeviceInfo, error) {
	low := strings.ToLower(sel)
	for _, d := range all {
		if strings.Contains(strings.ToLower(d.Name), low) {
			return []driver.DeviceInfo{d}, nil
		}
	}
	for _, d := range all {
		if strings.Contains(strings.ToLower(d.Platform), low) {
			return []driver.DeviceInfo{d}, nil
		}
	}
	return nil, fmt.Errorf("select device %q: %w: no device or platform name contains it", selector, ErrNoDevice)
}

// deviceTypes are the device types that a selector names.
var deviceTypes = map[string]driver.DeviceType{"gpu": driver.DeviceGPU, "cpu": driver.DeviceCPU, "accelerator": driver.DeviceAccelerator}

// everyOfType returns every device of type t on the first platform that
// lists one: the devices of a selector "TYPE:*". A context spans one
// platform, so devices of the type on later platforms are left out.
func everyOfType(platforms []driver.PlatformInfo, t driver.DeviceType, selector string) ([]driver.DeviceInfo, error) {
	for _, p := range platforms {
		var devs []driver.DeviceInfo
		for _, d := range p.Devices {
			if d.Type == t {
				devs = append(devs, d)
			}
		}
		if len(devs) > 0 {
			return devs, nil
		}
	}
	return nil, fmt.Errorf("select device %q: %w: there is no %s device", selector, ErrNoDevice, t)
}
