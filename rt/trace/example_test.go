package trace_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dgen-go/dgen/rt/trace"
)

// The runtime opens a Tracer per context from DGEN_TRACE and calls the
// trace points at every enqueue.
func Example() {
	dir, _ := os.MkdirTemp("", "trace")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trace.json")
	tr, err := trace.Open("perfetto:"+path+",summary", os.Stdout)
	if err != nil {
		fmt.Println(err)
		return
	}
	dev := tr.Device(0, "gpu0")
	dev.SyncClock(tr.Now(), 5_000_000) // host time, device time of the same instant
	q := dev.Queue(0, "default", true)

	var prev *trace.Task // nil: no task yet; nil when tracing is off
	for i := 0; i < 3; i++ {
		tk := q.Begin(trace.Kernel, "hotspot_step", 0) // 0: this function's line
		tk.DependsOn(prev)                             // an explicit wait-list entry
		// ... the OpenCL enqueue ...
		tk.End()
		tk.Complete(5_000_000+int64(i)*1000, 5_000_000+int64(i)*1000+800) // profiling times
		// The previous task is no longer needed: back to the Tracer's pool.
		prev.Release()
		prev = tk
	}
	prev.Release()
	if err := tr.Close(); err != nil { // writes the file, prints the summary
		fmt.Println(err)
	}
	_, err = trace.ReadSummary(path)
	fmt.Println(err)
}

// Ranges name parts of a program on the host track, with the commands
// enqueued inside them nested under them; marks name instants. A Recorder
// shows the events, which a range emits when it ends.
func ExampleTracer_Range() {
	tr := trace.New()
	rec := &trace.Recorder{}
	tr.Subscribe(rec)
	q := tr.Device(0, "gpu0").Queue(0, "default", true)

	solve := tr.Range("solve")
	for i := 0; i < 2; i++ {
		step := tr.Range("step")
		tk := q.Begin(trace.Kernel, "hotspot_step", 0)
		tk.End()
		step.End()
	}
	tr.Mark("converged")
	solve.End()

	for _, e := range rec.Events() {
		if e.Kind == trace.UserRange || e.Kind == trace.UserMark {
			fmt.Println(e.Kind, e.Name)
		}
	}
	// Output:
	// range step
	// range step
	// mark converged
	// range solve
}
