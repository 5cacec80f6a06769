package rt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
	"github.com/dgen-go/dgen/rt/raw"
	"github.com/dgen-go/dgen/rt/trace"
)

// TestGraphLaunchTimes launches a graph of two kernels of a few
// milliseconds N times under DGEN_TRACE=perfetto:FILE,device=all, as a
// command buffer where the device has one and as a loop of prepared
// commands, and checks what the trace shows, in a summary subscribed to
// the tracer and in the Perfetto file read back: one span of kind graph
// per launch, and device times that account for the kernels' time (at
// least half the host's time from Finish to Finish), on the graph's span
// where the backend times the launch as a whole (PoCL's command buffer),
// else on its commands' (the loop; CUDA with CUPTI).
// PoCL's command buffer used to report a fraction of a microsecond per
// launch, and a launch drew a user range beside its task.
func TestGraphLaunchTimes(t *testing.T) {
	const launches = 6
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			file := filepath.Join(t.TempDir(), "trace.json")
			ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Device: testDevice(), Trace: "perfetto:" + file + ",device=all"}))
			if err != nil {
				testenv.SkipWithoutDevice(t, err)
				t.Fatal(err)
			}
			defer ctx.Close()
			var sum trace.Summary
			ctx.Tracer().Subscribe(&sum)
			q := ctx.Queue()
			k := spinKernel(t, ctx, 4*time.Millisecond)
			g, err := q.Record("spin", func(q *rt.Queue) error {
				if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
					return err
				}
				return raw.Submit(q, k, rt.Range1(1))
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			native := core.GraphNative(cg(g))[0]
			if err := q.Finish(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for range launches {
				if err := g.Launch(q); err != nil {
					t.Fatal(err)
				}
			}
			if err := q.Finish(); err != nil {
				t.Fatal(err)
			}
			wall := time.Since(start)
			t.Logf("prepared natively %v: %d launches in %v", native, launches, wall)
			whole := checkGraphRows(t, "summary", sum.Rows(), launches, wall)
			if pocl := strings.Contains(ctx.Devices()[0].Platform, "Portable Computing Language"); pocl && whole != native {
				t.Errorf("prepared natively %v, timed as a whole %v: PoCL's command buffer times the launch as a whole, the loop its commands", native, whole)
			}
			if err := ctx.Close(); err != nil {
				t.Fatal(err)
			}
			fs, err := trace.ReadSummary(file)
			if err != nil {
				t.Fatal(err)
			}
			if checkGraphRows(t, "perfetto file", fs.Rows(), launches, wall) != whole {
				t.Error("the perfetto file times the launches otherwise than the summary")
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var events []traceFileEvent
			if err := json.Unmarshal(data, &events); err != nil {
				t.Fatal(err)
			}
			slices := map[string]int{}
			for _, e := range events {
				if e.Ph == "X" && e.Name == "graph spin" {
					slices[e.Cat]++
				}
			}
			want := map[string]int{"host": launches}
			if whole {
				want["device"] = launches
			}
			if len(slices) != len(want) || slices["host"] != want["host"] || slices["device"] != want["device"] {
				t.Errorf("perfetto file: slices named after the graph by category %v, want %v", slices, want)
			}
		})
	}
}

// checkGraphRows checks the summary rows of a test's graph launches: one
// row of kind graph with a task per launch, and device times for each
// launch, on that row (whole) or on its kernels' rows, that add up to at
// least half of wall. It returns whole.
func checkGraphRows(t *testing.T, what string, rows []trace.Row, launches int, wall time.Duration) (whole bool) {
	t.Helper()
	var graphs, kernels []trace.Row
	var dev time.Duration
	for _, r := range rows {
		switch {
		case r.Kind == trace.Graph.String():
			graphs = append(graphs, r)
		case r.Kind == trace.Kernel.String() && strings.HasSuffix(r.File, "graphtime_test.go"):
			kernels = append(kernels, r)
		default:
			continue
		}
		dev += time.Duration(r.DeviceTotal)
	}
	if len(graphs) != 1 || len(kernels) != 2 {
		t.Fatalf("%s: %d rows of kind graph and %d of its kernels, want 1 and 2", what, len(graphs), len(kernels))
	}
	g := graphs[0]
	whole = g.DeviceCount > 0
	if g.Count != int64(launches) || whole && g.DeviceCount != int64(launches) {
		t.Errorf("%s: %d graph spans, %d with device times, for %d launches", what, g.Count, g.DeviceCount, launches)
	}
	for _, k := range kernels {
		if whole && k.DeviceCount != 0 || !whole && k.DeviceCount != int64(launches) {
			t.Errorf("%s: kernel at line %d: %d device times for %d launches, the graph's span %d", what, k.Line, k.DeviceCount, launches, g.DeviceCount)
		}
	}
	if dev < wall/2 || dev > wall*11/10 {
		t.Errorf("%s: the launches took %v on the device, %v from Finish to Finish", what, dev, wall)
	} else {
		t.Logf("%s: the launches took %v on the device, %v from Finish to Finish (timed as a whole: %v)", what, dev, wall, whole)
	}
	return whole
}
