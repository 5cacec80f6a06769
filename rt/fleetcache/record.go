package fleetcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/gofrs/flock"
)

// The counters of the processes that used a local cache directory, summed,
// for `dgen cache stat`.
const (
	recordName     = "remote-stats.json"
	recordLockName = "remote-stats.lock"
)

// Record adds s to the remote counters recorded in dir, a local cache root
// that exists. Contexts record their counters when they close.
func Record(dir string, s Stats) error {
	if s == (Stats{}) {
		return nil
	}
	l := flock.New(filepath.Join(dir, recordLockName), flock.SetPermissions(0o644))
	if err := l.Lock(); err != nil {
		return fmt.Errorf("fleetcache: record counters in %s: %w", dir, err)
	}
	defer l.Unlock()
	old, err := Recorded(dir)
	if err != nil {
		old = Stats{} // a damaged record starts again
	}
	b, _ := json.Marshal(old.Add(s))
	f, err := os.CreateTemp(dir, ".tmp-remote-stats-*")
	if err != nil {
		return fmt.Errorf("fleetcache: record counters in %s: %w", dir, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("fleetcache: record counters in %s: %w", dir, err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, recordName)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("fleetcache: record counters in %s: %w", dir, err)
	}
	return nil
}

// Recorded returns the remote counters recorded in dir; none is zero Stats.
func Recorded(dir string) (Stats, error) {
	p := filepath.Join(dir, recordName)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Stats{}, nil
	}
	if err != nil {
		return Stats{}, fmt.Errorf("fleetcache: read counters: %w", err)
	}
	defer f.Close()
	var s Stats
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return Stats{}, fmt.Errorf("fleetcache: read counters: %s is not a regular file", p)
	}
	if err := json.NewDecoder(io.LimitReader(f, 4096)).Decode(&s); err != nil {
		return Stats{}, fmt.Errorf("fleetcache: read counters %s: %w", p, err)
	}
	return s, nil
}
