//go:build !cgo

package main

import (
	"fmt"
	"io"
)

func init() {
	commands["devices"] = command{devicesSummary, runDevicesNoCgo}
}

// runDevicesNoCgo explains that this dgen cannot list devices: listing
// them loads OpenCL through cgo, and the generator is built without it.
func runDevicesNoCgo(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "dgen devices: this dgen was built with CGO_ENABLED=0 and cannot load OpenCL; "+
		"build it with cgo and the OpenCL headers (go install github.com/dgen-go/dgen/cmd/dgen with CGO_ENABLED=1) to list devices")
	return 1
}
