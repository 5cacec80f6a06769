package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The child process of the crash tests runs when DGEN_TRACE_TEST_CHILD is
// set: it opens a Tracer from DGEN_TRACE, makes crashCalls commands (each
// a Begin, an explicit dependency on the previous one, End and Complete),
// prints "ready" and ends as the variable says.
const childEnv = "DGEN_TRACE_TEST_CHILD"

var crashCalls = 200

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if strings.HasPrefix(mode, "op-") {
			operatorChild(mode)
		}
		crashChild(mode)
		return
	}
	os.Exit(m.Run())
}

// callLine is the line of the Begin call of crashChild's commands.
var callLine int

func crashChild(mode string) {
	tr, err := Open(os.Getenv(EnvVar), os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(9)
	}
	d := tr.Device(0, "gpu0")
	d.SyncClock(tr.Now(), 0)
	q := d.Queue(0, "q0", true)
	calls := crashCalls
	if strings.HasPrefix(mode, "flight-wrap") {
		calls = 5000
	}
	var prev *Task
	for i := range calls {
		tk := q.Begin(Kernel, "k", 0) // the line the parent looks for
		tk.DependsOn(prev)
		tk.End()
		tk.Complete(int64(i)*1000, int64(i)*1000+500)
		prev = tk
	}
	d.MemAlloc(Mem{Tag: 1, TagName: "temp", Size: 64})
	tr.Mark("done")
	switch mode {
	case "exit":
		os.Exit(3)
	case "fatal":
		log.Fatal("the traced child gives up")
	case "panic", "flight-wrap-panic":
		go panic("the traced child crashes")
		time.Sleep(time.Hour)
	case "flight-api":
		if err := tr.FlightRecorder().Dump(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(9)
		}
		os.Exit(4)
	case "concurrent-panic":
		// Goroutines trace while another panics: the file must still
		// convert, holding every command of the finished goroutines.
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				gq := d.Queue(1+g, fmt.Sprintf("g%d", g), true)
				for range 1000 {
					tk := gq.Begin(Write, "w", 0)
					tk.End()
				}
			}()
		}
		wg.Wait()
		go func() {
			for {
				tk := q.Begin(Read, "r", 0)
				tk.End()
			}
		}()
		time.Sleep(time.Millisecond)
		panic("the traced child crashes while another goroutine traces")
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

// runCrashChild runs the child in mode with DGEN_TRACE=spec; with a signal
// it waits for "ready", sends it and waits for the child to end.
func runCrashChild(t *testing.T, mode, spec string, sig os.Signal) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+mode, EnvVar+"="+spec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if sig != nil {
		buf := make([]byte, 64)
		for !strings.Contains(got.String(), "ready") {
			n, err := out.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				t.Fatalf("child ended before it was ready: %v\n%s", err, stderr.String())
			}
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
	}
	io.Copy(&got, out)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child: %v, want it to fail\n%s", err, stderr.String())
	}
	if code := exit.ExitCode(); code == 9 {
		t.Fatalf("child failed to trace:\n%s", stderr.String())
	}
	return stderr.String()
}

// loadTrace converts a trace file as dgen trace json does and parses the
// JSON as trace viewers do.
func loadTrace(t *testing.T, path string) []jsonEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := Convert(&js, data); err != nil {
		t.Fatalf("%s does not convert: %v", path, err)
	}
	var evs []jsonEvent
	if err := json.Unmarshal(js.Bytes(), &evs); err != nil {
		t.Fatalf("converted %s does not parse: %v", path, err)
	}
	return evs
}

type sliceArgs struct {
	Instance uint64 `json:"instance"`
	File     string `json:"file"`
	Line     int    `json:"line"`
}

// childSlices returns, by category, the instances of the child's commands
// in evs, checking their source line.
func childSlices(t *testing.T, evs []jsonEvent) (map[string][]uint64, int) {
	t.Helper()
	got := map[string][]uint64{}
	flows := map[uint64]string{}
	for _, e := range evs {
		switch {
		case e.Ph == "X" && e.Name == "k":
			var a sliceArgs
			if err := json.Unmarshal(e.Args, &a); err != nil {
				t.Fatal(err)
			}
			if filepath.Base(a.File) != "crash_test.go" || a.Line != callLine {
				t.Fatalf("slice %s#%d at %s:%d, want crash_test.go:%d", e.Name, a.Instance, a.File, a.Line, callLine)
			}
			got[e.Cat] = append(got[e.Cat], a.Instance)
		case (e.Ph == "s" || e.Ph == "f") && e.Cat == catDep:
			flows[e.ID] += e.Ph
		}
	}
	whole := 0
	for _, ph := range flows {
		if ph == "sf" {
			whole++
		}
	}
	return got, whole
}

func init() {
	// Find the line of the Begin call in crashChild.
	_, file, _, _ := runtime.Caller(0)
	src, err := os.ReadFile(file)
	if err != nil {
		return
	}
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "// the line the parent looks for") {
			callLine = i + 1
			return
		}
	}
}

// TestCrashKeepsEvents runs a traced child that ends in each of the four
// ways a program dies without closing its tracer, and checks that every
// command it returned from is in its perfetto file: its host slice with its
// source line, its device slice, and its two dependency flows (the
// in-order edge and the explicit one).
func TestCrashKeepsEvents(t *testing.T) {
	tests := []struct {
		mode string
		sig  os.Signal
	}{
		{"exit", nil},
		{"fatal", nil},
		{"panic", nil},
		{"kill", syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trace.json")
			runCrashChild(t, tt.mode, "perfetto:"+path+",device=all", tt.sig)
			got, flows := childSlices(t, loadTrace(t, path))
			for _, cat := range []string{catHost, catDevice} {
				if n := len(got[cat]); n != crashCalls {
					t.Errorf("%d %s slices, want %d", n, cat, crashCalls)
				}
			}
			if want := 2 * (crashCalls - 1); flows != want {
				t.Errorf("%d dependency flows, want %d", flows, want)
			}
			s, err := ReadSummary(path)
			if err != nil {
				t.Fatal(err)
			}
			if rows := s.Rows(); len(rows) != 1 || rows[0].Count != int64(crashCalls) || rows[0].DeviceCount != int64(crashCalls) {
				t.Errorf("summary rows %+v, want one node with %d host and device times", rows, crashCalls)
			}
		})
	}
}

// TestCrashWhileTracing panics while another goroutine traces as fast as it
// can: the file converts, with every command of the goroutines that ended.
func TestCrashWhileTracing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.json")
	runCrashChild(t, "concurrent-panic", "perfetto:"+path, nil)
	n := 0
	for _, e := range loadTrace(t, path) {
		if e.Ph == "X" && e.Name == "w" {
			n++
		}
	}
	if n != 4000 {
		t.Errorf("%d slices of the finished goroutines, want 4000", n)
	}
}

// TestFlightRecorder checks the flight recorder: after a panic its file
// holds the newest events of a ring that wrapped many times; SIGUSR1,
// SIGQUIT and Dump write them as JSON to PATH.
func TestFlightRecorder(t *testing.T) {
	t.Run("panic", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flight")
		runCrashChild(t, "flight-wrap-panic", "flight:"+path+",size=64K", nil)
		data, _ := os.ReadFile(path)
		if !IsRecordFile(data) {
			t.Fatal("the flight file after a panic is not a record file")
		}
		got, _ := childSlices(t, loadTrace(t, path))
		host := got[catHost]
		ring := uint64(64 << 10 / slotSize)
		if len(host) == 0 || uint64(len(host)) > ring {
			t.Fatalf("%d host slices, want 1 to %d", len(host), ring)
		}
		maxInst, minInst := uint64(0), ^uint64(0)
		for _, i := range host {
			maxInst, minInst = max(maxInst, i), min(minInst, i)
		}
		if maxInst != 5000 || minInst < 5000-ring {
			t.Errorf("host slices of instances %d to %d, want the newest, up to 5000", minInst, maxInst)
		}
	})
	for _, tt := range []struct {
		mode string
		sig  os.Signal
	}{
		{"flight-api", nil},
		{"usr1", syscall.SIGUSR1},
		{"quit", syscall.SIGQUIT},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "flight.json")
			if tt.sig == syscall.SIGUSR1 {
				runUSR1(t, path)
			} else {
				runCrashChild(t, tt.mode, "flight:"+path+",device=all", tt.sig)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// A dump is JSON that loads as it is.
			var evs []jsonEvent
			if err := json.Unmarshal(data, &evs); err != nil {
				t.Fatalf("dump does not parse: %v", err)
			}
			got, flows := childSlices(t, evs)
			if len(got[catHost]) != crashCalls || len(got[catDevice]) != crashCalls || flows != 2*(crashCalls-1) {
				t.Errorf("dump has %d host and %d device slices and %d flows, want %d, %d, %d",
					len(got[catHost]), len(got[catDevice]), flows, crashCalls, crashCalls, 2*(crashCalls-1))
			}
		})
	}
}

// runUSR1 starts a flight-recording child, sends it SIGUSR1, waits for the
// dump and kills it.
func runUSR1(t *testing.T, path string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=usr1", EnvVar+"=flight:"+path+",device=all")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	buf := make([]byte, 64)
	if n, err := out.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "ready") {
		t.Fatalf("child not ready: %q, %v", buf[:n], err)
	}
	cmd.Process.Signal(syscall.SIGUSR1)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 && data[0] == '[' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no dump 20 s after SIGUSR1")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConcurrentWriters writes from many goroutines at once, on queues of
// their own and on a shared one, to a perfetto file and a flight recorder
// whose ring is dumped meanwhile: every slice is in the perfetto file.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.json")
	tr, err := Open("perfetto:"+path+",flight:"+filepath.Join(dir, "flight")+",size=64K", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := tr.Device(0, "gpu0")
	shared := d.Queue(0, "shared", true)
	host := tr.Device(1, "host") // memory events only, no queue
	const goroutines, pairs = 8, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := d.Queue(1+g, fmt.Sprintf("own%d", g), false)
			for i := range pairs {
				q := own
				if i%2 == 0 {
					q = shared
				}
				tk := q.Begin(Kernel, "k", 0)
				tk.End()
				md := d
				if g%2 == 1 {
					md = host
				}
				md.MemAlloc(Mem{Tag: uint64(g), TagName: fmt.Sprintf("tag%d", g%3), Size: 64})
			}
		}()
	}
	var dumps bytes.Buffer
	for range 3 {
		dumps.Reset()
		if _, err := tr.FlightRecorder().WriteTo(&dumps); err != nil {
			t.Fatal(err)
		}
		var evs []jsonEvent
		if err := json.Unmarshal(dumps.Bytes(), &evs); err != nil {
			t.Fatalf("dump while writing does not parse: %v", err)
		}
	}
	wg.Wait()
	// The flight recorder, the second file, defines the queues and the
	// devices for itself: its newest slice and the newest memory events of
	// both devices are whole.
	shared.Begin(Kernel, "k", 0).EndRelease()
	d.MemAlloc(Mem{Tag: 1, TagName: "last", Size: 64})
	host.MemAlloc(Mem{Tag: 1, TagName: "last", Size: 64})
	dumps.Reset()
	if _, err := tr.FlightRecorder().WriteTo(&dumps); err != nil {
		t.Fatal(err)
	}
	var ring []jsonEvent
	if err := json.Unmarshal(dumps.Bytes(), &ring); err != nil {
		t.Fatal(err)
	}
	tids := map[int]int{}
	for _, e := range ring {
		if e.Ph == "i" && e.Cat == catMem {
			tids[e.Tid]++
		}
	}
	if n, _ := countKinds(ring); n == 0 || tids[memTidBase+d.Seq] == 0 || tids[memTidBase+host.Seq] == 0 {
		t.Errorf("flight recorder: %d slices, memory events by track %v; want slices and events on both devices", n, tids)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n, mem := countKinds(readJSON(t, path)); n != goroutines*pairs+1 || mem != goroutines*pairs+2 {
		t.Errorf("%d slices and %d memory events, want %d and %d", n, mem, goroutines*pairs+1, goroutines*pairs+2)
	}
}

// countKinds counts the host slices of command "k" and the memory events
// in evs.
func countKinds(evs []jsonEvent) (n, mem int) {
	for _, e := range evs {
		switch {
		case e.Ph == "X" && e.Name == "k":
			n++
		case e.Ph == "i" && e.Cat == catMem:
			mem++
		}
	}
	return n, mem
}

// TestNewFlightRecorder subscribes a flight recorder made from Go: its
// ring keeps the newest events, WriteTo writes them, Close dumps them to
// its path and stops it.
func TestNewFlightRecorder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flight.json")
	fr, err := NewFlightRecorder(FlightRecorderConfig{Path: path, MaxBytes: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	tr := New()
	tr.Subscribe(fr)
	q := tr.Device(0, "gpu0").Queue(0, "q0", false)
	for range 5000 {
		tk := q.Begin(Kernel, "k", 0)
		tk.End()
	}
	var buf bytes.Buffer
	if _, err := fr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var evs []jsonEvent
	if err := json.Unmarshal(buf.Bytes(), &evs); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Ph == "X" && e.Name == "k" {
			n++
		}
	}
	// 100 KiB holds 1024 slots (the largest power of two that fits): the
	// newest 1024 slices.
	if n != 1024 {
		t.Errorf("%d slices in the ring, want 1024", n)
	}
	if err := fr.Close(); err != nil || fr.Enabled() {
		t.Fatalf("Close() = %v, Enabled() = %v", err, fr.Enabled())
	}
	tk := q.Begin(Kernel, "k", 0) // after Close: ignored
	tk.End()
	if got := readJSON(t, path); len(got) < n {
		t.Errorf("dump at Close has %d events, want at least %d", len(got), n)
	}
	if _, err := fr.WriteTo(&buf); err == nil {
		t.Error("WriteTo after Close succeeded")
	}
}
