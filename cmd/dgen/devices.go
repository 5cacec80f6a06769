//go:build cgo

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

func init() {
	commands["devices"] = command{devicesSummary, runDevices}
}

// runDevices lists the OpenCL platforms and devices and marks the one
// DGEN_DEVICE selects.
func runDevices(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dgen devices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ps, err := rt.Devices("")
	if err != nil {
		fmt.Fprintf(stderr, "dgen devices: %v\n", err)
		return 1
	}
	selector := os.Getenv("DGEN_DEVICE")
	chosen, selErr := rt.SelectDevices(ps, selector)
	picked := func(d driver.DeviceInfo) bool {
		for _, c := range chosen {
			if c.PlatformIndex == d.PlatformIndex && c.Index == d.Index {
				return true
			}
		}
		return false
	}
	if *asJSON {
		type dev struct {
			driver.DeviceInfo
			Type     string `json:"type"`
			Selected bool   `json:"selected"`
		}
		type plat struct {
			Index   int    `json:"index"`
			Name    string `json:"name"`
			Vendor  string `json:"vendor"`
			Version string `json:"version"`
			Devices []dev  `json:"devices"`
		}
		out := struct {
			Selector  string `json:"selector"`
			Error     string `json:"error,omitempty"`
			Platforms []plat `json:"platforms"`
		}{Selector: selector, Platforms: []plat{}}
		if selErr != nil {
			out.Error = selErr.Error()
		}
		for _, p := range ps {
			jp := plat{Index: p.Index, Name: p.Name, Vendor: p.Vendor, Version: p.Version, Devices: []dev{}}
			for _, d := range p.Devices {
				jp.Devices = append(jp.Devices, dev{DeviceInfo: d, Type: d.Type.String(), Selected: picked(d)})
			}
			out.Platforms = append(out.Platforms, jp)
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "dgen devices: %v\n", err)
			return 1
		}
		return 0
	}
	if len(ps) == 0 {
		fmt.Fprintln(stdout, "no OpenCL platform found: install an ICD (for a CPU device: apt-get install pocl-opencl-icd)")
		return 1
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tID\tTYPE\tDEVICE\tPLATFORM\tVERSION\tDRIVER\tUNITS\tMEMORY\tMAX ALLOC")
	for _, p := range ps {
		for _, d := range p.Devices {
			mark := ""
			if picked(d) {
				mark = "*"
			}
			fmt.Fprintf(tw, "%s\t%d:%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", mark, d.PlatformIndex, d.Index, d.Type,
				d.Name, p.Name, d.Version, d.DriverVersion, d.ComputeUnits, bytesString(d.GlobalMemSize), bytesString(d.MaxAllocSize))
		}
	}
	tw.Flush()
	if selErr != nil {
		fmt.Fprintf(stdout, "\nDGEN_DEVICE=%q selects nothing: %v\n", selector, selErr)
		return 1
	}
	fmt.Fprintf(stdout, "\n* DGEN_DEVICE=%q selects %s\n", selector, chosen[0].Label())
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
