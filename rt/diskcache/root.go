package diskcache

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
