package diskcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The cache writes only inside a directory that it created or marked as
// its own with a cache directory tag (https://bford.info/cachedir/), which
// backup tools also recognize.
const (
	tagName   = "CACHEDIR.TAG"
	tagText   = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by dgen (rt/diskcache).\n"
	tagPrefix = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by dgen"
)

// ownRootName reports whether name is something the cache puts at its root.
func ownRootName(name string) bool {
	switch name {
	case tagName, treeLockName, sizeLockName, sizeFileName, gcStampName, "remote-stats.json", "remote-stats.lock":
		return true
	}
	return strings.HasPrefix(name, tempPrefix) || isHex16(name)
}

// claimRoot makes sure that the root is the cache's own: it creates a
// missing root and marks it; it marks an existing root that is empty or
// holds only what the cache writes (a cache made before the mark); and it
// refuses any other directory, so that DGEN_CACHE_DIR=/ or a directory of
// the user's never receives the cache's files. A root that is a symbolic
// link to a directory is that directory, as ccache, Go's GOCACHE and
// sccache take it; the cache's own files and directories below the root
// are never followed as links.
func (c *Cache) claimRoot() error {
	st, err := os.Stat(c.root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if lst, lerr := os.Lstat(c.root); lerr == nil && lst.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(c.root)
			return fmt.Errorf("%s is a symbolic link to %s, which does not exist", c.root, target)
		}
		if err := os.MkdirAll(c.root, 0o755); err != nil {
			return err
		}
		return writeTag(c.root)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", c.root)
	}
	if marked(c.root) {
		return nil
	}
	ents, err := os.ReadDir(c.root)
	if err != nil {
		return err
	}
	for _, e := range ents {
		foreign := !ownRootName(e.Name()) || (isHex16(e.Name()) && !e.IsDir())
		if e.Name() == sizeFileName {
			_, ok := readSizeFile(filepath.Join(c.root, sizeFileName))
			foreign = !ok
		}
		if foreign {
			return fmt.Errorf("%s is not a dgen cache directory and not empty (it holds %q): "+
				"choose a new or empty directory; the cache writes only in a directory it created or marked with %s",
				c.root, e.Name(), tagName)
		}
	}
	return writeTag(c.root)
}

// marked reports whether dir holds the cache's tag.
func marked(dir string) bool {
	f, _, err := openRegular(filepath.Join(dir, tagName))
	if err != nil {
		return false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 512))
	return bytes.HasPrefix(b, []byte(tagPrefix))
}

func writeTag(dir string) error { return replaceFile(filepath.Join(dir, tagName), []byte(tagText)) }

// lockTree takes the tree lock, shared or exclusive, as lockFile does,
// after checking that the root is still the directory that the cache
// opened (checkRoot). Where the lock file cannot be made because the root
// went away in between, it checks the root again and tries once more.
func (c *Cache) lockTree(ctx context.Context, exclusive bool) (*fileLock, error) {
	for try := 0; ; try++ {
		if err := c.checkRoot(); err != nil {
			return nil, err
		}
		l, err := lockFile(ctx, filepath.Join(c.root, treeLockName), exclusive)
		if err == nil || try > 0 || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			return l, err
		}
	}
}

// checkRoot notices that the root was removed, replaced by something that
// is not a directory, or replaced by another directory while the cache
// runs (an operator's rm -rf, a cleanup job): before the next lookup or
// store, never writing where the cache may not. A root that is gone is
// made again and marked, as Open makes one; another directory in its
// place is used only if it is a dgen cache directory or claimRoot may
// mark it (empty, or holding only what the cache writes); anything else
// turns the cache off. Each change is said once through the logger, with
// what the cache did about it: made the directory again, took the new
// one, or turned itself off. The check costs a stat of the root.
//
// A cache opened without Persistent (the management methods of `dgen
// cache`) checks nothing: it never creates its root.
func (c *Cache) checkRoot() error {
	want := c.rootInfo.Load()
	if want == nil {
		return nil
	}
	if st, err := os.Stat(c.root); err == nil && st.IsDir() && os.SameFile(st, *want) {
		return nil
	}
	c.rootMu.Lock()
	defer c.rootMu.Unlock()
	if !c.Enabled() {
		return c.Err()
	}
	st, err := os.Stat(c.root)
	if err == nil && st.IsDir() && os.SameFile(st, *c.rootInfo.Load()) {
		return nil // another goroutine dealt with it
	}
	var what string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		what = "was removed"
	case err != nil:
		return c.rootOff(fmt.Errorf("the cache directory cannot be examined: %w", err))
	case !st.IsDir():
		return c.rootOff(fmt.Errorf("%s is no longer a directory (a %s stands in its place)", c.root, fileKind(st)))
	default:
		what = "was replaced by another directory"
	}
	action := "made it again"
	if what != "was removed" {
		action = "using the new one, which is a dgen cache directory"
		if !marked(c.root) {
			action = "marked the new one, which held nothing else, as the cache's"
		}
	}
	if err := c.claimRoot(); err != nil {
		return c.rootOff(fmt.Errorf("the cache directory %s: %w", what, err))
	}
	if err := c.pinRoot(); err != nil {
		return c.rootOff(fmt.Errorf("the cache directory %s, and cannot be made again: %v", what, err))
	}
	c.tracef("root %s %s: %s", c.root, what, action)
	if c.cfg.Logger != nil {
		c.cfg.Logger.Warn("dgen: persistent program cache directory "+what+"; "+action+" (what it held is lost)", "dir", c.root)
	}
	return nil
}

// pinRoot opens the root and records it as the cache's (rootInfo,
// rootDir), closing the one it held before.
func (c *Cache) pinRoot() error {
	f, err := os.Open(c.root)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", c.root)
	}
	if err != nil {
		f.Close()
		return err
	}
	if c.rootDir != nil {
		c.rootDir.Close()
	}
	c.rootDir = f
	c.rootInfo.Store(&st)
	return nil
}

// Close releases the root directory that the cache holds open to notice
// its removal, after waiting for the stores in progress (Wait); the cache
// stores and loads nothing more. The management methods still work. A
// Cache that is not closed releases the directory when it is collected.
func (c *Cache) Close() error {
	c.Wait()
	c.rootMu.Lock()
	defer c.rootMu.Unlock()
	c.enabled.Store(false)
	if c.rootDir == nil {
		return nil
	}
	err := c.rootDir.Close()
	c.rootDir = nil
	return err
}

// rootOff turns the cache off because its root changed to something it
// may not use, saying so once.
func (c *Cache) rootOff(why error) error {
	err := &Error{Op: "write", Path: c.root, Err: unavailable{why}}
	if c.setErr(err) && c.cfg.Logger != nil {
		c.cfg.Logger.Warn("dgen: persistent program cache off, caching in memory only", "dir", c.root, "err", why)
	}
	c.tracef("disabled: %v", why)
	return err
}

// fileKind names what st is, for messages.
func fileKind(st fs.FileInfo) string {
	switch m := st.Mode(); {
	case m.IsRegular():
		return "regular file"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "file"
}
