//go:build cgo

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/dgen-go/dgen/internal/devsel"
	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

func init() {
	commands["devices"] = command{devicesSummary, runDevices}
}

// view is one backend's view of the devices: its platforms, or why it
// has none.
type view struct {
	backend   string
	platforms []driver.PlatformInfo
	err       error
}

// views lists the platforms of every registered backend, in the order
// automatic selection tries them, then the rest.
func views() []view {
	order := driver.AutoBackends()
	for _, n := range driver.Backends() {
		if !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	var vs []view
	for _, n := range order {
		ps, err := platforms(n)
		vs = append(vs, view{backend: n, platforms: ps, err: err})
	}
	return vs
}

// platforms lists the devices of every platform of the named backend.
func platforms(backend string) ([]driver.PlatformInfo, error) {
	b, err := driver.Lookup(backend)
	if err != nil {
		return nil, err
	}
	ps, err := b.Platforms()
	if err != nil {
		return nil, fmt.Errorf("list platforms: %w", err)
	}
	return ps, nil
}

// choose returns the backend and devices that DGEN_BACKEND and DGEN_DEVICE
// select among vs, as rt.Open does: a named backend, or the first (in
// automatic order) on which the selector selects a device.
func choose(vs []view, backend, selector string) (string, []driver.DeviceInfo, error) {
	backend = strings.ToLower(strings.TrimSpace(backend))
	var errs []error
	for _, v := range vs {
		auto := backend == "" || backend == "auto"
		if !auto && v.backend != backend || auto && isIndex(selector) && v.backend != "opencl" {
			continue
		}
		if v.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", v.backend, v.err))
			continue
		}
		devs, err := devsel.Select(v.platforms, selector)
		if err == nil {
			return v.backend, devs, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", v.backend, err))
	}
	if len(errs) == 0 {
		return "", nil, fmt.Errorf("no backend %q is registered", backend)
	}
	return "", nil, errors.Join(errs...)
}

// isIndex reports a selector of the form P:D or P:*.
func isIndex(sel string) bool {
	ps, _, ok := strings.Cut(strings.TrimSpace(sel), ":")
	_, err := strconv.Atoi(ps)
	return ok && err == nil
}

// runDevices lists the devices of every backend (OpenCL's, and CUDA's
// view of the same NVIDIA GPUs) and marks the one DGEN_BACKEND and
// DGEN_DEVICE select.
func runDevices(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dgen devices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, cfgErr := rt.ConfigFromEnv(os.Getenv) // DGEN_BACKEND, DGEN_DEVICE and the libraries, as rt.Open reads them
	if cfgErr != nil {
		fmt.Fprintf(stderr, "dgen devices: %v\n", cfgErr)
	}
	driver.Configure(driver.Options{CUDALibrary: cfg.CUDALibrary, CUPTILibrary: cfg.CUPTILibrary})
	vs := views()
	selector, backend := cfg.Device, string(cfg.Backend)
	chosenBackend, chosen, selErr := choose(vs, backend, selector)
	picked := func(b string, d driver.DeviceInfo) bool {
		for _, c := range chosen {
			if b == chosenBackend && c.PlatformIndex == d.PlatformIndex && c.Index == d.Index {
				return true
			}
		}
		return false
	}
	if *asJSON {
		return devicesJSON(vs, selector, chosenBackend, selErr, picked, stdout, stderr)
	}
	n := 0
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tBACKEND\tID\tTYPE\tDEVICE\tPLATFORM\tVERSION\tDRIVER\tUNITS\tMEMORY\tMAX ALLOC")
	for _, v := range vs {
		for _, p := range v.platforms {
			for _, d := range p.Devices {
				n++
				mark := ""
				if picked(v.backend, d) {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d:%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", mark, v.backend, d.PlatformIndex, d.Index, d.Type,
					d.Name, p.Name, d.Version, d.DriverVersion, d.ComputeUnits, bytesString(d.GlobalMemSize), bytesString(d.MaxAllocSize))
			}
		}
	}
	tw.Flush()
	for _, v := range vs {
		if v.err != nil {
			fmt.Fprintf(stdout, "backend %s: %v\n", v.backend, v.err)
		}
	}
	if n == 0 {
		fmt.Fprintln(stdout, "no OpenCL platform found: install an ICD (for a CPU device: apt-get install pocl-opencl-icd)")
		return 1
	}
	if selErr != nil {
		fmt.Fprintf(stdout, "\nDGEN_BACKEND=%q DGEN_DEVICE=%q selects nothing: %v\n", backend, selector, selErr)
		return 1
	}
	fmt.Fprintf(stdout, "\n* DGEN_BACKEND=%q DGEN_DEVICE=%q selects %s on backend %s\n", backend, selector, chosen[0].Label(), chosenBackend)
	return 0
}

// devicesJSON prints the views as JSON.
func devicesJSON(vs []view, selector, chosenBackend string, selErr error, picked func(string, driver.DeviceInfo) bool, stdout, stderr io.Writer) int {
	type dev struct {
		driver.DeviceInfo
		Type     string `json:"type"`
		Selected bool   `json:"selected"`
	}
	type plat struct {
		Backend string `json:"backend"`
		Index   int    `json:"index"`
		Name    string `json:"name"`
		Vendor  string `json:"vendor"`
		Version string `json:"version"`
		Devices []dev  `json:"devices"`
	}
	out := struct {
		Selector  string            `json:"selector"`
		Backend   string            `json:"backend,omitempty"`
		Error     string            `json:"error,omitempty"`
		Absent    map[string]string `json:"absent_backends,omitempty"`
		Platforms []plat            `json:"platforms"`
	}{Selector: selector, Backend: chosenBackend, Platforms: []plat{}}
	if selErr != nil {
		out.Error = selErr.Error()
	}
	for _, v := range vs {
		if v.err != nil {
			if out.Absent == nil {
				out.Absent = map[string]string{}
			}
			out.Absent[v.backend] = v.err.Error()
		}
		for _, p := range v.platforms {
			jp := plat{Backend: v.backend, Index: p.Index, Name: p.Name, Vendor: p.Vendor, Version: p.Version, Devices: []dev{}}
			for _, d := range p.Devices {
				jp.Devices = append(jp.Devices, dev{DeviceInfo: d, Type: d.Type.String(), Selected: picked(v.backend, d)})
			}
			out.Platforms = append(out.Platforms, jp)
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "dgen devices: %v\n", err)
		return 1
	}
	return 0
}

// bytesString formats n bytes with a binary unit.
func bytesString(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
