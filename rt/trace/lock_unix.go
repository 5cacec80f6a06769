//go:build unix

package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A pathLock is a tracer's hold on a trace file's path: an exclusive
// flock(2) on the lock file beside it, ".NAME.dgen-lock", which holds the
// holder's process id. The lock file, not the trace file, is locked, so
// that the hold stays with the path when the trace file is replaced by a
// rename (Close's JSON, a flight dump) or by logrotate.
type pathLock struct {
	name string // the lock file's path, absolute
	f    *os.File
}

// lockedHere holds the lock files this process holds, so that a second
// tracer of the process is refused where flock would not tell (NFS, where
// flock locks are per process).
var lockedHere struct {
	sync.Mutex
	names map[string]bool
}

// lockPath takes the lock of the trace file at path, or returns an error
// wrapping ErrBusy. It returns nil, and no error, for a path that names
// something other than a regular file (/dev/null, a pipe), which nothing
// truncates and anyone may share.
func lockPath(path string) (*pathLock, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".dgen-lock")
	lockedHere.Lock()
	defer lockedHere.Unlock()
	if lockedHere.names[name] {
		return nil, fmt.Errorf("%w of this process", ErrBusy)
	}
	l := &pathLock{name: name}
	if err := l.take(); err != nil {
		return nil, err
	}
	if lockedHere.names == nil {
		lockedHere.names = map[string]bool{}
	}
	lockedHere.names[name] = true
	return l, nil
}

// take creates or opens the lock file and locks it. A lock file removed
// or replaced between the open and the lock is opened again.
func (l *pathLock) take() error {
	for range 8 {
		f, err := os.OpenFile(l.name, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder := readHolder(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return fmt.Errorf("%w (process %s, which holds %s)", ErrBusy, holder, l.name)
			}
			return fmt.Errorf("lock %s: %w", l.name, err)
		}
		if l.names(f) {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			l.f = f
			return nil
		}
		f.Close()
	}
	return fmt.Errorf("lock %s: the lock file keeps changing", l.name)
}

// names reports whether l.name is the open file f.
func (l *pathLock) names(f *os.File) bool { return names(l.name, f) }

func readHolder(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	if s := strings.TrimSpace(string(buf[:n])); s != "" {
		return s
	}
	return "unknown"
}

// check makes sure that l still holds its path: a lock file removed or
// replaced (a cleanup, logrotate) is made and locked again. It fails,
// wrapping ErrBusy, when another tracer took the path meanwhile.
func (l *pathLock) check() error {
	if l == nil || l.names(l.f) {
		return nil
	}
	old := l.f
	err := l.take()
	old.Close()
	if err != nil {
		l.f = nil
	}
	return err
}

// release removes the lock file, then unlocks it: a tracer that opened it
// meanwhile finds it removed when it has the lock, and makes another.
func (l *pathLock) release() {
	if l == nil {
		return
	}
	lockedHere.Lock()
	delete(lockedHere.names, l.name)
	lockedHere.Unlock()
	if l.f != nil {
		if l.names(l.f) {
			os.Remove(l.name)
		}
		l.f.Close()
		l.f = nil
	}
}
