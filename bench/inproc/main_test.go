package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestRun runs every family on the CPU device (PoCL), with few steps, and
// checks that every way of every round printed its block and that the end
// printed a ratio to the family's first way (C, or plain) for every other
// way. Three rounds run the ways in
// both orders: a way that depends on what another left behind fails.
func TestRun(t *testing.T) {
	const source = "../../examples/stencil/hotspot.cl"
	if _, err := os.Stat(source); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no Hotspot source beside the test binary (a gpu-bundle): %v", err)
	}
	t.Setenv("RAWCL_DEVICE", "cpu")
	t.Setenv("DGEN_DEVICE", "cpu")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	err = run("opencl", source, 32, 4, 3)
	os.Stdout = stdout
	w.Close()
	out := <-done
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	blocks := map[string]int{}
	var ratios []string
	for _, line := range bytes.Split(out, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("{")) {
			var b struct {
				Family, Way string
				NS          float64 `json:"ns_per_step"`
				Host        float64 `json:"enq_ns_per_step"`
			}
			if err := json.Unmarshal(line, &b); err != nil || b.NS <= 0 {
				t.Errorf("block %s: %v (%v ns)", line, err, b.NS)
			}
			name := b.Family + " " + b.Way
			// The ways that enqueue from Go time the host up to the final wait.
			if enqueues := slices.Contains([]string{"hotspot cgo", "hotspot floor", "hotspot swap", "hotspot tagged"}, name); enqueues != (b.Host > 0) || b.Host > b.NS {
				t.Errorf("block %s: host time %v ns of %v (want one, at most the block's, exactly for the ways that enqueue from Go)", line, b.Host, b.NS)
			}
			blocks[name]++
		} else if f := strings.Fields(string(line)); len(f) > 3 && f[2] == "/" {
			ratios = append(ratios, strings.Join(f[:2], " ")+" / "+strings.TrimSuffix(f[3], ":"))
		}
	}
	want := []string{"hotspot cgo / C", "hotspot floor / C", "hotspot swap / C", "hotspot tagged / C", "hotspot graph / C", "rw4 cgo / C", "rw4 global / C",
		"spec spec / plain", "spec spec-alt / plain"}
	for _, w := range []string{"hotspot C", "hotspot cgo", "hotspot floor", "hotspot swap", "hotspot tagged", "hotspot graph", "rw4 C", "rw4 cgo", "rw4 global", "spec plain", "spec spec", "spec spec-alt"} {
		if blocks[w] != 3 {
			t.Errorf("%s: %d blocks, want 3 (one a round)", w, blocks[w])
		}
	}
	if strings.Join(ratios, ",") != strings.Join(want, ",") {
		t.Errorf("ratios printed for %q, want %q", ratios, want)
	}
}
