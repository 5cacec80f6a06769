package diskcache

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	sizeFileName  = "size"
	gcStampName   = "gc-stamp"
	ageScanPeriod = 24 * time.Hour
	staleTempAge  = time.Hour
)

// readSizeFile returns the recorded total size; ok is false if the file is
// missing or malformed.
func readSizeFile(path string) (n int64, ok bool) {
	f, _, err := openRegular(path)
	if err != nil {
		return 0, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 33))
	f.Close()
	if err != nil || len(b) > 32 {
		return 0, false
	}
	n, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func writeSizeFile(path string, n int64) error {
	return opError("write size", path, replaceFile(path, []byte(strconv.FormatInt(n, 10)+"\n")))
}

// replaceFile writes data to a temporary file beside path and renames it
// to path, so that readers see the old content or the new, never a part.
func replaceFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), tempPrefix+"*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// updateSize takes the size lock, runs publish (if not nil), and then adds
// delta to the recorded size, or recounts it by walking the tree if recount
// is set or the size file is missing or malformed. If evict is set, eviction
// is on and the total exceeds the maximum, it evicts. If the size lock
// cannot be taken in time, publish runs anyway and the size is left to the
// next recount.
func (c *Cache) updateSize(publish func() error, delta int64, recount, evict bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.LockTimeout)
	defer cancel()
	l, lerr := lockFile(ctx, filepath.Join(c.root, sizeLockName), true)
	if publish != nil {
		if err := publish(); err != nil {
			recount = true
			evict = false
		}
	}
	if lerr != nil {
		return lerr
	}
	defer l.unlock()
	sizePath := filepath.Join(c.root, sizeFileName)
	total, ok := readSizeFile(sizePath)
	total += delta
	if !ok || recount || total < 0 {
		if !ok {
			c.tracef("size file missing or malformed: recounting")
		}
		entries, _ := c.scan(false)
		total = sumSizes(entries)
	}
	if evict && !c.cfg.EvictionDisabled && c.cfg.MaxSize > 0 && total > c.cfg.MaxSize {
		var rep GCReport
		total, rep = c.evictLocked(c.cfg.MaxSize/2, c.ageCutoff())
		c.tracef("evicted %d entries (%d bytes), size now %d", rep.Removed, rep.Freed, total)
	}
	return writeSizeFile(sizePath, total)
}

func (c *Cache) ageCutoff() time.Time {
	if c.cfg.MaxAge <= 0 {
		return time.Time{}
	}
	return c.now().Add(-c.cfg.MaxAge)
}

// entryStat describes one entry found by scan.
type entryStat struct {
	dir    string
	n      int
	size   int64 // .src + .bin
	access time.Time
}

func sumSizes(es []entryStat) int64 {
	var t int64
	for _, e := range es {
		t += e.size
	}
	return t
}

// keyDirs returns every key directory under the root.
func (c *Cache) keyDirs() ([]string, error) {
	dirs := []string{c.root}
	for level := 0; level < 4; level++ {
		var next []string
		for _, d := range dirs {
			ents, err := os.ReadDir(d)
			if err != nil {
				if level == 0 && !errors.Is(err, fs.ErrNotExist) {
					return nil, opError("read directory", d, err)
				}
				continue
			}
			for _, e := range ents {
				if e.IsDir() && isHex16(e.Name()) {
					next = append(next, filepath.Join(d, e.Name()))
				}
			}
		}
		dirs = next
	}
	return dirs, nil
}

// scan walks the tree and returns every entry. With clean set, it also
// removes, in each key directory whose lock it can take at once, the
// leftovers of dead writers: temporary files and halves of entries.
func (c *Cache) scan(clean bool) ([]entryStat, error) {
	dirs, err := c.keyDirs()
	if err != nil {
		return nil, err
	}
	var out []entryStat
	for _, dir := range dirs {
		if clean {
			if l, err := lockFile(nil, filepath.Join(dir, keyLockName), true); err == nil {
				cleanDir(dir)
				l.unlock()
			}
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, n := range entryNums(ents, ".src") {
			st, err := os.Lstat(entryPath(dir, n, ".src"))
			if err != nil {
				continue
			}
			e := entryStat{dir: dir, n: n, size: st.Size(), access: st.ModTime()}
			if bt, err := os.Lstat(entryPath(dir, n, ".bin")); err == nil {
				e.size += bt.Size()
				e.access = bt.ModTime()
			}
			out = append(out, e)
		}
	}
	return out, nil
}

// cleanDir removes temporary files and half entries; the caller holds the
// key lock exclusively, so no writer is active in dir.
func cleanDir(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	srcs := map[int]bool{}
	for _, n := range entryNums(ents, ".src") {
		srcs[n] = true
	}
	bins := map[int]bool{}
	for _, n := range entryNums(ents, ".bin") {
		bins[n] = true
		if !srcs[n] {
			os.Remove(entryPath(dir, n, ".bin"))
		}
	}
	for n := range srcs {
		if !bins[n] {
			os.Remove(entryPath(dir, n, ".src"))
		}
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// GCReport is the result of an eviction pass.
type GCReport struct {
	Removed   int   `json:"removed"`     // entries removed
	Freed     int64 `json:"freed"`       // bytes freed
	Remaining int   `json:"remaining"`   // entries left
	Size      int64 `json:"size"`        // total size left, in bytes
	Skipped   int   `json:"skipped"`     // entries due for eviction but in use
	Pruned    int   `json:"pruned_dirs"` // empty directories removed
}

// evictLocked removes entries not accessed since cutoff (if not zero), then
// the least recently used ones until the total is at most target (if
// target >= 0). The caller holds the size lock. It returns the new total.
func (c *Cache) evictLocked(target int64, cutoff time.Time) (int64, GCReport) {
	var rep GCReport
	entries, err := c.scan(true)
	if err != nil {
		c.tracef("evict: %v", err)
	}
	total := sumSizes(entries)
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if !a.access.Equal(b.access) {
			return a.access.Before(b.access)
		}
		if a.dir != b.dir {
			return a.dir < b.dir
		}
		return a.n < b.n
	})
	kept := 0
	for _, e := range entries {
		old := !cutoff.IsZero() && e.access.Before(cutoff)
		over := target >= 0 && total > target
		if !old && !over {
			kept++
			continue
		}
		l, err := lockFile(nil, filepath.Join(e.dir, keyLockName), true)
		if err != nil {
			rep.Skipped++
			kept++
			continue
		}
		// Skip entries accessed since the scan.
		if bt, err := os.Lstat(entryPath(e.dir, e.n, ".bin")); err == nil && bt.ModTime().After(e.access) {
			l.unlock()
			rep.Skipped++
			kept++
			continue
		}
		freed := removeEntry(e.dir, e.n)
		l.unlock()
		why := "lru"
		if old {
			why = "age"
		}
		c.tracef("evict (%s) %s/%d: %d bytes", why, e.dir, e.n, freed)
		total -= freed
		rep.Freed += freed
		rep.Removed++
	}
	rep.Remaining = kept
	rep.Size = total
	return total, rep
}

// GC runs an eviction pass now, whatever Config.EvictionDisabled says:
// it removes entries older than Config.MaxAge (if set), then, if the total
// exceeds Config.MaxSize (if set), the least recently used entries down to
// half of it; it removes leftovers of dead writers, prunes empty
// directories and rewrites the size file.
func (c *Cache) GC() (GCReport, error) {
	if c.root == "" {
		return GCReport{}, &Error{Op: "gc", Path: "(no cache directory)", Err: ErrUnavailable}
	}
	if _, err := os.Stat(c.root); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return GCReport{}, nil
		}
		return GCReport{}, opError("gc", c.root, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.LockTimeout)
	defer cancel()
	l, err := lockFile(ctx, filepath.Join(c.root, sizeLockName), true)
	if err != nil {
		return GCReport{}, err
	}
	defer l.unlock()
	target := int64(-1)
	if c.cfg.MaxSize > 0 {
		entries, _ := c.scan(false)
		if sumSizes(entries) > c.cfg.MaxSize {
			target = c.cfg.MaxSize / 2
		}
	}
	total, rep := c.evictLocked(target, c.ageCutoff())
	rep.Pruned = c.prune()
	c.cleanRootTemps()
	return rep, writeSizeFile(filepath.Join(c.root, sizeFileName), total)
}

// maybeAgeEvict runs age-based eviction at Open, at most once per
// ageScanPeriod, if no other process is evicting.
func (c *Cache) maybeAgeEvict() {
	if c.cfg.EvictionDisabled || c.cfg.MaxAge <= 0 {
		return
	}
	stamp := filepath.Join(c.root, gcStampName)
	now := c.now()
	if st, err := os.Stat(stamp); err == nil && now.Sub(st.ModTime()) < ageScanPeriod && st.ModTime().Sub(now) < ageScanPeriod {
		return
	}
	l, err := lockFile(nil, filepath.Join(c.root, sizeLockName), true)
	if err != nil {
		return
	}
	defer l.unlock()
	total, rep := c.evictLocked(-1, c.ageCutoff())
	c.tracef("age scan: removed %d entries (%d bytes)", rep.Removed, rep.Freed)
	writeSizeFile(filepath.Join(c.root, sizeFileName), total)
	if f, err := os.OpenFile(stamp, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		f.Close()
		os.Chtimes(stamp, now, now)
	}
}

// prune removes key directories that hold no entry, with their lock files,
// and then empty parents. It needs the tree lock exclusively and does
// nothing if another process holds it. It returns the number of directories
// removed.
func (c *Cache) prune() int {
	l, err := c.lockTree(nil, true)
	if err != nil {
		return 0
	}
	defer l.unlock()
	dirs, _ := c.keyDirs()
	pruned := 0
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		empty := true
		for _, e := range ents {
			if e.Name() != keyLockName {
				empty = false
				break
			}
		}
		if !empty {
			continue
		}
		os.Remove(filepath.Join(dir, keyLockName))
		for d := dir; d != c.root && strings.HasPrefix(d, c.root); d = filepath.Dir(d) {
			if os.Remove(d) != nil {
				break
			}
			pruned++
		}
	}
	return pruned
}

// cleanRootTemps removes temporary files at the root left by dead processes.
func (c *Cache) cleanRootTemps() {
	ents, err := os.ReadDir(c.root)
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > staleTempAge {
			os.Remove(filepath.Join(c.root, e.Name()))
		}
	}
}
