package trace

import (
	"bytes"
	stdslog "log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRelativePathChdir opens trace files by relative paths and changes
// the working directory while they record: the files stay where they were
// opened. The watcher used to look for them in the new working directory,
// warn that they were moved away, and start the trace again there; Close
// wrote the JSON there too, and the file at the path the operator gave
// kept only the records of before the chdir.
func TestRelativePathChdir(t *testing.T) {
	defer func(d time.Duration) { watchEvery = d }(watchEvery)
	watchEvery = 10 * time.Millisecond
	for _, item := range []string{"perfetto:t.json", "flight:f.json,size=64K"} {
		t.Run(strings.Split(item, ":")[0], func(t *testing.T) {
			first, second := t.TempDir(), t.TempDir()
			t.Chdir(first)
			name := strings.TrimSuffix(strings.Split(item, ":")[1], ",size=64K")
			var log bytes.Buffer
			tr, err := OpenWith(item, OpenConfig{Logger: stdslog.New(stdslog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			q := tr.Device(0, "gpu0").Queue(0, "q0", true)
			for range 10 {
				q.Begin(Kernel, "before", 0).EndRelease()
			}
			t.Chdir(second)
			time.Sleep(100 * time.Millisecond) // several looks of the watcher
			for range 10 {
				q.Begin(Kernel, "after", 0).EndRelease()
			}
			if err := tr.Close(); err != nil {
				t.Fatal(err)
			}
			if log.Len() != 0 {
				t.Errorf("warnings after a chdir, nothing done to the file:\n%s", log.String())
			}
			if _, err := os.Stat(filepath.Join(second, name)); err == nil {
				t.Errorf("a trace file was made in the new working directory")
			}
			evs := readJSON(t, filepath.Join(first, name))
			if b, a := countSlices(evs, "before"), countSlices(evs, "after"); b != 10 || a != 10 {
				t.Errorf("%s: %d slices before the chdir and %d after, want 10 and 10", name, b, a)
			}
		})
	}
}
