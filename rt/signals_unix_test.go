//go:build unix

package rt_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestSignalsAfterDriver runs a child process that opens a context with a
// flight recorder (DGEN_TRACE=flight:PATH), builds a program and launches
// a kernel, so that the driver has loaded its compiler (LLVM, which
// installs handlers for most signals), and only then asks for SIGUSR1 with
// signal.Notify. SIGUSR1 must reach both the program's channel and the
// flight recorder (a dump), and SIGQUIT must dump the flight recorder and
// then end the process the Go way: a goroutine dump and exit status 2.
// DGEN_BACKEND and DGEN_DEVICE select the backend and device, as in the
// rest of the package's tests (PoCL by default).
func TestSignalsAfterDriver(t *testing.T) {
	if os.Getenv("DGEN_TEST_SIGNALS_CHILD") != "" {
		os.Exit(signalsChild())
	}
	dir := t.TempDir()
	dump := filepath.Join(dir, "flight.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalsAfterDriver$", "-test.count=1")
	// A cache of its own, so that the child builds its program.
	cmd.Env = append(os.Environ(), "DGEN_TEST_SIGNALS_CHILD=1", "DGEN_TRACE=flight:"+dump, "DGEN_CACHE_DIR="+filepath.Join(dir, "cache"))
	if os.Getenv("DGEN_DEVICE") == "" {
		cmd.Env = append(cmd.Env, "DGEN_DEVICE=cpu")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	// The child has 20 s for each step: a bound on a hang, not a timing.
	expect := func(want string) bool {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Errorf("child ended before %q\nstderr:\n%s", want, stderr.String())
					return false
				}
				if l == want {
					return true
				}
				t.Logf("child: %s", l)
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Errorf("child did not print %q within 20 s: the signal did not reach Go\nstderr:\n%s", want, stderr.String())
				return false
			}
		}
	}
	defer func() {
		cmd.Process.Kill()
		for range lines {
		}
	}()
	if !expect("ready") {
		return
	}
	cmd.Process.Signal(syscall.SIGUSR1)
	if !expect("got SIGUSR1") {
		return
	}
	if !waitDump(dump) {
		t.Errorf("no flight recorder dump at %s after SIGUSR1", dump)
	}
	os.Remove(dump) // the ring goes on, linked as dump.ring
	cmd.Process.Signal(syscall.SIGQUIT)
	for range lines {
	}
	var err2 error
	select {
	case err2 = <-exited:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("child still running 20 s after SIGQUIT\nstderr:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err2, &ee) || ee.ExitCode() != 2 {
		t.Errorf("child after SIGQUIT: %v; want exit status 2 (Go's SIGQUIT)\nstderr:\n%s", err2, stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "SIGQUIT: quit") || !strings.Contains(s, "goroutine ") {
		t.Errorf("child's stderr has no goroutine dump after SIGQUIT:\n%s", s)
	}
	if b, err := os.ReadFile(dump); err != nil || !json.Valid(b) {
		t.Errorf("no flight recorder dump before the SIGQUIT exit: %v", err)
	}
}

// waitDump waits up to 20 s for the flight recorder's first dump to path:
// the ring linked as path.ring, and JSON at path (written atomically).
func waitDump(path string) bool {
	for range 200 {
		_, err := os.Stat(path + ".ring")
		if b, rerr := os.ReadFile(path); err == nil && rerr == nil && json.Valid(b) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// signalsChild is the process of TestSignalsAfterDriver: it opens a
// context, builds and launches a kernel, then prints "ready" and, for
// each SIGUSR1, "got SIGUSR1".
func signalsChild() int {
	fail := func(err error) int { fmt.Println(err); return 1 }
	ctx, err := rt.Open()
	if err != nil {
		return fail(err)
	}
	if ctx.Tracer().FlightRecorder() == nil {
		return fail(errors.New("DGEN_TRACE=flight:… gave no flight recorder"))
	}
	q := ctx.Queue()
	k, buf := touchKernel(childTB{}, ctx)
	if err := buf.Write(q, []int32{0}); err != nil {
		return fail(err)
	}
	if _, err := raw.Launch(q, k, rt.Range1(64)); err != nil {
		return fail(err)
	}
	got := make([]int32, 1)
	if err := buf.Read(q, got); err != nil || got[0] != 1 {
		return fail(fmt.Errorf("touch: %v, %v; want [1]", got, err))
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	fmt.Println("ready")
	for range sig {
		fmt.Println("got SIGUSR1")
	}
	return 0
}

// childTB is the testing.TB of a child process: a failure ends it.
type childTB struct{ testing.TB }

func (childTB) Helper()                           {}
func (childTB) Cleanup(func())                    {}
func (childTB) Fatal(args ...any)                 { fmt.Println(args...); os.Exit(1) }
func (childTB) Fatalf(format string, args ...any) { fmt.Printf(format+"\n", args...); os.Exit(1) }
