package diskcache

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rootTestCache opens a cache in a new directory of t's, logging to warn.
func rootTestCache(t *testing.T, warn *bytes.Buffer) (*Cache, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cache")
	return openTest(t, dir, func(cfg *Config) { cfg.Logger = slog.New(slog.NewTextHandler(warn, nil)) }, nil), dir
}

// storeAndGet stores key i through Put and through GetOrBuild, and looks
// both up again; it reports whether both were found.
func storeAndGet(t *testing.T, c *Cache, i int) bool {
	t.Helper()
	k, k2 := testKey(i), testKey(i+1000)
	c.Put(k, payload(k, 64))
	if _, _, err := c.GetOrBuild(context.Background(), k2, func() ([]byte, error) { return payload(k2, 64), nil }); err != nil {
		t.Fatal(err)
	}
	_, ok, _ := c.Get(k)
	_, ok2, _ := c.Get(k2)
	return ok && ok2
}

// TestRootRemoved: an rm -rf of the cache directory while the cache runs
// is noticed at the next store: the directory is made again and marked,
// with one warning that says so, and entries are stored again.
func TestRootRemoved(t *testing.T) {
	var warn bytes.Buffer
	c, dir := rootTestCache(t, &warn)
	if !storeAndGet(t, c, 1) {
		t.Fatal("no entry stored before the removal")
	}
	for round := range 2 {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if !storeAndGet(t, c, 10*round+i+2) {
				t.Errorf("round %d, store %d after rm -rf: not stored", round, i)
			}
		}
		if !marked(dir) || !c.Enabled() {
			t.Errorf("round %d: after rm -rf the root is marked %v, the cache enabled %v; want both", round, marked(dir), c.Enabled())
		}
		if n := strings.Count(warn.String(), "level=WARN"); n != round+1 || !strings.Contains(warn.String(), "was removed; made it again") {
			t.Errorf("round %d: %d warnings, want %d saying the directory was made again:\n%s", round, n, round+1, warn.String())
		}
	}
}

// TestRootReplacedByFile: a regular file put where the cache directory
// was turns the cache off at the next store, with one warning that says
// so; the file is left alone and nothing is stored.
func TestRootReplacedByFile(t *testing.T) {
	var warn bytes.Buffer
	c, dir := rootTestCache(t, &warn)
	storeAndGet(t, c, 1)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not yours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if storeAndGet(t, c, i+2) {
			t.Errorf("store %d with a file in place of the root: found", i)
		}
	}
	if c.Enabled() || !errors.Is(c.Err(), ErrUnavailable) || !strings.Contains(c.Err().Error(), "no longer a directory") {
		t.Errorf("enabled %v, Err %v; want off, saying the root is no longer a directory", c.Enabled(), c.Err())
	}
	out := warn.String()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "cache off") || !strings.Contains(out, "regular file") {
		t.Errorf("%d warnings, want one saying the cache is off because a regular file stands there:\n%s", n, out)
	}
	if b, _ := os.ReadFile(dir); string(b) != "not yours\n" {
		t.Errorf("the file in place of the root holds %q", b)
	}
}

// TestRootReplacedByDirectory: another directory put in place of the
// cache's is used only if the cache may write there: one that holds the
// user's files turns the cache off, saying so, and is left unmarked; an
// empty one is marked and used, with one warning each.
func TestRootReplacedByDirectory(t *testing.T) {
	var warn bytes.Buffer
	c, dir := rootTestCache(t, &warn)
	storeAndGet(t, c, 1)
	os.RemoveAll(dir)
	os.Mkdir(dir, 0o755)
	if !storeAndGet(t, c, 2) || !marked(dir) {
		t.Errorf("an empty directory in place of the root: not used (marked %v)", marked(dir))
	}
	if !strings.Contains(warn.String(), "replaced by another directory; marked the new one") {
		t.Errorf("warnings %q, want one saying the new directory was marked", warn.String())
	}

	warn.Reset()
	os.RemoveAll(dir)
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	if storeAndGet(t, c, 3) || c.Enabled() {
		t.Error("a user's directory in place of the root: used")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || marked(dir) {
		t.Errorf("the user's directory holds %d entries, marked %v; want only the user's file", len(ents), marked(dir))
	}
	if n := strings.Count(warn.String(), "level=WARN"); n != 1 || !strings.Contains(warn.String(), "not a dgen cache directory") {
		t.Errorf("%d warnings, want one saying the directory is not the cache's:\n%s", n, warn.String())
	}
}

// TestRelativeDirAbsoluteAtOpen: a relative Dir names a directory of the
// working directory at Open; a chdir afterwards does not move the cache
// into the new working directory.
func TestRelativeDirAbsoluteAtOpen(t *testing.T) {
	base := t.TempDir()
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	c := openTest(t, "cache", nil, nil)
	if want := filepath.Join(base, "cache"); c.Dir() != want {
		t.Errorf("Dir() = %q, want %q", c.Dir(), want)
	}
	t.Chdir(work)
	if !storeAndGet(t, c, 1) {
		t.Error("nothing stored after the chdir")
	}
	if _, err := os.Stat(filepath.Join(work, "cache")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cache wrote into the new working directory: %v", err)
	}
	if !marked(filepath.Join(base, "cache")) {
		t.Error("the cache directory of Open's working directory is not the cache's")
	}
}

// TestDefaultDir: an empty Dir is the user cache directory's dgen.
func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	c, err := Open(Config{Persistent: true})
	if err != nil || !c.Enabled() {
		t.Fatalf("open with no Dir: %v", err)
	}
	base, _ := os.UserCacheDir()
	if want := filepath.Join(base, "dgen"); c.Dir() != want || !strings.HasPrefix(c.Dir(), home) {
		t.Errorf("Dir() = %q, want %q", c.Dir(), want)
	}
}
