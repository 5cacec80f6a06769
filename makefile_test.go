package dgen_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	_ "github.com/dgen-go/dgen/rt/opencl" // for testenv.RequireDevice
)

// TestMakeDemo runs make run-demo, what make demo runs after deps, and
// reads its output as it comes: before anything is compiled (a minute or two
// on a first run, silent before), its first line must say what is being
// built and why it takes time, and each example must be announced before it
// runs and verify its results. It installs nothing: go test never runs
// deps, which installs packages as root (TestOnlyDepsInstalls).
func TestMakeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the examples")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	testenv.RequireDevice(t)
	cmd := exec.Command("make", "--no-print-directory", "run-demo", "DEMO_BIN="+filepath.Join(t.TempDir(), "bin"))
	cmd.Env = makeEnv()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	var lines []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if len(lines) == 0 {
			t.Logf("first line after %v: %s", time.Since(start).Round(time.Millisecond), sc.Text())
		}
		lines = append(lines, sc.Text())
	}
	if err := <-done; err != nil {
		t.Fatalf("make demo: %v\n%s", err, strings.Join(lines, "\n"))
	}
	out := strings.Join(lines, "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "demo: building the examples") || !strings.Contains(lines[0], "first run") {
		t.Errorf("make demo's first line does not say what it builds and that a first run takes time:\n%s", out)
	}
	last := -1
	for _, ex := range []struct{ name, says string }{
		{"quickstart", "verified against Go"},
		{"rawquickstart", "verified against Go"},
		{"devglobal", "seen by report and the host"},
		{"stencil", "Hotspot 256x256"},
		{"kmeans", "verified against Go"},
	} {
		at := strings.Index(out, "demo: "+ex.name+":")
		if at < 0 || at < last {
			t.Errorf("make demo does not announce %s (in order) before running it:\n%s", ex.name, out)
			continue
		}
		last = at
		if !strings.Contains(out[at:], ex.says) {
			t.Errorf("after announcing %s, make demo does not show it running (%q):\n%s", ex.name, ex.says, out)
		}
	}
}

// makeEnv is the environment without the variables of a make that may be
// running go test, which would pass its flags (-n, -j) to ours.
func makeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			env = append(env, kv)
		}
	}
	return env
}

// TestOnlyDepsInstalls reads what make would run (make -n): deps installs
// packages (scripts/deps.sh, apt-get as root), demo and test run it first,
// and run-demo, which TestMakeDemo runs under go test, does not.
func TestOnlyDepsInstalls(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	for _, tt := range []struct {
		target   string
		installs bool
	}{
		{"deps", true},
		{"demo", true},
		{"test", true},
		{"run-demo", false},
	} {
		t.Run(tt.target, func(t *testing.T) {
			cmd := exec.Command("make", "-n", "--no-print-directory", tt.target)
			cmd.Env = makeEnv()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make -n %s: %v\n%s", tt.target, err, out)
			}
			if got := strings.Contains(string(out), "scripts/deps.sh"); got != tt.installs {
				t.Errorf("make -n %s runs scripts/deps.sh: %v, want %v:\n%s", tt.target, got, tt.installs, out)
			}
		})
	}
}
