package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	stdslog "log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The operator tests do to a running program's trace file what the people
// who run it do: truncate it (logrotate's copytruncate, : > PATH), remove
// it, rename it away (rotation), and start a second context or process
// with the same path. The program is a child process (operatorChild) that
// traces from two goroutines as fast as it can while the parent acts.

// afterCalls is the number of commands the child traces after the parent
// acted, all of which must be in the trace.
const afterCalls = 300

// operatorChild runs in the child process for the modes "op-…": it opens
// DGEN_TRACE with a logger on stderr, traces "before" commands from two
// goroutines (in bursts), prints "ready", and when a line arrives on stdin stops them
// and traces afterCalls "after" commands. Then it closes the tracer and
// exits 0, or with op-kill prints "after" and waits to be killed. With
// op-busy it only opens the tracer and exits 5 if that fails with ErrBusy.
func operatorChild(mode string) {
	watchEvery = 20 * time.Millisecond
	log := stdslog.New(stdslog.NewTextHandler(os.Stderr, nil))
	tr, err := OpenWith(os.Getenv(EnvVar), OpenConfig{Logger: log, SkipBusy: mode == "op-skip"})
	if mode == "op-busy" {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, ErrBusy) {
			os.Exit(5)
		}
		os.Exit(9)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(9)
	}
	d := tr.Device(0, "gpu0")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := d.Queue(1+g, "w"+strconv.Itoa(g), true)
			for {
				select {
				case <-stop:
					return
				default:
				}
				for range 64 {
					tk := q.Begin(Kernel, "before", 0)
					tk.EndRelease()
				}
				time.Sleep(100 * time.Microsecond) // a file of megabytes, not gigabytes, to convert at Close
			}
		}()
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	close(stop)
	wg.Wait()
	q := d.Queue(0, "q0", true)
	for range afterCalls {
		tk := q.Begin(Kernel, "after", 0)
		tk.EndRelease()
	}
	if mode == "op-kill" {
		fmt.Println("after")
		time.Sleep(time.Hour)
	}
	if err := tr.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(6)
	}
	os.Exit(0)
}

// opChild is a running operatorChild.
type opChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr bytes.Buffer
}

// startOpChild starts operatorChild in mode with DGEN_TRACE=spec and waits
// for it to be ready.
func startOpChild(t *testing.T, mode, spec string) *opChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &opChild{cmd: exec.Command(exe)}
	c.cmd.Env = append(os.Environ(), childEnv+"="+mode, EnvVar+"="+spec)
	c.cmd.Stderr = &c.stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdout = bufio.NewReader(out)
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	if line, err := c.stdout.ReadString('\n'); line != "ready\n" {
		t.Fatalf("child not ready: %q, %v\n%s", line, err, c.stderr.String())
	}
	return c
}

// finish tells the child that the parent acted and waits for it to end:
// it fails the test unless the child exits 0.
func (c *opChild) finish(t *testing.T) {
	t.Helper()
	c.stdin.Write([]byte("go\n"))
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, c.stderr.String())
	}
}

// warnings returns the child's warnings.
func (c *opChild) warnings() []string {
	var w []string
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		if strings.Contains(l, "level=WARN") {
			w = append(w, l)
		}
	}
	return w
}

// countSlices counts the host slices called name in evs.
func countSlices(evs []jsonEvent, name string) int {
	n := 0
	for _, e := range evs {
		if e.Ph == "X" && e.Name == name && e.Cat == catHost {
			n++
		}
	}
	return n
}

// TestOperatorActions truncates, removes and renames the perfetto file of
// a child that traces from two goroutines: the child neither crashes
// (SIGBUS, before the fix) nor stops tracing. It warns once, saying what
// happened, starts the trace again at PATH, and closes with every command
// traced after the act in PATH's JSON; a renamed file keeps the commands
// before, as records that convert.
func TestOperatorActions(t *testing.T) {
	tests := []struct {
		name string
		act  func(path string) error
		why  string
	}{
		{"truncate", func(p string) error { return os.Truncate(p, 0) }, "truncated"},
		{"shell-truncate", func(p string) error { // : > PATH
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
			if err == nil {
				err = f.Close()
			}
			return err
		}, "truncated"},
		{"copytruncate", func(p string) error {
			data, err := os.ReadFile(p)
			if err == nil {
				err = os.WriteFile(p+".1", data, 0o644)
			}
			if err == nil {
				err = os.Truncate(p, 0)
			}
			return err
		}, "truncated"},
		{"remove", os.Remove, "removed"},
		{"rotate", func(p string) error {
			if err := os.Rename(p, p+".1"); err != nil {
				return err
			}
			return os.WriteFile(p, nil, 0o644) // logrotate's create
		}, "moved away"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.json")
			c := startOpChild(t, "op-close", "perfetto:"+path)
			time.Sleep(20 * time.Millisecond) // a few megabytes of records
			if err := tt.act(path); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond) // writers meet the change; the watcher sees it
			c.finish(t)
			w := c.warnings()
			if len(w) != 1 || !strings.Contains(w[0], "trace file "+tt.why) {
				t.Errorf("warnings %q, want one saying the file was %s", w, tt.why)
			}
			if n := countSlices(readJSON(t, path), "after"); n != afterCalls {
				t.Errorf("%d slices after the act in %s, want %d", n, path, afterCalls)
			}
			if _, err := os.Stat(path + ".1"); err == nil {
				if n := countSlices(loadTrace(t, path+".1"), "before"); n == 0 {
					t.Errorf("the rotated file has no slices from before")
				}
			}
			if _, err := os.Stat(lockName(path)); !os.IsNotExist(err) {
				t.Errorf("lock file left after Close: %v", err)
			}
		})
	}
}

// TestTruncateThenKill truncates the file, then SIGKILLs the child after
// it traced afterCalls more commands: the new generation keeps the promise
// of the first, every command in the file however the process ends.
func TestTruncateThenKill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	c := startOpChild(t, "op-kill", "perfetto:"+path)
	time.Sleep(20 * time.Millisecond)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	c.stdin.Write([]byte("go\n"))
	if line, err := c.stdout.ReadString('\n'); line != "after\n" {
		t.Fatalf("child did not trace after the truncation: %q, %v\n%s", line, err, c.stderr.String())
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()
	if n := countSlices(loadTrace(t, path), "after"); n != afterCalls {
		t.Errorf("%d slices after the truncation in the killed child's file, want %d", n, afterCalls)
	}
}

// TestTwoProcessesOnePath starts a child on the path that this process's
// tracer writes: Open fails with ErrBusy naming this process, OpenWith's
// SkipBusy opens without the file and warns once, and this process's
// trace is whole at its Close.
func TestTwoProcessesOnePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	tr, err := Open("perfetto:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := tr.Device(0, "gpu0").Queue(0, "q0", false)
	trace := func(n int) {
		for range n {
			tk := q.Begin(Kernel, "mine", 0)
			tk.EndRelease()
		}
	}
	trace(300)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	busy := exec.Command(exe)
	busy.Env = append(os.Environ(), childEnv+"=op-busy", EnvVar+"=perfetto:"+path)
	out, err := busy.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 5 || !strings.Contains(string(out), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second process: %v, %s; want ErrBusy naming process %d", err, out, os.Getpid())
	}
	c := startOpChild(t, "op-skip", "perfetto:"+path+",summary")
	c.finish(t)
	if w := c.warnings(); len(w) != 1 || !strings.Contains(w[0], "left out") || !strings.Contains(w[0], ErrBusy.Error()) {
		t.Errorf("second process's warnings %q, want one saying the file is left out", w)
	}
	trace(300)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n := countSlices(readJSON(t, path), "mine"); n != 600 {
		t.Errorf("%d slices of the first process, want 600", n)
	}
}

// TestTwoTracersOnePath opens two tracers of one process on one path, as
// two contexts with the same DGEN_TRACE do: the second is refused before
// it touches the file (it used to truncate the first's mapping: SIGBUS),
// the first's trace is whole, and the path is free again after its Close.
func TestTwoTracersOnePath(t *testing.T) {
	dir := t.TempDir()
	for _, spec := range []string{"perfetto:%s", "flight:%s", "summary:%s", "log:%s"} {
		t.Run(strings.TrimSuffix(spec, ":%s"), func(t *testing.T) {
			path := filepath.Join(dir, strings.TrimSuffix(spec, ":%s"))
			spec := fmt.Sprintf(spec, path)
			first, err := Open(spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			q := first.Device(0, "gpu0").Queue(0, "q0", false)
			q.Begin(Kernel, "mine", 0).EndRelease()
			second, err := Open(spec, nil)
			if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another tracer of this process") {
				second.Close()
				t.Fatalf("second Open(%q) = %v, want an error wrapping ErrBusy", spec, err)
			}
			var log bytes.Buffer
			second, err = OpenWith(spec, OpenConfig{Logger: stdslog.New(stdslog.NewTextHandler(&log, nil)), SkipBusy: true})
			if err != nil || second.Enabled() {
				t.Fatalf("OpenWith(SkipBusy) = %v, enabled %v; want a Tracer without the file", err, second.Enabled())
			}
			if n := strings.Count(log.String(), "level=WARN"); n != 1 {
				t.Errorf("%d warnings, want 1:\n%s", n, log.String())
			}
			second.Close()
			q.Begin(Kernel, "mine", 0).EndRelease()
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			if spec == "perfetto:"+path {
				if n := countSlices(readJSON(t, path), "mine"); n != 2 {
					t.Errorf("%d slices of the first tracer, want 2", n)
				}
			}
			again, err := Open(spec, nil)
			if err != nil {
				t.Fatalf("Open after the first closed: %v", err)
			}
			again.Close()
		})
	}
}

// TestFlightTruncated truncates a flight recorder's ring while it records:
// no crash, one warning, and the ring records and dumps again.
func TestFlightTruncated(t *testing.T) {
	defer func(d time.Duration) { watchEvery = d }(watchEvery)
	watchEvery = 10 * time.Millisecond
	path := filepath.Join(t.TempDir(), "flight")
	var log bytes.Buffer
	tr, err := OpenWith("flight:"+path+",size=64K", OpenConfig{Logger: stdslog.New(stdslog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	q := tr.Device(0, "gpu0").Queue(0, "q0", false)
	for range 2000 {
		q.Begin(Kernel, "before", 0).EndRelease()
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	for range 2000 {
		q.Begin(Kernel, "during", 0).EndRelease()
	}
	time.Sleep(100 * time.Millisecond)
	for range 100 {
		q.Begin(Kernel, "after", 0).EndRelease()
	}
	var buf bytes.Buffer
	if _, err := tr.FlightRecorder().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 || !strings.Contains(log.String(), "truncated") {
		t.Errorf("warnings:\n%s\nwant one saying the file was truncated", log.String())
	}
	if n := countSlices(readJSON(t, path), "after"); n != 100 {
		t.Errorf("%d slices after the truncation in the dump, want 100", n)
	}
}

// lockName is the lock file of path.
func lockName(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".dgen-lock")
}
