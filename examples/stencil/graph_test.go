package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
)

// TestGraphBitIdentical runs every mode with and without -graph's command
// graph, on grids that are not multiples of the tile, step counts with an
// odd launch and a short last one, and checks that the temperatures are
// the same bit for bit.
func TestGraphBitIdentical(t *testing.T) {
	ctx := openCPU(t)
	grids := []struct{ rows, cols, iters int }{{64, 64, 12}, {50, 70, 13}, {33, 17, 5}, {20, 20, 1}}
	for _, g := range grids {
		temp, power := Inputs(max(g.rows, g.cols), rand.Uint64())
		temp, power = temp[:g.rows*g.cols], power[:g.rows*g.cols]
		sim, err := NewSim(ctx, power, g.rows, g.cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, pyramid := range []int{1, 2, 3} {
			for _, mode := range Modes[:4] {
				t.Run(fmt.Sprintf("%dx%d/%d/pyramid%d/%s", g.rows, g.cols, g.iters, pyramid, mode), func(t *testing.T) {
					sim.Graph = false
					want, err := sim.Run(mode, temp, g.iters, pyramid)
					if err != nil {
						t.Fatal(err)
					}
					sim.Graph = true
					got, err := sim.Run(mode, temp, g.iters, pyramid)
					if err != nil {
						t.Fatal(err)
					}
					if got.Launches != want.Launches {
						t.Errorf("%d launches with the graph, %d without", got.Launches, want.Launches)
					}
					for i := range want.Temp {
						if got.Temp[i] != want.Temp[i] {
							t.Fatalf("cell %d: %v with the graph, %v without", i, got.Temp[i], want.Temp[i])
						}
					}
				})
			}
		}
		sim.Graph = false
		sim.Close()
	}
	if s := ctx.Stats().Alloc; s.Total().InUse != 0 {
		t.Errorf("%d bytes still in use after the runs: the graphs' scratch buffers leaked", s.Total().InUse)
	}
}

// TestGraphJSON runs the command as the benchmark script does, with -graph
// and -json, and checks that every mode reports "ok": true.
func TestGraphJSON(t *testing.T) {
	if os.Getenv("DGEN_STENCIL_CHILD") == "1" {
		os.Args = []string{"stencil", "-size", "96", "-iters", "9", "-graph", "-json"}
		main()
		os.Exit(0)
	}
	testenv.RequireDevice(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestGraphJSON$")
	cmd.Env = append(os.Environ(), "DGEN_STENCIL_CHILD=1", "DGEN_DEVICE=cpu", "DGEN_BACKEND=auto")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stencil -graph -json: %v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if !r.OK || r.Graph != (r.Mode != "raw") {
			t.Errorf("%s: ok %v graph %v", r.Mode, r.OK, r.Graph)
		}
		n++
	}
	if n != len(Modes) {
		t.Errorf("%d records, want %d:\n%s", n, len(Modes), out)
	}
}

// TestGraphUpdateGenerated records one time step through the generated
// Step.Enqueue and updates it through Step.Enqueue with the buffers
// swapped: the compiler checks the update's types as for any Enqueue.
// Two launches, the second after the update, equal two plain steps.
func TestGraphUpdateGenerated(t *testing.T) {
	ctx := openCPU(t)
	const n = 40
	temp, power := Inputs(n, rand.Uint64())
	sim, err := NewSim(ctx, power, n, n)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	want, err := sim.Run("swap", temp, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tempSite.Alloc(sim.q, n*n)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	b, err := tempSite.Alloc(sim.q, n*n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := a.Write(sim.q, temp); err != nil {
		t.Fatal(err)
	}
	l := loop{s: sim, pyramid: 1}
	p := sim.p
	st := Step{Iteration: 1, Power: sim.power, TempSrc: a, TempDst: b, Cols: n, Rows: n, BorderCols: 1, BorderRows: 1,
		Cap: p.Cap, Rx: p.Rx, Ry: p.Ry, Rz: p.Rz, Dt: p.Step}
	var step *rt.GraphNode
	g, err := sim.q.Record("one step", func(q *rt.Queue) error {
		var err error
		step, err = q.Node(func(q *rt.Queue) error { return st.Enqueue(q, l.grid()) })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if err := g.Launch(sim.q); err != nil {
		t.Fatal(err)
	}
	st.TempSrc, st.TempDst = b, a
	if err := g.Update(step, func(q *rt.Queue) error { return st.Enqueue(q, l.grid()) }); err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(sim.q); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n*n)
	if err := a.Read(sim.q, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != want.Temp[i] {
			t.Fatalf("cell %d: %v after the updated graph, %v after two steps", i, got[i], want.Temp[i])
		}
	}
}
