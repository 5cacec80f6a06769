package diskcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// The remote tier is opt-in, the way database/sql drivers are: a package
// that implements one (rt/fleetcache) registers an opener from its init
// function, and a program that wants it imports that package for its side
// effect:
//
//	import _ "github.com/dgen-go/dgen/rt/fleetcache"
//
// A program without the import links no client of any store.

// ErrNoRemote reports a remote tier that is configured (DGEN_CACHE_REMOTE)
// in a program that has registered none.
var ErrNoRemote = errors.New(`no remote cache tier is registered: import _ "github.com/dgen-go/dgen/rt/fleetcache"`)

// RemoteStats counts what a remote tier did.
type RemoteStats struct {
	Hits      int64 `json:"hits"`      // binaries fetched and accepted
	Misses    int64 `json:"misses"`    // fetches that found nothing usable
	Publishes int64 `json:"publishes"` // entries stored on the remote
	Errors    int64 `json:"errors"`    // failed requests (down, refusing, slow, full)
	Rejected  int64 `json:"rejected"`  // entries that failed their checks
	Dropped   int64 `json:"dropped"`   // publishes given up for want of a free slot
	Waits     int64 `json:"waits"`     // claims that waited for another process's build
}

// Add returns the sum of s and o.
func (s RemoteStats) Add(o RemoteStats) RemoteStats {
	return RemoteStats{s.Hits + o.Hits, s.Misses + o.Misses, s.Publishes + o.Publishes, s.Errors + o.Errors,
		s.Rejected + o.Rejected, s.Dropped + o.Dropped, s.Waits + o.Waits}
}

// RemoteOp is the kind of a RemoteEvent.
type RemoteOp uint8

// The remote event kinds.
const (
	// RemoteHit is a binary fetched from the remote.
	RemoteHit RemoteOp = iota + 1
	// RemotePublish is a binary stored on the remote.
	RemotePublish
)

// RemoteEvent reports a remote hit or a completed publish.
type RemoteEvent struct {
	Op       RemoteOp
	Program  string        // the key's program name
	Bytes    int           // the binary's size
	Duration time.Duration // the time the fetch or the upload took
}

// RemoteConfig says which remote tier to open, and where it reports. rt
// fills it from rt.RemoteCacheConfig, which documents each setting with
// its variable.
type RemoteConfig struct {
	// URL names the store (DGEN_CACHE_REMOTE); empty means no remote.
	URL string
	// Mode is the direction of transfers: "read_write" (or ""), "read"
	// or "write" (DGEN_CACHE_REMOTE_MODE).
	Mode string
	// Key signs and checks entries (DGEN_CACHE_REMOTE_KEY).
	Key string
	// Unsigned opts in to a store without a Key
	// (DGEN_CACHE_REMOTE_UNSIGNED=insecure).
	Unsigned bool
	// Timeout bounds every request, Lease a builder's claim; zero means
	// the tier's defaults (DGEN_CACHE_REMOTE_TIMEOUT,
	// DGEN_CACHE_REMOTE_LEASE).
	Timeout, Lease time.Duration
	// Logger receives the one warning a failing remote gives; nil means
	// none.
	Logger *slog.Logger
	// Trace, if not nil, receives one line per remote decision.
	Trace io.Writer
	// Events, if not nil, is called on every remote hit and publish. It
	// must not block.
	Events func(RemoteEvent)
}

// RemoteTier is an open remote tier: a Remote with counters and a Close.
type RemoteTier interface {
	Remote
	// Stats returns the counters.
	Stats() RemoteStats
	// Close waits up to wait for the publishes in flight and disconnects.
	Close(wait time.Duration) error
}

var remoteOpener struct {
	sync.RWMutex
	open  func(RemoteConfig) (RemoteTier, error)
	check func(RemoteConfig) error
}

// RegisterRemote makes open the opener of the remote tier. It is called
// from the init function of the package that implements the tier;
// registering twice panics, as database/sql does, since it is a
// programming error.
func RegisterRemote(open func(RemoteConfig) (RemoteTier, error)) {
	remoteOpener.Lock()
	defer remoteOpener.Unlock()
	if open == nil {
		panic("diskcache: RegisterRemote opener is nil")
	}
	if remoteOpener.open != nil {
		panic("diskcache: RegisterRemote called twice")
	}
	remoteOpener.open = open
}

// RegisterRemoteCheck makes check the function with which CheckRemote
// validates a configuration of the registered tier, opening nothing. It is
// called from the init function of the package that implements the tier.
func RegisterRemoteCheck(check func(RemoteConfig) error) {
	remoteOpener.Lock()
	defer remoteOpener.Unlock()
	remoteOpener.check = check
}

// CheckRemote reports a configuration that the registered remote tier
// would refuse to open (a malformed value, or rt/fleetcache's store
// without a signing key), without opening it; nil where cfg.URL is empty.
// Without a registered tier it returns an error wrapping ErrNoRemote.
func CheckRemote(cfg RemoteConfig) error {
	if cfg.URL == "" {
		return nil
	}
	remoteOpener.RLock()
	open, check := remoteOpener.open, remoteOpener.check
	remoteOpener.RUnlock()
	if open == nil {
		return fmt.Errorf("remote program cache: %w", ErrNoRemote)
	}
	if check == nil {
		return nil
	}
	return check(cfg)
}

// RemoteRegistered reports whether a remote tier is registered.
func RemoteRegistered() bool {
	remoteOpener.RLock()
	defer remoteOpener.RUnlock()
	return remoteOpener.open != nil
}

// OpenRemote opens the remote tier that cfg names through the registered
// opener. It returns nil and no error when cfg.URL is empty, and an error
// wrapping ErrNoRemote when no tier is registered.
func OpenRemote(cfg RemoteConfig) (RemoteTier, error) {
	if cfg.URL == "" {
		return nil, nil
	}
	remoteOpener.RLock()
	open := remoteOpener.open
	remoteOpener.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("remote program cache: %w", ErrNoRemote)
	}
	return open(cfg)
}

// The counters of the remote tier, summed over the processes that used a
// local cache directory, for `dgen cache stat`.
const (
	remoteRecordName     = "remote-stats.json"
	remoteRecordLockName = "remote-stats.lock"
)

// RecordRemote adds s to the remote counters recorded in dir, a local
// cache root that exists. Contexts record their counters when they close.
func RecordRemote(dir string, s RemoteStats) error {
	if s == (RemoteStats{}) {
		return nil
	}
	l := flock.New(filepath.Join(dir, remoteRecordLockName), flock.SetPermissions(0o644))
	if err := l.Lock(); err != nil {
		return fmt.Errorf("record remote counters in %s: %w", dir, err)
	}
	defer l.Unlock()
	old, err := RecordedRemote(dir)
	if err != nil {
		old = RemoteStats{} // a damaged record starts again
	}
	b, _ := json.Marshal(old.Add(s))
	f, err := os.CreateTemp(dir, ".tmp-remote-stats-*")
	if err != nil {
		return fmt.Errorf("record remote counters in %s: %w", dir, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("record remote counters in %s: %w", dir, err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, remoteRecordName)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("record remote counters in %s: %w", dir, err)
	}
	return nil
}

// RecordedRemote returns the remote counters recorded in dir; none is the
// zero RemoteStats.
func RecordedRemote(dir string) (RemoteStats, error) {
	p := filepath.Join(dir, remoteRecordName)
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return RemoteStats{}, nil
	}
	if err != nil {
		return RemoteStats{}, fmt.Errorf("read remote counters: %w", err)
	}
	defer f.Close()
	var s RemoteStats
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return RemoteStats{}, fmt.Errorf("read remote counters: %s is not a regular file", p)
	}
	if err := json.NewDecoder(io.LimitReader(f, 4096)).Decode(&s); err != nil {
		return RemoteStats{}, fmt.Errorf("read remote counters %s: %w", p, err)
	}
	return s, nil
}
