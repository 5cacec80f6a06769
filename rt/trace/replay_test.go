package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recorder keeps a line per event of the kinds that Replay rebuilds from
// JSON too.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Wants(k Kind) bool {
	return k == TaskEnd || k == TaskComplete || k == MemAlloc || k == MemRelease
}

func (r *recorder) HandleEvent(e Event) {
	var s string
	switch e.Kind {
	case TaskEnd, TaskComplete:
		tk := &e.Task
		n := tk.Node
		s = fmt.Sprintf("%v task %d #%d %v %s %s:%d queue %d %q on %d %q host %d-%d",
			e.Kind, tk.ID, tk.Instance, n.Kind, n.Name, n.Func, n.Line, tk.Queue.Seq, tk.Queue.Name,
			tk.Queue.Device.Seq, tk.Queue.Device.Name, tk.HostBegin, tk.HostEnd)
		if e.Kind == TaskComplete {
			// A record carries the host times too; JSON's device slice
			// does not.
			s = fmt.Sprintf("%v task %d %s device %d-%d", e.Kind, tk.ID, n.Name, tk.DevStart, tk.DevEnd)
		}
	case MemAlloc, MemRelease:
		s = fmt.Sprintf("%v %d %q %d pooled %v on %d %q at %d", e.Kind, e.Mem.Tag, e.Mem.TagName, e.Mem.Size, e.Mem.Pooled, e.Device.Seq, e.Device.Name, e.Time)
	}
	r.mu.Lock()
	r.lines = append(r.lines, s)
	r.mu.Unlock()
}

func (r *recorder) sorted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.lines))
}

// TestReplay replays a trace file, as records while its Tracer is open
// and as JSON once it is closed, and finds the events that a subscriber
// received.
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace")
	tr, err := Open("perfetto:"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var live recorder
	tr.Subscribe(&live)
	workload(tr, 5)
	records, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	json, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := live.sorted()
	if len(want) == 0 {
		t.Fatal("the workload traced nothing")
	}
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"records", records},
		{"json", json},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got recorder
			dropped, err := Replay(tt.data, &got)
			if err != nil || dropped != 0 {
				t.Fatalf("Replay = %d dropped, %v", dropped, err)
			}
			if g := got.sorted(); !slices.Equal(g, want) {
				t.Errorf("replayed:\n%s\nreceived:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestReplayBadInput(t *testing.T) {
	for _, data := range []string{"", "nonsense", `[{"ph":"X","cat":"host","args":{"node":"zz"}}]`} {
		if _, err := Replay([]byte(data), new(recorder)); err == nil || !strings.HasPrefix(err.Error(), "trace: replay: ") {
			t.Errorf("Replay(%q) = %v, want an error", data, err)
		}
	}
	if _, err := Replay([]byte("[]"), nil); err == nil {
		t.Error("Replay with a nil subscriber succeeded")
	}
}
