package diskcache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mustGet(t *testing.T, c *Cache, k Key) []byte {
	t.Helper()
	b, ok, err := c.Get(k)
	if err != nil || !ok {
		t.Fatalf("Get(%s): ok=%v err=%v", k.ImageID, ok, err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	var trace bytes.Buffer
	c := openTest(t, t.TempDir(), func(cfg *Config) { cfg.Trace = &trace }, nil)
	k := testKey(1)
	if _, ok, err := c.Get(k); ok || err != nil {
		t.Fatalf("Get on empty cache: ok=%v err=%v", ok, err)
	}
	want := payload(k, 4096)
	if err := c.Put(k, want); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, c, k); !bytes.Equal(got, want) {
		t.Fatal("wrong bytes")
	}
	// ProgramName is metadata: a key differing only there hits.
	k2 := k
	k2.ProgramName = "other"
	mustGet(t, c, k2)
	// Any identity field differing misses.
	for _, mut := range []func(*Key){
		func(k *Key) { k.Device.DriverVersion = "7" },
		func(k *Key) { k.ImageHash++ },
		func(k *Key) { k.SpecConsts = []byte{9} },
		func(k *Key) { k.Options = "" },
		func(k *Key) { k.ImageID += "x" },
	} {
		k3 := k
		mut(&k3)
		if _, ok, _ := c.Get(k3); ok {
			t.Errorf("hit for a different key %+v", k3)
		}
	}
	bin, out, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { t.Fatal("built"); return nil, nil })
	if err != nil || out != Hit || !bytes.Equal(bin, want) {
		t.Fatalf("GetOrBuild: %v %v", out, err)
	}
	for _, s := range []string{"miss", "store", "hit"} {
		if !strings.Contains(trace.String(), "diskcache: "+s) {
			t.Errorf("trace lacks %q:\n%s", s, trace.String())
		}
	}
}

func TestCollisionResolvedBySrc(t *testing.T) {
	dir := t.TempDir()
	c := openTest(t, dir, nil, func(c *Cache) { c.hash = func([]byte) uint64 { return 42 } })
	a, b := testKey(1), testKey(2)
	if c.keyDir(&a) != c.keyDir(&b) {
		t.Fatal("forced hash did not collide")
	}
	pa, pb := payload(a, 100), payload(b, 200)
	if err := c.Put(a, pa); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := c.Get(b); ok {
		t.Fatal("b hit before it was stored")
	}
	if err := c.Put(b, pb); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"0.src", "0.bin", "1.src", "1.bin"} {
		if _, err := os.Stat(filepath.Join(c.keyDir(&a), n)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(mustGet(t, c, a), pa) || !bytes.Equal(mustGet(t, c, b), pb) {
		t.Fatal("wrong bytes")
	}
	// Replacing b keeps slot 1.
	pb2 := payload(b, 300)
	if err := c.Put(b, pb2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustGet(t, c, b), pb2) {
		t.Fatal("b not replaced")
	}
	if _, err := os.Stat(filepath.Join(c.keyDir(&a), "2.src")); err == nil {
		t.Fatal("replacement took a new slot")
	}
	checkSize(t, c)
}

// checkSize checks that the size file matches the files on disk.
func checkSize(t *testing.T, c *Cache) {
	t.Helper()
	rec, ok := readSizeFile(filepath.Join(c.root, sizeFileName))
	entries, err := c.scan(false)
	if err != nil {
		t.Fatal(err)
	}
	if walked := sumSizes(entries); !ok || rec != walked {
		t.Fatalf("size file %d (ok=%v), files %d", rec, ok, walked)
	}
}

func TestCorruption(t *testing.T) {
	flip := func(off int) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, "0.bin")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if off < 0 {
				off = len(b) + off
			}
			b[off] ^= 0x10
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name    string
		corrupt func(t *testing.T, dir string)
	}{
		{"truncated bin", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "0.bin"), 1000); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated header", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "0.bin"), 20); err != nil {
				t.Fatal(err)
			}
		}},
		{"flipped payload byte", flip(-5)},
		{"flipped size byte", flip(17)},
		{"flipped magic", flip(0)},
		{"empty src", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "0.src"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing bin", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "0.bin")); err != nil {
				t.Fatal(err)
			}
		}},
		{"bin of another key", func(t *testing.T, dir string) {
			// A well-formed .bin whose key sum belongs to another key.
			other := testKey(99)
			b := payload(other, 100)
			h := makeHeader(kindBin, b, 12345)
			if err := os.WriteFile(filepath.Join(dir, "0.bin"), append(h, b...), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"unreadable bin", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "0.bin")
			if os.Geteuid() == 0 {
				// chmod does not stop root: make the path unreadable as a
				// file by putting a directory there.
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err := os.Chmod(p, 0); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := openTest(t, t.TempDir(), nil, nil)
			k := testKey(7)
			want := payload(k, 64<<10)
			if err := c.Put(k, want); err != nil {
				t.Fatal(err)
			}
			tc.corrupt(t, c.keyDir(&k))
			got, ok, err := c.Get(k)
			if ok || got != nil {
				t.Fatal("corrupt entry returned")
			}
			if err == nil || !errors.Is(err, ErrCorrupt) && !errors.Is(err, os.ErrPermission) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if !strings.HasPrefix(err.Error(), "diskcache: read entry "+c.keyDir(&k)) {
				t.Errorf("error does not name the path: %v", err)
			}
			builds := 0
			bin, out, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { builds++; return want, nil })
			if err != nil || out != Built || builds != 1 || !bytes.Equal(bin, want) {
				t.Fatalf("rebuild: out=%v builds=%d err=%v", out, builds, err)
			}
			if !bytes.Equal(mustGet(t, c, k), want) {
				t.Fatal("wrong bytes after rebuild")
			}
			rep, err := c.Verify(false)
			if err != nil || len(rep.Bad) != 0 {
				t.Fatalf("verify after rebuild: %+v %v", rep, err)
			}
			checkSize(t, c)
		})
	}
}

func TestGarbageSizeFile(t *testing.T) {
	c := openTest(t, t.TempDir(), nil, nil)
	for i := 0; i < 3; i++ {
		if err := c.Put(testKey(i), payload(testKey(i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	sizePath := filepath.Join(c.root, sizeFileName)
	for _, garbage := range []string{"garbage", "", "-5", "\x00\x01\x02", strings.Repeat("9", 40)} {
		if err := os.WriteFile(sizePath, []byte(garbage), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(testKey(3), payload(testKey(3), 2000)); err != nil {
			t.Fatal(err)
		}
		checkSize(t, c)
	}
	os.Remove(sizePath)
	if err := c.Put(testKey(4), payload(testKey(4), 2000)); err != nil {
		t.Fatal(err)
	}
	checkSize(t, c)
	mustGet(t, c, testKey(0))
}

func TestUnusableRootDegrades(t *testing.T) {
	base := t.TempDir()
	var roots []string
	// A path under a regular file cannot be created, even by root.
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	roots = append(roots, filepath.Join(file, "cache"))
	if os.Geteuid() != 0 {
		ro := filepath.Join(base, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, ro, filepath.Join(ro, "sub"))
	}
	for _, root := range roots {
		cfg := DefaultConfig(root)
		c, err := Open(cfg)
		if c == nil || !errors.Is(err, ErrUnavailable) || c.Enabled() || c.Err() == nil {
			t.Fatalf("Open(%s): enabled=%v err=%v", root, c != nil && c.Enabled(), err)
		}
		if !strings.Contains(err.Error(), root) {
			t.Errorf("warning does not name the directory: %v", err)
		}
		k := testKey(1)
		if err := c.Put(k, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := c.Get(k); ok || err != nil {
			t.Fatal("disabled cache hit")
		}
		builds := 0
		for i := 0; i < 2; i++ {
			b, out, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { builds++; return []byte("bin"), nil })
			if err != nil || out != Built || string(b) != "bin" {
				t.Fatal(out, err)
			}
		}
		if builds != 2 {
			t.Fatalf("builds = %d", builds)
		}
	}
	// No directory at all: no Dir, and no user cache directory.
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	if c, err := Open(DefaultConfig("")); !errors.Is(err, ErrUnavailable) || c.Enabled() || !strings.Contains(err.Error(), "set DGEN_CACHE_DIR") {
		t.Fatalf("empty dir without a user cache directory: %v", err)
	}
	// Persistent off: disabled, no error.
	cfg := DefaultConfig(filepath.Join(base, "off"))
	cfg.Persistent = false
	if c, err := Open(cfg); err != nil || c.Enabled() {
		t.Fatal("persistent off", err)
	}
}

func TestImageSizeLimits(t *testing.T) {
	c := openTest(t, t.TempDir(), func(cfg *Config) { cfg.MinImageSize = 100; cfg.MaxImageSize = 1000 }, nil)
	for _, n := range []int{10, 99, 100, 1000, 1001, 5000} {
		k := testKey(n)
		if err := c.Put(k, payload(k, n)); err != nil {
			t.Fatal(err)
		}
		_, ok, _ := c.Get(k)
		if want := n >= 100 && n <= 1000; ok != want {
			t.Errorf("size %d: stored=%v, want %v", n, ok, want)
		}
	}
}

// fakeClock is an adjustable clock for eviction tests.
type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time          { return f.t }
func (f *fakeClock) advance(d time.Duration) { f.t = f.t.Add(d) }

func TestLRUEviction(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	k0 := testKey(0)
	entry := int64(2*headerSize + 1000 + len(k0.encode()))
	c := openTest(t, dir, func(cfg *Config) { cfg.MaxSize = entry*9/2 + 5; cfg.MaxAge = 0 }, func(c *Cache) { c.now = clk.now })
	put := func(i int) {
		t.Helper()
		clk.advance(time.Hour)
		if err := c.Put(testKey(i), payload(testKey(i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 4; i++ {
		put(i)
	}
	clk.advance(time.Hour)
	mustGet(t, c, testKey(0)) // 0 is now the most recently used
	put(4)                    // 5 entries > 4.5: evict down to 2.25 entries
	present := map[int]bool{}
	for i := 0; i < 5; i++ {
		_, present[i], _ = c.Get(testKey(i))
	}
	want := map[int]bool{0: true, 1: false, 2: false, 3: false, 4: true}
	for i := range want {
		if present[i] != want[i] {
			t.Errorf("entry %d present=%v, want %v", i, present[i], want[i])
		}
	}
	checkSize(t, c)
	if s, _ := c.Stat(); s.Size > c.cfg.MaxSize/2 || s.Entries != 2 {
		t.Errorf("after eviction: %+v", s)
	}

	// Eviction disabled: nothing is removed.
	c2 := openTest(t, t.TempDir(), func(cfg *Config) { cfg.MaxSize = entry; cfg.EvictionDisabled = true }, func(c *Cache) { c.now = clk.now })
	for i := 0; i < 4; i++ {
		if err := c2.Put(testKey(i), payload(testKey(i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := c2.Stat(); s.Entries != 4 {
		t.Fatalf("eviction disabled: %d entries", s.Entries)
	}
	// GC runs even then: everything goes (each entry is over MaxSize/2).
	if rep, err := c2.GC(); err != nil || rep.Removed != 4 || rep.Remaining != 0 {
		t.Fatalf("GC: %+v %v", rep, err)
	}
	checkSize(t, c2)
}

func TestAgeEviction(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	setup := func(c *Cache) { c.now = clk.now }
	c := openTest(t, dir, nil, setup) // default: 7 days
	c.Put(testKey(0), payload(testKey(0), 100))
	clk.advance(5 * 24 * time.Hour)
	c.Put(testKey(1), payload(testKey(1), 100))
	clk.advance(3 * 24 * time.Hour) // key 0: 8 days, key 1: 3 days
	rep, err := c.GC()
	if err != nil || rep.Removed != 1 {
		t.Fatalf("GC: %+v %v", rep, err)
	}
	if _, ok, _ := c.Get(testKey(0)); ok {
		t.Fatal("old entry kept")
	}
	mustGet(t, c, testKey(1)) // accessed now
	checkSize(t, c)
	// Open runs the age scan (at most once a day).
	clk.advance(8 * 24 * time.Hour)
	c = openTest(t, dir, nil, setup)
	if s, _ := c.Stat(); s.Entries != 0 {
		t.Fatalf("Open kept %d old entries", s.Entries)
	}
	// Threshold 0: nothing is old.
	c.Put(testKey(2), payload(testKey(2), 100))
	clk.advance(1000 * 24 * time.Hour)
	c = openTest(t, dir, func(cfg *Config) { cfg.MaxAge = 0 }, setup)
	if rep, _ := c.GC(); rep.Removed != 0 {
		t.Fatal("age eviction with MaxAge 0")
	}
}

func TestManagement(t *testing.T) {
	c := openTest(t, t.TempDir(), nil, nil)
	other := testKey(50)
	other.Device = Device{Platform: "NVIDIA CUDA", Name: "NVIDIA H200", Version: "OpenCL 3.0 CUDA", DriverVersion: "580"}
	for i := 0; i < 3; i++ {
		c.Put(testKey(i), payload(testKey(i), 1000))
	}
	c.Put(other, payload(other, 2000))
	list, err := c.List()
	if err != nil || len(list) != 4 {
		t.Fatalf("List: %d %v", len(list), err)
	}
	names := map[string]bool{}
	for _, e := range list {
		names[e.ProgramName] = true
		if e.Size <= 1000 || e.LastAccess.IsZero() || e.DeviceHash == "" || e.Options != "-cl-mad-enable" {
			t.Errorf("entry %+v", e)
		}
	}
	if !names["Prog1"] || !names["Prog50"] {
		t.Errorf("names %v", names)
	}
	s, err := c.Stat()
	if err != nil || s.Entries != 4 || len(s.Devices) != 2 || s.Size != s.RecordedSize {
		t.Fatalf("Stat: %+v %v", s, err)
	}
	// Corrupt one entry; Verify reports and removes it.
	k1 := testKey(1)
	os.Truncate(filepath.Join(c.keyDir(&k1), "0.bin"), 50)
	rep, err := c.Verify(false)
	if err != nil || rep.Checked != 4 || len(rep.Bad) != 1 || rep.Removed != 0 {
		t.Fatalf("Verify: %+v %v", rep, err)
	}
	rep, _ = c.Verify(true)
	if len(rep.Bad) != 1 || rep.Removed != 1 {
		t.Fatalf("Verify remove: %+v", rep)
	}
	if rep, _ = c.Verify(false); len(rep.Bad) != 0 || rep.Checked != 3 {
		t.Fatalf("Verify after remove: %+v", rep)
	}
	checkSize(t, c)
	// Clear by device name, then all.
	cr, err := c.Clear("h200")
	if err != nil || cr.Removed != 1 {
		t.Fatalf("Clear h200: %+v %v", cr, err)
	}
	if _, ok, _ := c.Get(other); ok {
		t.Fatal("cleared entry hit")
	}
	mustGet(t, c, testKey(0))
	cr, err = c.Clear(hex16(testDevice.Hash())[:6])
	if err != nil || cr.Removed != 2 {
		t.Fatalf("Clear by hash: %+v %v", cr, err)
	}
	checkSize(t, c)
	ents, _ := os.ReadDir(c.root)
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("directory %s left after clearing all", e.Name())
		}
	}
}

func TestDecodeKeyNoPanic(t *testing.T) {
	k3 := testKey(3)
	enc := k3.encode()
	for i := 0; i <= len(enc); i++ {
		decodeKey(enc[:i])
		b := append([]byte(nil), enc...)
		if i < len(b) {
			b[i] ^= 0xff
			decodeKey(b)
		}
	}
	k, err := decodeKey(enc)
	want := testKey(3)
	if err != nil || !k.sameIdentity(&want) || k.ProgramName != want.ProgramName {
		t.Fatal(err)
	}
}

// Multi-process tests.

func TestStaleLockOfKilledProcess(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	count := filepath.Join(t.TempDir(), "count")
	cmd := helperCmd("holdbuild", "DC_DIR="+dir, "DC_MARKER="+marker, "DC_COUNT="+count, "DC_KEY=5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, marker) // the helper holds the key lock, building forever
	c := openTest(t, dir, nil, nil)
	k := testKey(5)
	// While it lives, a short wait times out and builds anyway.
	c.cfg.LockTimeout = 100 * time.Millisecond
	_, out, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { return payload(k, 10), nil })
	if err != nil || out != Built {
		t.Fatal(out, err)
	}
	if _, ok, _ := c.Get(k); ok {
		t.Fatal("stored while another process held the key")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The lock died with the process: a new one proceeds at once.
	c.cfg.LockTimeout = 10 * time.Second
	start := time.Now()
	want := payload(k, 1000)
	bin, out, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { return want, nil })
	if err != nil || out != Built || !bytes.Equal(bin, want) {
		t.Fatal(out, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("waited %v for a dead process's lock", d)
	}
	if !bytes.Equal(mustGet(t, c, k), want) {
		t.Fatal("wrong bytes")
	}
}

func TestWaitForBuilder(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	count := filepath.Join(t.TempDir(), "count")
	cmd := helperCmd("slowbuild", "DC_DIR="+dir, "DC_MARKER="+marker, "DC_COUNT="+count, "DC_KEY=8")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, marker)
	c := openTest(t, dir, nil, nil)
	bin, out, err := c.GetOrBuild(context.Background(), testKey(8), func() ([]byte, error) {
		appendLine(count, "parent")
		return []byte("built by parent"), nil
	})
	if err := cmd.Wait(); err != nil {
		t.Fatal("helper:", err)
	}
	if err != nil || out != Waited || string(bin) != "built by helper" {
		t.Fatalf("got %q, %v, %v", bin, out, err)
	}
	if n := countLines(t, count); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}

func TestKilledWriterLeavesNoEntry(t *testing.T) {
	for _, hook := range []string{"mid", "rename-src"} {
		t.Run(hook, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "marker")
			cmd := helperCmd("put", "DC_DIR="+dir, "DC_MARKER="+marker, "DC_HOOK="+hook, "DC_KEY=3")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, marker)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			c := openTest(t, dir, nil, nil)
			k := testKey(3)
			if _, ok, _ := c.Get(k); ok {
				t.Fatal("half-written entry loaded")
			}
			if rep, _ := c.Verify(false); len(rep.Bad) != 0 {
				t.Fatalf("verify: %+v", rep)
			}
			want := payload(k, 1<<20)
			bin, out, err := c.GetOrBuild(context.Background(), k, func() ([]byte, error) { return want, nil })
			if err != nil || out != Built || !bytes.Equal(bin, want) {
				t.Fatal(out, err)
			}
			if !bytes.Equal(mustGet(t, c, k), want) {
				t.Fatal("wrong bytes")
			}
			ents, _ := os.ReadDir(c.keyDir(&k))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), tempPrefix) {
					t.Errorf("temporary file %s left", e.Name())
				}
			}
			checkSize(t, c)
		})
	}
}

func TestRandomKills(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 4; i++ {
		cmd := helperCmd("hammer", "DC_DIR="+dir, "DC_ID=1", "DC_KEYS=30", "DC_ROUNDS=100", "DC_MAX=60000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+40*i) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	checkAllKeys(t, openTest(t, dir, nil, nil), 1, 30, false)
}

// checkAllKeys checks that every key a hammer process may have stored is
// either absent or holds exactly its bytes, or (all set) present.
func checkAllKeys(t *testing.T, c *Cache, procs, keys int, all bool) {
	t.Helper()
	check := func(n int) {
		k := testKey(n)
		got, ok, err := c.Get(k)
		if err != nil {
			t.Errorf("key %d: %v", n, err)
		}
		if ok && !bytes.Equal(got, payload(k, 512+(n%7)*1024)) {
			t.Errorf("key %d: wrong bytes", n)
		}
		if all && !ok {
			t.Errorf("key %d lost", n)
		}
	}
	for i := 0; i < keys/2; i++ {
		check(i)
	}
	for id := 0; id < procs; id++ {
		for i := keys / 2; i < keys; i++ {
			check(1000*(id+1) + i)
		}
	}
	if rep, err := c.Verify(false); err != nil || len(rep.Bad) != 0 {
		t.Errorf("verify: %+v %v", rep, err)
	}
}

func TestEightProcesses(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
	}{{"tiny max size", 40000}, {"no eviction", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			const procs, keys = 8, 24
			var waits []func() error
			for id := 0; id < procs; id++ {
				cmd := helperCmd("hammer", "DC_DIR="+dir, "DC_ID="+itoa(id), "DC_KEYS="+itoa(keys), "DC_ROUNDS=3", "DC_MAX="+itoa(tc.max))
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				waits = append(waits, cmd.Wait)
			}
			for id, w := range waits {
				if err := w(); err != nil {
					t.Errorf("process %d: %v", id, err)
				}
			}
			c := openTest(t, dir, func(cfg *Config) { cfg.MaxSize = int64(tc.max) }, nil)
			checkAllKeys(t, c, procs, keys, tc.max == 0)
			checkSize(t, c)
			if s, _ := c.Stat(); tc.max > 0 && s.Size > int64(tc.max) {
				t.Errorf("size %d over maximum %d", s.Size, tc.max)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
