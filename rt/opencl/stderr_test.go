//go:build unix

package opencl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// brokenSource names its file with #line, as a device image dgen makes
// does, and has two errors, on lines 2 and 3 of broken.cl.
const brokenSource = "#line 1 \"broken.cl\"\n__kernel void k(__global int *x) {\n\tx[0] = undeclared_y;\n\tx[1] = undeclared_z;\n}\n"

// TestBuildErrorStderr builds a broken program on PoCL in a child process
// whose standard error the test reads: the error must name broken.cl and
// its lines and carry clang's "2 errors generated.", which must not reach
// standard error; what the process itself writes to standard error during
// a build must get there.
func TestBuildErrorStderr(t *testing.T) {
	if os.Getenv("DGEN_TEST_STDERR_CHILD") == "1" {
		os.Exit(stderrChild())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuildErrorStderr$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DGEN_TEST_STDERR_CHILD=1", "POCL_KERNEL_CACHE=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := stdout.String()
	if strings.Contains(out, "SKIP:") {
		t.Skip(strings.TrimSpace(out))
	}
	if err != nil {
		t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	for _, want := range []string{"broken.cl:2:9:", "broken.cl:3:9:", "ErrBuildFailed true", "2 errors generated."} {
		if !strings.Contains(out, want) {
			t.Errorf("the child's build error does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tempfile") {
		t.Errorf("the build error names the driver's temporary file:\n%s", out)
	}
	if got, want := stderr.String(), "written during a build\n"; got != want {
		t.Errorf("the child's standard error is %q; want %q (the driver's noise must not reach it, the process's own output must)", got, want)
	}
}

// stderrChild is the child process of TestBuildErrorStderr.
func stderrChild() int {
	dev, ok := cpuDevice()
	if !ok {
		fmt.Println("SKIP: no CPU OpenCL device (PoCL)")
		return 0
	}
	ctx, err := Backend{}.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		fmt.Println("new context:", err)
		return 1
	}
	defer ctx.Release()
	w := captured.begin()
	fmt.Fprintln(os.Stderr, "written during a build")
	_, err = ctx.BuildProgram(brokenSource, "")
	captured.end(w)
	fmt.Printf("ErrBuildFailed %v\n%v\n", errors.Is(err, driver.ErrBuildFailed), err)
	return 0
}

// cpuDevice returns the first CPU device (PoCL).
func cpuDevice() (driver.DeviceInfo, bool) {
	plats, err := Backend{}.Platforms()
	if err != nil {
		return driver.DeviceInfo{}, false
	}
	for _, p := range plats {
		for _, d := range p.Devices {
			if d.Type == driver.DeviceCPU {
				return d, true
			}
		}
	}
	return driver.DeviceInfo{}, false
}
