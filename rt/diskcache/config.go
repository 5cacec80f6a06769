package diskcache

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dgen-go/dgen/internal/envconf"
)

// Default values of the configuration.
const (
	DefaultMaxSize       = 8 << 30 // 8 GiB
	DefaultMaxAge        = 7 * 24 * time.Hour
	DefaultMaxImageSize  = 1 << 30 // 1 GiB
	DefaultBuildWait     = 2 * time.Minute
	defaultSubdirectory  = "dgen"
	environmentVarPrefix = "DGEN_CACHE_"
)

// Config configures a persistent cache. The zero Config is a disabled cache;
// DefaultConfig and ConfigFromEnv return usable ones.
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
	// BuildWait is how long GetOrBuild, and Get, wait for another process
	// that holds the key (building or writing it) before they go on
	// without it (DGEN_CACHE_LOCK_TIMEOUT). Zero means DefaultBuildWait.
	BuildWait time.Duration
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
		BuildWait:    DefaultBuildWait,
	}
}

// ConfigFromEnv returns the configuration described by the environment, as
// read through getenv (os.Getenv in a program, a map lookup in a test):
//
//	DGEN_CACHE_DIR               cache root (default: the user cache directory + "/dgen")
//	DGEN_CACHE_PERSISTENT        1/0, true/false, on/off (default on)
//	DGEN_CACHE_MAX_SIZE          bytes, with an optional K, M, G or T suffix
//	                             (powers of 1024; default 8G; 0 turns size eviction off)
//	DGEN_CACHE_THRESHOLD_DAYS    days without access before eviction (default 7; 0 = off)
//	DGEN_CACHE_EVICTION_DISABLE  any value but 0/false/off/no turns eviction off
//	DGEN_CACHE_MIN_IMAGE_SIZE    bytes, suffixes as above (default 0)
//	DGEN_CACHE_MAX_IMAGE_SIZE    bytes, suffixes as above (default 1G; 0 = no limit)
//	DGEN_CACHE_TRACE             1/true/stderr or stdout logs every cache decision
//	                             (default off)
//	DGEN_CACHE_LOCK_TIMEOUT      how long to wait for a key that another process holds,
//	                             a Go duration such as 30s (default 2m); the trace says
//	                             when a wait expires
//
// A malformed value is an error that names the variable and the value; the
// other fields still hold their defaults or parsed values.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := DefaultConfig("")
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	e := &envReader{getenv: getenv}
	cfg.Dir = e.dir()
	e.boolean("PERSISTENT", &cfg.Persistent)
	e.size("MAX_SIZE", &cfg.MaxSize)
	e.days("THRESHOLD_DAYS", &cfg.MaxAge)
	if _, v := e.get("EVICTION_DISABLE"); v != "" {
		b, ok := envconf.Bool(v)
		cfg.EvictionDisabled = !ok || b
	}
	e.size("MIN_IMAGE_SIZE", &cfg.MinImageSize)
	e.size("MAX_IMAGE_SIZE", &cfg.MaxImageSize)
	e.duration("LOCK_TIMEOUT", &cfg.BuildWait)
	e.trace("TRACE", &cfg.Trace)
	return cfg, errors.Join(e.errs...)
}

// envReader reads the DGEN_CACHE_ variables, collecting every malformed
// value as an error that names the variable.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (e *envReader) get(name string) (string, string) {
	name = environmentVarPrefix + name
	return name, strings.TrimSpace(e.getenv(name))
}

func (e *envReader) bad(name, val, why string) {
	e.errs = append(e.errs, fmt.Errorf("diskcache: %s=%q: %s: %w", name, val, why, ErrConfig))
}

// dir returns the cache root: DGEN_CACHE_DIR made absolute, else the user
// cache directory's subdirectory, else "".
func (e *envReader) dir() string {
	name, v := e.get("DIR")
	if v == "" {
		if base := userCacheDir(e.getenv); base != "" {
			return filepath.Join(base, defaultSubdirectory)
		}
		return ""
	}
	if filepath.IsAbs(v) {
		return v
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		e.bad(name, v, err.Error())
		return v
	}
	return abs
}

func (e *envReader) boolean(suffix string, dst *bool) {
	if name, v := e.get(suffix); v != "" {
		if b, ok := envconf.Bool(v); ok {
			*dst = b
		} else {
			e.bad(name, v, "want 1 or 0")
		}
	}
}

func (e *envReader) size(suffix string, dst *int64) {
	if name, v := e.get(suffix); v != "" {
		if n, err := envconf.Size(v); err == nil {
			*dst = n
		} else {
			e.bad(name, v, err.Error())
		}
	}
}

func (e *envReader) duration(suffix string, dst *time.Duration) {
	if name, v := e.get(suffix); v != "" {
		if d, err := envconf.Duration(v); err == nil {
			*dst = d
		} else {
			e.bad(name, v, err.Error())
		}
	}
}

func (e *envReader) days(suffix string, dst *time.Duration) {
	name, v := e.get(suffix)
	if v == "" {
		return
	}
	n, err := strconv.ParseInt(v, 10, 32)
	switch {
	case err != nil:
		e.bad(name, v, "want a number of days, 0 or more")
	case n > 100*365 || n < -100*365:
		e.bad(name, v, "more than 100 years")
	default:
		*dst = time.Duration(n) * 24 * time.Hour
	}
}

func (e *envReader) trace(suffix string, dst *io.Writer) {
	name, v := e.get(suffix)
	switch strings.ToLower(v) {
	case "":
	case "stdout":
		*dst = os.Stdout
	case "stderr":
		*dst = os.Stderr
	default:
		if b, ok := envconf.Bool(v); !ok {
			e.bad(name, v, "want 1, 0, stderr or stdout")
		} else if b {
			*dst = os.Stderr
		}
	}
}

// userCacheDir mirrors os.UserCacheDir but reads the environment through
// getenv. It returns "" when no directory can be determined.
func userCacheDir(getenv func(string) string) string {
	switch runtime.GOOS {
	case "windows":
		return getenv("LocalAppData")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Caches")
		}
		return ""
	case "plan9":
		if h := getenv("home"); h != "" {
			return filepath.Join(h, "lib", "cache")
		}
		return ""
	}
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache")
	}
	return ""
}
