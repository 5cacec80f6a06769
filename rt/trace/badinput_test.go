package trace

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenBadInput checks that a path that cannot be written, a size that
// does not parse and a disk too full for the file's first megabyte each
// give one clear error at Open.
func TestOpenBadInput(t *testing.T) {
	dir := t.TempDir()
	full := mountTmpfs(t, "512k")
	if full == "" {
		// No tmpfs here: a disk that is full from the start.
		full = t.TempDir()
		allocate = func(*os.File, int64) error { return syscall.ENOSPC }
		defer func() { allocate = allocateFile }()
	}
	tests := []struct {
		spec string
		want string
		is   error
	}{
		{"perfetto:/etc/passwd/trace.json", "not a directory", syscall.ENOTDIR},
		{"flight:/etc/passwd/flight", "not a directory", syscall.ENOTDIR},
		{"perfetto:" + dir, "is a directory", syscall.EISDIR},
		{"perfetto:" + filepath.Join(dir, "no", "dir", "t.json"), "no such file", syscall.ENOENT},
		{"flight:" + filepath.Join(dir, "f") + ",size=big", "want a byte count", nil},
		{"flight:" + filepath.Join(dir, "f") + ",size=16K", "want a byte count", nil},
		{"perfetto:" + filepath.Join(full, "t.json"), "no space left", syscall.ENOSPC},
		{"flight:" + filepath.Join(full, "f") + ",size=1M", "no space left", syscall.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			tr, err := Open(tt.spec, nil)
			if err == nil {
				tr.Close()
				t.Fatalf("Open(%q) succeeded", tt.spec)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "trace: ") {
				t.Errorf("Open(%q) = %v, want an error starting trace: and containing %q", tt.spec, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Open(%q) = %v, want it to wrap %v", tt.spec, err, tt.is)
			}
		})
	}
}

// mountTmpfs mounts a tmpfs of the given size for the test, or returns ""
// where it cannot.
func mountTmpfs(t *testing.T, size string) string {
	dir := t.TempDir()
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).Run(); err != nil {
		return ""
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// TestDiskFills runs the perfetto writer into a full disk: a small tmpfs,
// or where none can be mounted an injected ENOSPC. The events past the
// disk's end are dropped and counted in the file, the summary and Close's
// error; none of it blocks, and the file converts.
func TestDiskFills(t *testing.T) {
	dir := mountTmpfs(t, "1536k")
	if dir == "" {
		dir = t.TempDir()
		calls := 0
		allocate = func(f *os.File, size int64) error {
			if calls++; calls > 1 {
				return syscall.ENOSPC
			}
			return allocateFile(f, size)
		}
		defer func() { allocate = allocateFile }()
	}
	path := filepath.Join(dir, "trace.json")
	var sum bytes.Buffer
	tr, err := Open("perfetto:"+path+",summary", &sum)
	if err != nil {
		t.Fatal(err)
	}
	q := tr.Device(0, "gpu0").Queue(0, "q0", false)
	const n = 40_000 // 2.5 MB of records
	for range n {
		tk := q.Begin(Kernel, "k", 0)
		tk.End()
	}
	dropped := tr.Dropped()
	if dropped == 0 || dropped >= n {
		t.Fatalf("%d events dropped of %d, want some", dropped, n)
	}
	err = tr.Close()
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "events dropped") {
		t.Errorf("Close() = %v, want an error counting the dropped events and wrapping ENOSPC", err)
	}
	if want := "dropped: " + strconvU(dropped) + " events"; !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum.String())
	}
	// The file stays (as records if the JSON did not fit) and converts
	// elsewhere, with the count.
	out := filepath.Join(t.TempDir(), "trace.json")
	if err := ConvertFile(out, path); err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	rows := s.Rows()
	if s.Dropped != dropped || len(rows) != 1 || rows[0].Count+int64(dropped) != n {
		t.Errorf("converted file: %d dropped, rows %+v; want %d dropped and %d slices", s.Dropped, rows, dropped, n-int(dropped))
	}
}
