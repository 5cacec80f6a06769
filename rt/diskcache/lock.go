package diskcache

import (
	"context"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// Lock file names.
const (
	treeLockName = "tree.lock"
	sizeLockName = "size.lock"
	keyLockName  = "lock"
)

// fileLock is a held advisory lock.
type fileLock struct{ f *flock.Flock }

func (l *fileLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Unlock()
		l.f = nil
	}
}

// lockFile takes a shared or exclusive flock on path, creating the file if
// missing. It retries until ctx is done; a nil ctx means a single try. If
// the lock was not taken it returns an error wrapping ErrBusy.
//
// Whatever stands at path that is not a regular file (a directory, a
// symbolic link, a FIFO) is removed first: a lock file is the cache's own.
func lockFile(ctx context.Context, path string, exclusive bool) (*fileLock, error) {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		if err := removeAny(path, st); err != nil {
			return nil, opError("lock", path, err)
		}
	}
	f := flock.New(path, flock.SetPermissions(0o644))
	try := f.TryRLock
	if exclusive {
		try = f.TryLock
	}
	delay := time.Millisecond
	var timer *time.Timer
	for {
		ok, err := try()
		if err != nil {
			return nil, opError("lock", path, err)
		}
		if ok {
			return &fileLock{f: f}, nil
		}
		if ctx == nil {
			return nil, opError("lock", path, ErrBusy)
		}
		if timer == nil {
			timer = time.NewTimer(delay)
			defer timer.Stop()
		} else {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			return nil, opError("lock", path, ErrBusy)
		case <-timer.C:
		}
		if delay < 20*time.Millisecond {
			delay += delay / 2
		}
	}
}
