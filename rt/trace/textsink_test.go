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

// TestTextSinkRotated renames away or removes the file of the log and
// summary subscribers (log:PATH, summary:PATH) while the program runs, as
// logrotate (create) and a cleanup do: what they write after is at PATH,
// with one warning. They used to go on writing to the renamed or removed
// file, without a word: the log's lines after a rotation, and the whole
// summary, were lost.
func TestTextSinkRotated(t *testing.T) {
	defer func(d time.Duration) { watchEvery = d }(watchEvery)
	watchEvery = 10 * time.Millisecond
	acts := map[string]func(string) error{
		"rotate": func(p string) error {
			if err := os.Rename(p, p+".1"); err != nil {
				return err
			}
			return os.WriteFile(p, nil, 0o644) // logrotate's create
		},
		"rename": func(p string) error { return os.Rename(p, p+".1") },
		"remove": os.Remove,
	}
	for _, sink := range []string{"log", "summary"} {
		for act, do := range acts {
			t.Run(sink+"/"+act, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), sink+".txt")
				var log bytes.Buffer
				tr, err := OpenWith(sink+":"+path, OpenConfig{Logger: stdslog.New(stdslog.NewTextHandler(&log, nil))})
				if err != nil {
					t.Fatal(err)
				}
				q := tr.Device(0, "gpu0").Queue(0, "q0", true)
				q.Begin(Kernel, "before", 0).EndRelease()
				if err := do(path); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
				for range 3 {
					q.Begin(Kernel, "after", 0).EndRelease()
					time.Sleep(20 * time.Millisecond)
				}
				if err := tr.Close(); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("nothing at %s after Close: %v", path, err)
				}
				if !strings.Contains(string(data), "after") {
					t.Errorf("%s lacks what was written after the %s:\n%s", path, act, data)
				}
				if n := strings.Count(log.String(), "level=WARN"); n != 1 {
					t.Errorf("%d warnings, want 1:\n%s", n, log.String())
				}
			})
		}
	}
}
