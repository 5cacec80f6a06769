//go:build unix

package opencl

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
)

// brokenSource names its file with #line, as a device image dgen makes
// does, and has two errors, on lines 2 and 3 of broken.cl.
const brokenSource = "#line 1 \"broken.cl\"\n__kernel void k(__global int *x) {\n\tx[0] = undeclared_y;\n\tx[1] = undeclared_z;\n}\n"

// duringBuild is what a goroutine of stderrChild writes to standard error
// while another builds a program.
const duringBuild = "written during a build"

// TestBuildStderr builds programs on PoCL in child processes whose
// standard error the test reads: a build leaves the process's standard
// error alone. A broken program's error names broken.cl and its lines, and
// the driver writes nothing to standard error; what another goroutine
// writes there during a build arrives at once, and so does the trace of a
// panic during a build.
func TestBuildStderr(t *testing.T) {
	if mode := os.Getenv("DGEN_TEST_STDERR_CHILD"); mode != "" {
		os.Exit(stderrChild(mode))
	}
	cases := []struct {
		mode string
		// exit is whether the child must exit with status 0.
		exit  bool
		check func(t *testing.T, stdout, stderr string)
	}{
		{"broken", true, func(t *testing.T, stdout, stderr string) {
			for _, want := range []string{"broken.cl:2:9:", "broken.cl:3:9:", "ErrBuildFailed true"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("the build error does not say %q:\n%s", want, stdout)
				}
			}
			if strings.Contains(stdout, "tempfile") {
				t.Errorf("the build error names the driver's temporary file:\n%s", stdout)
			}
			if stderr != "" {
				t.Errorf("the driver wrote %q to standard error during the build; want nothing", stderr)
			}
		}},
		{"write", true, func(t *testing.T, stdout, stderr string) {
			if !strings.Contains(stdout, "reached standard error during the build") {
				t.Errorf("a write to standard error during a build arrived late:\n%s", stdout)
			}
			if stderr != duringBuild+"\n" {
				t.Errorf("the child's standard error is %q; want %q", stderr, duringBuild+"\n")
			}
		}},
		{"panic", false, func(t *testing.T, stdout, stderr string) {
			if strings.Contains(stdout, "the build ended") {
				t.Fatalf("the build ended before the goroutine panicked:\n%s", stdout)
			}
			for _, want := range []string{"panic: " + duringBuild, "goroutine "} {
				if !strings.Contains(stderr, want) {
					t.Errorf("the child's standard error does not say %q (a panic's trace was lost):\n%s", want, stderr)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			stdout, stderr, err := runStderrChild(t, tc.mode)
			if strings.Contains(stdout, "SKIP:") {
				t.Skip(strings.TrimSpace(stdout))
			}
			if (err == nil) != tc.exit {
				t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			tc.check(t, stdout, stderr)
		})
	}
}

// runStderrChild runs stderrChild in mode and returns what it wrote. Each
// time the child writes duringBuild to standard error, the test writes a
// line to the child's standard input.
func runStderrChild(t *testing.T, mode string) (stdout, stderr string, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuildStderr$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DGEN_TEST_STDERR_CHILD="+mode, "POCL_KERNEL_CACHE=0")
	var out bytes.Buffer
	cmd.Stdout = &out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	r := bufio.NewReader(errPipe)
	for {
		line, rerr := r.ReadString('\n')
		errOut.WriteString(line)
		if strings.TrimSpace(line) == duringBuild {
			io.WriteString(in, "seen\n")
		}
		if rerr != nil {
			break
		}
	}
	in.Close()
	err = cmd.Wait()
	return out.String(), errOut.String(), err
}

// stderrChild is the child process of TestBuildStderr. In mode "broken"
// it builds brokenSource; in mode "write" a goroutine writes duringBuild
// to standard error while a program builds, waits for the test to say it
// has read it, and reports whether the build was still in progress; in
// mode "panic" the goroutine panics during the build instead.
func stderrChild(mode string) int {
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
	if mode == "broken" {
		_, err = ctx.BuildProgram(brokenSource, "")
		fmt.Printf("ErrBuildFailed %v\n%v\n", errors.Is(err, driver.ErrBuildFailed), err)
		return 0
	}
	var building atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !building.Load() {
			time.Sleep(time.Millisecond)
		}
		// Let the build begin in earnest: the source takes PoCL far longer.
		time.Sleep(20 * time.Millisecond)
		if mode == "panic" {
			panic(duringBuild)
		}
		fmt.Fprintln(os.Stderr, duringBuild)
		bufio.NewReader(os.Stdin).ReadString('\n')
		if building.Load() {
			fmt.Println("reached standard error during the build")
		} else {
			fmt.Println("reached standard error after the build")
		}
	}()
	building.Store(true)
	_, err = ctx.BuildProgram(slowSource(50), "")
	building.Store(false)
	fmt.Println("the build ended:", err)
	<-done
	return 0
}

// slowSource is a kernel that calls n helper functions, which PoCL takes
// a while to compile.
func slowSource(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "float f%d(float x) { float s = x; for (int j = 0; j < 8; j++) s = s * %d.5f + sin(s); return s; }\n", i, i)
	}
	b.WriteString("__kernel void k(__global float *x) {\n\tfloat s = x[0];\n")
	for i := range n {
		fmt.Fprintf(&b, "\ts += f%d(s);\n", i)
	}
	b.WriteString("\tx[0] = s;\n}\n")
	return b.String()
}

// TestPoCLQuiet builds on PoCL with the flag that keeps clang's summary
// off standard error, and with one that PoCL refuses, as a later PoCL
// might refuse poclQuiet: the build must succeed without it, and PoCL not
// be asked again, but for the caller's own invalid options, which fail.
func TestPoCLQuiet(t *testing.T) {
	dev, ok := cpuDevice()
	if !ok {
		t.Skip("no CPU OpenCL device (PoCL)")
	}
	ctx, err := Backend{}.NewContext([]driver.DeviceInfo{dev})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
	if !ctx.(*context).pocl {
		t.Skipf("the CPU device is not PoCL's: %s", dev.Platform)
	}
	saved := poclQuiet
	t.Cleanup(func() { poclQuiet = saved; poclLoud.Store(false) })
	const source = "__kernel void k(__global int *x) { x[0] = 1; }\n"
	cases := []struct {
		name      string
		quiet     string // poclQuiet during the build
		options   string
		wantErr   bool
		wantLoud  bool // poclLoud after the build
		wantInLog string
	}{
		{"quiet", saved, "-cl-mad-enable", false, false, ""},
		{"quiet, invalid options", saved, "-cl-bogus", true, false, "-cl-bogus"},
		{"refused", "-fno-caret-diagnostics ", "-cl-mad-enable", false, true, ""},
		{"refused, invalid options", "-fno-caret-diagnostics ", "-cl-bogus", true, false, "-cl-bogus"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			poclQuiet = tc.quiet
			poclLoud.Store(false)
			p, err := ctx.BuildProgram(source, tc.options)
			if (err != nil) != tc.wantErr {
				t.Fatalf("build with %q: %v; want an error: %v", tc.options, err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tc.wantInLog) {
				t.Errorf("the error does not name %q: %v", tc.wantInLog, err)
			}
			if err != nil && strings.Contains(err.Error(), "caret") {
				t.Errorf("the error names the backend's own flag: %v", err)
			}
			if p != nil {
				p.Release()
			}
			if got := poclLoud.Load(); got != tc.wantLoud {
				t.Errorf("poclLoud = %v; want %v", got, tc.wantLoud)
			}
		})
	}
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
