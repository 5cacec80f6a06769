//go:build unix

package opencl

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dgen-go/dgen/rt/driver"
)

// PoCL 3.1 with its kernel cache off (POCL_KERNEL_CACHE=0) still compiles
// each kernel in its cache directory, under names derived from the
// program, and removes them afterwards: several processes that load the
// same program at once share those files, and one of them aborts ("Final
// linking of kernel … failed", SIGABRT; pocl issues 430 and 1480).
// PyOpenCL avoids this with a cache directory per process, and so does
// dgen: when PoCL's kernel cache is off, the first OpenCL call, which
// loads PoCL, runs with POCL_CACHE_DIR naming a directory of this process
// alone, below the one PoCL would use. The variable is restored once PoCL
// has read it, so that child processes do not inherit the directory. The
// directory stays locked for the life of the process, and the directories
// of processes that have exited are removed by the next one.
//
// The backend reads and sets these variables of PoCL's through rt's table
// of variables (driver.LibraryEnv, driver.SetLibraryEnv), which `dgen env`
// lists: no backend touches the process environment itself. Used without
// rt (no table installed), the backend leaves PoCL as it is.

// poclDirPrefix begins the name of a process's own PoCL cache directory,
// poclTempPrefix that of one being made.
const (
	poclDirPrefix  = "dgen-"
	poclTempPrefix = ".dgen-tmp-"
)

// poclLock holds the lock on this process's PoCL cache directory; it is
// never closed (a lock ends with the process).
var poclLock *os.File

// isolatePoCL gives this process a PoCL cache directory of its own when
// POCL_KERNEL_CACHE turns PoCL's kernel cache off, and returns the
// function that restores POCL_CACHE_DIR; call it after the first OpenCL
// call. Where no such directory can be made it says so once, with what to
// set, and leaves the environment alone.
func isolatePoCL() (restore func()) {
	if !poclCacheOff(driver.LibraryEnv("POCL_KERNEL_CACHE")) {
		return func() {}
	}
	base := driver.LibraryEnv("POCL_CACHE_DIR")
	if base == "" {
		base = defaultPoCLCacheDir()
	}
	dir, err := ownPoCLDir(base)
	if err != nil {
		// A backend has no context's Config.Logger: it logs to slog.Default().
		slog.Warn("dgen: POCL_KERNEL_CACHE=0, and no PoCL cache directory of this process's own: processes that load the same program at once may abort in PoCL (pocl issue 1480); give each its own POCL_CACHE_DIR, or leave PoCL's kernel cache on",
			"base", base, "err", err)
		return func() {}
	}
	restore, ok := driver.SetLibraryEnv("POCL_CACHE_DIR", dir)
	if !ok {
		return func() {}
	}
	return restore
}

// poclCacheOff reports whether PoCL reads v, the value of
// POCL_KERNEL_CACHE, as off: PoCL's kernel cache is on unless the variable
// is set to something other than 1.
func poclCacheOff(v string) bool {
	return v != "" && !strings.HasPrefix(v, "1")
}

// defaultPoCLCacheDir is the cache directory PoCL uses when POCL_CACHE_DIR
// is not set.
func defaultPoCLCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "pocl", "kcache")
	}
	return filepath.Join(os.TempDir(), "pocl-kcache")
}

// ownPoCLDir makes, below base, a directory for this process and locks it,
// after removing those of processes that have exited. The directory is
// made under a temporary name and given its own only once locked, so that
// another process never sees it unlocked.
func ownPoCLDir(base string) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", err
	}
	removeStalePoCLDirs(base)
	tmp, err := os.MkdirTemp(base, poclTempPrefix)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(filepath.Join(tmp, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err == nil {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	dir := filepath.Join(base, poclDirPrefix+strings.TrimPrefix(filepath.Base(tmp), poclTempPrefix))
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.RemoveAll(tmp)
		return "", fmt.Errorf("make a directory in %s: %w", base, err)
	}
	poclLock = f
	return dir, nil
}

// removeStalePoCLDirs removes the directories below base of processes that
// have exited (their lock is free), and those left half made for more than
// a minute.
func removeStalePoCLDirs(base string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range ents {
		dir := filepath.Join(base, e.Name())
		switch {
		case !e.IsDir():
		case strings.HasPrefix(e.Name(), poclTempPrefix):
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Minute {
				os.RemoveAll(dir)
			}
		case strings.HasPrefix(e.Name(), poclDirPrefix):
			f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR, 0)
			if err != nil {
				continue
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				os.RemoveAll(dir)
			}
			f.Close()
		}
	}
}
