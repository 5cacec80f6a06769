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
)

// TestMakeDemo runs make demo and reads its output as it comes: before
// anything is compiled (a minute or two on a first run, silent before),
// its first line must say what is being built and why it takes time, and
// each example must be announced before it runs and verify its results.
func TestMakeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the examples")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	cmd := exec.Command("make", "--no-print-directory", "demo", "DEMO_BIN="+filepath.Join(t.TempDir(), "bin"))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
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
		{"devglobal", "seen by report and the host"},
		{"stencil", "Hotspot 256x256"},
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
