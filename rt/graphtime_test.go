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
// where the backend times the launch as a whole, else on its commands'.
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
			whole := core.GraphNative(cg(g))[0] // a command buffer times the launch as a whole
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
			t.Logf("prepared natively %v: %d launches in %v", whole, launches, wall)
			checkGraphRows(t, "summary", sum.Rows(), launches, whole, wall)
			if err := ctx.Close(); err != nil {
				t.Fatal(err)
			}
			fs, err := trace.ReadSummary(file)
			if err != nil {
				t.Fatal(err)
			}
			checkGraphRows(t, "perfetto file", fs.Rows(), launches, whole, wall)
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
// launch, on that row where whole is set, else on its kernels' rows, that
// add up to at least half of wall.
func checkGraphRows(t *testing.T, what string, rows []trace.Row, launches int, whole bool, wall time.Duration) {
	t.Helper()
	var graphs []trace.Row
	var dev time.Duration
	for _, r := range rows {
		switch {
		case r.Kind == trace.Graph.String():
			graphs = append(graphs, r)
		case r.Kind != trace.Kernel.String() || !strings.HasSuffix(r.File, "graphtime_test.go"):
			continue
		case whole && r.DeviceCount != 0 || !whole && r.DeviceCount != int64(launches):
			t.Errorf("%s: kernel %s at line %d: %d device times for %d launches (timed as a whole: %v)", what, r.Name, r.Line, r.DeviceCount, launches, whole)
		}
		dev += time.Duration(r.DeviceTotal)
	}
	if len(graphs) != 1 {
		t.Fatalf("%s: %d rows of kind graph, want 1", what, len(graphs))
	}
	if r := graphs[0]; r.Count != int64(launches) || whole && r.DeviceCount != int64(launches) || !whole && r.DeviceCount != 0 {
		t.Errorf("%s: %d graph spans, %d with device times, for %d launches (timed as a whole: %v)", what, r.Count, r.DeviceCount, launches, whole)
	}
	if dev < wall/2 || dev > wall*11/10 {
		t.Errorf("%s: the launches took %v on the device, %v from Finish to Finish", what, dev, wall)
	} else {
		t.Logf("%s: the launches took %v on the device, %v from Finish to Finish", what, dev, wall)
	}
}
