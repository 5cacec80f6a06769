package diskcache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test if it takes longer than d: a hang is a
// failure, not a stuck test binary.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// TestHostileFiles puts files of every shape where the cache expects its
// own: each is a miss (never a hang, a crash or a corrupt binary), the key
// is cacheable again afterwards, no orphan is left, and ls, stat and
// verify finish.
func TestHostileFiles(t *testing.T) {
	setHeaderSize := func(p string, n uint64) error {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], n)
		_, err = f.WriteAt(b[:], 16)
		return err
	}
	replaceDir := func(p string) error {
		if err := os.Remove(p); err != nil {
			return err
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p, "inside"), []byte("x"), 0o644)
	}
	replaceFIFO := func(p string) error {
		if err := os.Remove(p); err != nil {
			return err
		}
		return mkfifo(t, p)
	}
	cases := []struct {
		name    string
		file    string // in the key directory
		mutate  func(p string) error
		wantErr string // what Get says, if it says something specific
	}{
		{"sparse 30 GB binary", "0.bin", func(p string) error { return os.Truncate(p, 30<<30) }, "larger than its header says"},
		{"header claims 30 GB", "0.bin", func(p string) error { return setHeaderSize(p, 30<<30) }, "exceeds the maximum"},
		{"header claims less than the file", "0.bin", func(p string) error { return setHeaderSize(p, 100) }, "larger than its header says"},
		{"FIFO as .src", "0.src", replaceFIFO, ""},
		{"FIFO as .bin", "0.bin", replaceFIFO, ""},
		{"FIFO as lock", "lock", replaceFIFO, ""},
		{"directory as .bin", "0.bin", replaceDir, ""},
		{"directory as .src", "0.src", replaceDir, ""},
		{"directory as lock", "lock", replaceDir, ""},
		{"dangling .src link", "0.src", func(p string) error {
			os.Remove(p)
			return os.Symlink(filepath.Join(filepath.Dir(p), "nowhere"), p)
		}, ""},
		{".bin link to another file", "0.bin", func(p string) error {
			other := filepath.Join(t.TempDir(), "other")
			b, _ := os.ReadFile(p)
			os.WriteFile(other, b, 0o644)
			os.Remove(p)
			return os.Symlink(other, p)
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := openTest(t, t.TempDir(), func(cfg *Config) { cfg.LockTimeout = 2 * time.Second }, nil)
			k := testKey(1)
			want := payload(k, 64<<10)
			if err := c.Put(k, want); err != nil {
				t.Fatal(err)
			}
			if err := tc.mutate(filepath.Join(c.keyDir(&k), tc.file)); err != nil {
				t.Fatal(err)
			}
			within(t, 10*time.Second, "ls, stat and verify", func() {
				c.List()
				c.Stat()
				c.Verify(false)
			})
			within(t, 10*time.Second, "Get", func() {
				got, ok, err := c.Get(k)
				if ok && !bytes.Equal(got, want) {
					t.Errorf("Get returned a wrong binary")
				}
				if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("Get: %v; want an error saying %q", err, tc.wantErr)
				}
			})
			within(t, 10*time.Second, "GetOrBuild", func() {
				got, _, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { return want, nil })
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("GetOrBuild: %v", err)
				}
			})
			if got, ok, err := c.Get(k); !ok || !bytes.Equal(got, want) {
				t.Errorf("after rebuild: Get ok %v, err %v; want the binary back in the cache", ok, err)
			}
			ents, _ := os.ReadDir(c.keyDir(&k))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			if got := strings.Join(names, " "); got != "0.bin 0.src lock" {
				t.Errorf("key directory holds %q; want 0.bin 0.src lock", got)
			}
		})
	}
}

// TestLockTimeout: a key held by a process that stopped costs
// DGEN_CACHE_LOCK_TIMEOUT, not minutes, and the trace says so.
func TestLockTimeout(t *testing.T) {
	cfg := DefaultConfig(t.TempDir())
	cfg.LockTimeout = 300 * time.Millisecond
	var trace bytes.Buffer
	cfg.Trace = &trace
	c, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := testKey(2)
	os.MkdirAll(c.keyDir(&k), 0o755)
	held, err := lockFile(nil, filepath.Join(c.keyDir(&k), keyLockName), true) // as a stopped process would
	if err != nil {
		t.Fatal(err)
	}
	defer held.unlock()
	t0 := time.Now()
	_, outcome, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { return []byte("b"), nil })
	if err != nil || outcome != Built {
		t.Fatalf("GetOrBuild: %v, %v", outcome, err)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("took %v with a 300ms lock timeout", d)
	}
	if !strings.Contains(trace.String(), "DGEN_CACHE_LOCK_TIMEOUT") {
		t.Errorf("trace does not say that the wait expired:\n%s", trace.String())
	}
}

// TestRootNotOurs: the cache writes only inside a directory it created or
// marked; a directory with the user's files is refused untouched.
func TestRootNotOurs(t *testing.T) {
	user := t.TempDir()
	os.WriteFile(filepath.Join(user, "size"), []byte("my file\n"), 0o644)
	c, err := Open(DefaultConfig(user))
	if !errors.Is(err, ErrUnavailable) || c.Enabled() || !strings.Contains(err.Error(), "not a dgen cache directory") {
		t.Fatalf("open of a user's directory: %v", err)
	}
	c.Put(testKey(1), []byte("x"))
	ents, _ := os.ReadDir(user)
	if b, _ := os.ReadFile(filepath.Join(user, "size")); len(ents) != 1 || string(b) != "my file\n" {
		t.Errorf("the user's directory changed: %d entries, size %q", len(ents), b)
	}
	for _, tc := range []struct {
		name  string
		setup func(dir string)
	}{
		{"new", func(dir string) { os.Remove(dir) }},
		{"empty", func(string) {}},
		{"unmarked cache of an older version", func(dir string) {
			os.WriteFile(filepath.Join(dir, "size"), []byte("0\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "tree.lock"), nil, 0o644)
			os.Mkdir(filepath.Join(dir, "0123456789abcdef"), 0o755)
		}},
	} {
		dir := t.TempDir()
		tc.setup(dir)
		c, err := Open(DefaultConfig(dir))
		if err != nil || !c.Enabled() || !marked(dir) {
			t.Errorf("%s: open %v, enabled %v, marked %v", tc.name, err, c.Enabled(), marked(dir))
		}
	}
}

// TestRootSymlink: a root that is a symbolic link to a directory is used
// as that directory, as ccache, GOCACHE and sccache follow it; a link to
// nothing, or to a file, is refused with a message that says so.
func TestRootSymlink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	c, err := Open(DefaultConfig(link))
	if err != nil || !c.Enabled() {
		t.Fatalf("open through a link to a directory: %v, enabled %v", err, c.Enabled())
	}
	if err := c.Put(testKey(1), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if !marked(real) {
		t.Error("the directory the link points to is not marked as the cache's")
	}
	dangling := filepath.Join(base, "dangling")
	os.Symlink(filepath.Join(base, "missing"), dangling)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	toFile := filepath.Join(base, "tofile")
	os.Symlink(file, toFile)
	for dir, want := range map[string]string{dangling: "which does not exist", toFile: "not a directory"} {
		c, err := Open(DefaultConfig(dir))
		if !errors.Is(err, ErrUnavailable) || c.Enabled() || !strings.Contains(err.Error(), want) {
			t.Errorf("open through %s: %v, want ErrUnavailable saying %q", dir, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "missing")); err == nil {
		t.Error("the target of a dangling link was created")
	}
}

// TestFullDisk fills a real, small file system (a tmpfs, which needs root):
// the cache turns itself off with one warning and leaks no temporary file.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	defer exec.Command("umount", dir).Run()
	var warn bytes.Buffer
	c := openTest(t, filepath.Join(dir, "cache"), func(cfg *Config) { cfg.Logger = slog.New(slog.NewTextHandler(&warn, nil)) }, nil)
	defer c.Close() // before the umount
	var perr error
	for i := 0; i < 20 && perr == nil; i++ {
		k := testKey(i)
		perr = c.Put(k, payload(k, 40<<10))
	}
	if !errors.Is(perr, ErrUnavailable) || !errors.Is(perr, syscall.ENOSPC) || c.Enabled() {
		t.Fatalf("Put on a full disk: %v (enabled %v); want ErrUnavailable wrapping ENOSPC", perr, c.Enabled())
	}
	for i := 0; i < 3; i++ {
		k := testKey(100 + i)
		if _, _, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { return payload(k, 40<<10), nil }); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings; want 1:\n%s", n, warn.String())
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), tempPrefix) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestCrashDuringLoad: processes that die while they load a binary into the
// driver. After one death the binary is dropped and rebuilt; after a second
// death of the same binary it is quarantined: never returned or stored again.
func TestCrashDuringLoad(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, nil, nil)
	k := testKey(3)
	bad := payload(k, 8<<10)
	for death := 1; death <= 2; death++ {
		if err := c.Put(k, bad); err != nil {
			t.Fatal(err)
		}
		cmd := helperCmd("crashload", "DC_DIR="+dir, "DC_KEY=3")
		if err := cmd.Run(); err == nil {
			t.Fatalf("death %d: helper did not die", death)
		}
		if _, ok, _ := c.Get(k); ok {
			t.Fatalf("death %d: the binary a process died loading was returned", death)
		}
	}
	if err := c.Put(k, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(c.keyDir(&k), "0.bin")); err == nil {
		t.Fatal("a quarantined binary was stored again")
	}
	good := payload(k, 9<<10)
	if err := c.Put(k, good); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := c.Get(k); !ok || !bytes.Equal(got, good) {
		t.Fatal("another binary of the key is not cached")
	}
	// A load that returns leaves no marker and drops nothing.
	c.Loading(k, good)()
	if _, ok, _ := c.Get(k); !ok {
		t.Fatal("a completed load dropped the binary")
	}
}
