package diskcache

import (
	"io"
	"log/slog"
	"time"
)

// Default values of the configuration.
const (
	DefaultMaxSize      = 8 << 30 // 8 GiB
	DefaultMaxAge       = 7 * 24 * time.Hour
	DefaultMaxImageSize = 1 << 30 // 1 GiB
	DefaultLockTimeout  = 2 * time.Minute
	defaultSubdirectory = "dgen"
)

// Config configures a persistent cache. The zero Config is a disabled cache;
// DefaultConfig returns a usable one. The cache reads no variable of the
// environment: rt reads them (rt.ConfigFromEnv) and fills a Config.
type Config struct {
	// Dir is the cache root. It is created if missing; empty means the
	// user cache directory's dgen (os.UserCacheDir), and a relative
	// directory is made absolute when the cache opens, so that a later
	// chdir does not move it. The cache notices a root that is removed or
	// replaced while it runs (see Open).
	Dir string
	// Persistent enables the cache. A Cache opened with Persistent false
	// stores nothing and misses on every Get, but its management methods
	// (List, Stat, Verify, Clear, GC) still work on Dir.
	Persistent bool
	// MaxSize is the total size in bytes above which the least recently
	// used entries are evicted down to MaxSize/2. Zero turns size-based
	// eviction off.
	MaxSize int64
	// MaxAge is the time after its last access at which an entry is
	// evicted. Zero turns age-based eviction off.
	MaxAge time.Duration
	// EvictionDisabled turns off both size- and age-based eviction,
	// except when GC is called explicitly.
	EvictionDisabled bool
	// MinImageSize is the size in bytes below which a binary is not stored.
	MinImageSize int64
	// MaxImageSize is the size in bytes above which a binary is not
	// stored. Zero means no limit.
	MaxImageSize int64
	// LockTimeout is how long GetOrBuild, and Get, wait for another process
	// that holds the key (building or writing it) before they go on
	// without it (DGEN_CACHE_LOCK_TIMEOUT). Zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// Trace, if not nil, receives one line for every cache decision.
	// Writes to it are serialized.
	Trace io.Writer
	// Logger, if not nil, receives the cache's warnings, one for each
	// event: a write that shows the disk unusable (full, read-only) and
	// turns the cache off, and a root removed or replaced while the cache
	// runs, with what the cache did about it. Open's errors are returned,
	// not logged.
	Logger *slog.Logger
	// Remote, if not nil, is the shared tier beneath the cache: a local
	// miss asks it, and what is built or stored is published to it.
	Remote Remote
}

// DefaultConfig returns the default configuration with the given root
// directory: persistent, 8 GiB maximum, 7 days maximum age, binaries up to
// 1 GiB.
func DefaultConfig(dir string) Config {
	return Config{
		Dir:          dir,
		Persistent:   true,
		MaxSize:      DefaultMaxSize,
		MaxAge:       DefaultMaxAge,
		MaxImageSize: DefaultMaxImageSize,
		LockTimeout:  DefaultLockTimeout,
	}
}
